"""Settings from ``[tool.apexcompat-migrate]`` in the nearest ``pyproject.toml`` (or the file
named by ``--config``); the command line's own flags win over them.

Keys: ``target`` (``native``/``shim``), ``target-torch`` (``"2.4"``, a string), ``select``,
``ignore``, ``exclude`` (lists of strings), ``dtype`` (``float16``/``bfloat16``).  Unknown
keys and bad values are usage errors.  ``pyproject.toml`` files that do not mention the
table are never parsed, so the search costs one small read per folder.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from .settings import TARGETS

TABLE = "apexcompat-migrate"
DTYPES = ("float16", "bfloat16")
KEYS = ("target", "target-torch", "select", "ignore", "exclude", "dtype")


class ConfigError(Exception):
    """A configuration file that cannot be used (reported as a usage error, exit status 2)."""


@dataclass
class FileConfig:
    """The values a configuration file sets (``None`` / empty: not set) and where it is."""

    path: Optional[str] = None
    target: Optional[str] = None
    target_torch: Optional[str] = None
    select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    dtype: Optional[str] = None


def _load_toml(path: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.9/3.10 only
        try:
            import tomli as tomllib
        except ImportError as exc:
            raise ConfigError(f"{path}: reading TOML on Python < 3.11 needs tomli (pip install tomli)") from exc
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc


def _strings(path: str, key: str, value: Any) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{path}: {key} must be a list of strings, not {value!r}")


def _parse(path: str, table: Dict[str, Any]) -> FileConfig:
    config = FileConfig(path=path)
    for key, value in table.items():
        if key not in KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.{TABLE}]{hint}; known keys: {', '.join(KEYS)}")
        if key == "target":
            if value not in TARGETS:
                raise ConfigError(f"{path}: target must be one of {', '.join(TARGETS)}, not {value!r}")
            config.target = value
        elif key == "target-torch":
            if not isinstance(value, str):  # 2.10 as a TOML float would read as 2.1
                raise ConfigError(f'{path}: target-torch must be a string such as "2.4", not {value!r}')
            config.target_torch = value
        elif key == "dtype":
            if value not in DTYPES:
                raise ConfigError(f"{path}: dtype must be one of {', '.join(DTYPES)}, not {value!r}")
            config.dtype = value
        else:
            setattr(config, key, _strings(path, key, value))
    return config


def read_config(path: str) -> FileConfig:
    """The settings in ``path``: its ``[tool.apexcompat-migrate]`` table, or the whole file
    when it has no such table and is not a ``pyproject.toml`` (a file of its own)."""
    document = _load_toml(path)
    table = document.get("tool", {}).get(TABLE) if isinstance(document.get("tool"), dict) else None
    if table is None:
        if os.path.basename(path) == "pyproject.toml":
            raise ConfigError(f"{path} has no [tool.{TABLE}] table")
        table = document
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] must be a table")
    return _parse(path, table)


def _mentions_table(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return TABLE.encode() in fh.read()
    except OSError:
        return False


def find_config(paths: Sequence[str], cwd: Optional[str] = None) -> Optional[str]:
    """The nearest ``pyproject.toml`` with a ``[tool.apexcompat-migrate]`` table, searching up
    from the folder that holds every path given (the current folder for stdin)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    folders = [
        os.path.abspath(os.path.join(cwd, p)) if os.path.isdir(os.path.join(cwd, p)) else os.path.dirname(
            os.path.abspath(os.path.join(cwd, p))
        )
        for p in paths
        if p != "-"
    ]
    current = os.path.commonpath(folders) if folders else cwd
    while True:
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate) and _mentions_table(candidate):
            document = _load_toml(candidate)
            tool = document.get("tool")
            if isinstance(tool, dict) and TABLE in tool:
                return candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def load(paths: Sequence[str], config_file: Optional[str] = None, cwd: Optional[str] = None) -> FileConfig:
    """The configuration for a run: ``config_file`` when given, else the nearest one found,
    else nothing set."""
    if config_file is not None:
        if not os.path.isfile(config_file):
            raise ConfigError(f"--config: no such file: {config_file}")
        return read_config(config_file)
    found = find_config(paths, cwd)
    return read_config(found) if found is not None else FileConfig()
