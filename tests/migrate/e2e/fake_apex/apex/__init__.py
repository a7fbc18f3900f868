"""TEST-ONLY stand-in for the deleted ``apex`` package (see ../README.md).

``apex.amp`` is the shim module itself, registered under both names so that ``from apex import
amp``, ``import apex.amp`` and ``import apex`` then ``apex.amp.x`` all work; ``import apex.amp._amp_state`` (DLE-GNMT) and
``from apex.amp._amp_state import _amp_state`` (mmgeneration) find the shim's own state module, as
apex's did (its ``apex.amp._amp_state`` attribute is the state object, its module of that name holds it).
``apex.amp.__version__`` is a module holding ``VERSION`` and ``__version__``, as apex's
``apex/amp/__version__.py`` did (CuLE prints it); it is set on the shim module of this test process
only (the shim itself has no version module).
"""

import sys
import types

from apexcompat import amp

_version = types.ModuleType(__name__ + ".amp.__version__")
_version.VERSION = (0, 1, 0)
_version.__version__ = "0.1.0"
amp.__version__ = _version
sys.modules[_version.__name__] = _version

sys.modules[__name__ + ".amp"] = amp
sys.modules[__name__ + ".amp._amp_state"] = sys.modules["apexcompat.amp._amp_state"]

__all__ = ["amp"]
