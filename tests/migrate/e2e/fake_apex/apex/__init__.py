"""TEST-ONLY stand-in for the deleted ``apex`` package (see ../README.md).

``apex.amp`` is the shim module itself, registered under both names so that ``from apex import
amp``, ``import apex.amp`` and ``import apex`` then ``apex.amp.x`` all work; ``import apex.amp._amp_state`` (DLE-GNMT) is the
shim's own state module likewise.
"""

import sys

from apexcompat import amp
from apexcompat.amp import _amp_state

sys.modules[__name__ + ".amp"] = amp
sys.modules[__name__ + ".amp._amp_state"] = _amp_state

__all__ = ["amp"]
