"""The clipping functions of ``torch.nn.utils``, by qualified name: their gradients must be
unscaled, and where they run (inside an ``amp.scale_loss`` block, on every micro-step)
decides whether a native rewrite clips what apex clipped."""

from __future__ import annotations

#: the clipping functions of torch.nn.utils (their gradients must be unscaled)
CLIP_FUNCTIONS = frozenset(
    f"{module}.{name}"
    for module in ("torch.nn.utils", "torch.nn.utils.clip_grad")
    for name in ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm")
)
#: the clips whose threshold scales with the gradients (norm and value clipping)
SCALABLE_CLIPS = frozenset(
    f"{module}.{name}"
    for module in ("torch.nn.utils", "torch.nn.utils.clip_grad")
    for name in ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_")
)
