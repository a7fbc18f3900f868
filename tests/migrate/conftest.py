"""Every migration the tests run also checks the engine's statement-wise parse against a
parse of the whole text (``migrate.reparse``); the variable reaches the CLI's subprocesses."""

from __future__ import annotations

import os

from migrate.reparse import VERIFY_ENV

os.environ.setdefault(VERIFY_ENV, "1")
