"""TEST-ONLY stand-in for the deleted ``apex`` package (see ../README.md).

``apex.amp`` is the shim module itself, registered under both names so that ``from apex import
amp``, ``import apex.amp`` and ``import apex`` then ``apex.amp.x`` all work; ``import apex.amp._amp_state`` (DLE-GNMT) and
``from apex.amp._amp_state import _amp_state`` (mmgeneration) find the shim's own state module, as
apex's did (its ``apex.amp._amp_state`` attribute is the state object, its module of that name holds it).
"""

import sys

from apexcompat import amp

sys.modules[__name__ + ".amp"] = amp
sys.modules[__name__ + ".amp._amp_state"] = sys.modules["apexcompat.amp._amp_state"]

__all__ = ["amp"]
