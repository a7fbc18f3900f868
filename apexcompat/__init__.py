"""apexcompat: apex.amp on native torch.amp.

``from apexcompat import amp`` is a drop-in replacement for ``from apex import amp``.
The companion command ``apexcompat-migrate`` (package ``migrate``) rewrites apex
training code into plain PyTorch.
"""

__version__ = "0.1.0"

from . import amp  # noqa: E402  (public submodule)
from . import doctor  # noqa: E402  (the overflow doctor; not part of apex)
from .run_settings import set_half_dtype, set_opt_level_override  # noqa: E402

__all__ = ["amp", "doctor", "__version__", "set_half_dtype", "set_opt_level_override"]
