"""``apexcompat.amp``: a drop-in replacement for ``apex.amp`` built on ``torch.amp``.

Change ``from apex import amp`` to ``from apexcompat import amp`` and keep the script::

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    ...
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()

The public names and submodule names are apex's (spec §1).
"""

from . import (  # noqa: F401  (submodules apex exposed as attributes)
    _initialize,
    _process_optimizer,
    amp,
    compat,
    frontend,
    handle,
    lists,
    opt,
    rnn_compat,
    scaler,
    utils,
    wrap,
)
from ._amp_state import _amp_state, master_params  # noqa: F401
from .amp import (  # noqa: F401
    disable_casts,
    float_function,
    half_function,
    init,
    promote_function,
    register_float_function,
    register_half_function,
    register_promote_function,
)
from .frontend import initialize, load_state_dict, state_dict  # noqa: F401
from .handle import scale_loss  # noqa: F401
