"""RNN casting under O1: nothing to do here.

apex O1 cast the weights of ``nn.RNN``/``nn.GRU``/``nn.LSTM`` (and the four cell modules) to
fp16 through a synthesized flat weight buffer, and kept helpers for that in this module.
apexcompat runs O1 under ``torch.autocast``, which casts the RNN ops itself (on CUDA the
cuDNN RNN and the cell ops are on its fp16 list), so no RNN-specific code is needed; the
module exists because ``apex.amp.rnn_compat`` was a visible submodule.
"""

from __future__ import annotations

__all__: list = []
