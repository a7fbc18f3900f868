"""TEST-ONLY stand-in for the deleted ``apex`` package (see ../README.md).

``apex.amp`` is the shim module itself, registered under both names so that ``from apex import
amp``, ``import apex.amp`` and ``import apex`` then ``apex.amp.x`` all work.
"""

import sys

from apexcompat import amp

sys.modules[__name__ + ".amp"] = amp

__all__ = ["amp"]
