"""``python -m migrate`` behaves exactly like ``apexcompat-migrate``."""

import sys

from .cli import main

sys.exit(main())
