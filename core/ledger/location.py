"""Where the ledger lives: one default for the app and the command line (docs/audit.md §8.4).

Resolution, first match wins:

1. an explicit location (the command line's ``--ledger PATH`` or ``ledger PATH``, the app's
   own setting);
2. the environment variable :data:`LEDGER_ENV` (``BNP_SYNTH_LEDGER``);
3. the ``[ledger] location`` key of the configuration file: ``$BNP_SYNTH_CONFIG``, else
   ``$XDG_CONFIG_HOME/bnp-synth/config.toml`` (``~/.config/bnp-synth/config.toml``), or the
   mapping the caller passes (the app's ``[ledger]`` secrets section);
4. :func:`default_path`: ``$XDG_DATA_HOME/bnp-synth/ledger.sqlite``
   (``~/.local/share/bnp-synth/ledger.sqlite``).

A location is a file path (an SQLite database, created on first use) or an SQLAlchemy URL
(``postgresql+psycopg://user@host/dbname`` for a team's server; ``sqlite:///path``).
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Mapping

from sqlalchemy.engine import make_url

__all__ = ["CONFIG_ENV", "DEFAULT_WORD", "LEDGER_ENV", "config_path", "default_path", "display_location",
           "resolve_location", "to_url"]

#: The environment variable that names the ledger (a path or an SQLAlchemy URL).
LEDGER_ENV = "BNP_SYNTH_LEDGER"
#: The environment variable that names the configuration file.
CONFIG_ENV = "BNP_SYNTH_CONFIG"
#: The word that asks for the default ledger on the command line (``ledger default show``).
DEFAULT_WORD = "default"


def default_path() -> Path:
    """``$XDG_DATA_HOME/bnp-synth/ledger.sqlite`` (``~/.local/share/bnp-synth/ledger.sqlite``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "bnp-synth" / "ledger.sqlite"


def config_path() -> Path:
    """The configuration file: ``$BNP_SYNTH_CONFIG``, else ``$XDG_CONFIG_HOME/bnp-synth/config.toml``."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "bnp-synth" / "config.toml"


def _configured(config: Mapping | None) -> str | None:
    if config is None:
        path = config_path()
        if not path.is_file():
            return None
        try:
            config = tomllib.loads(path.read_text(encoding="utf-8")).get("ledger", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"the configuration file {str(path)!r} cannot be read: {exc}") from None
    value = config.get("location") if isinstance(config, Mapping) else None
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"[ledger] location must be a path or an SQLAlchemy URL, got {value!r}")
    return value


def resolve_location(explicit: str | os.PathLike | None = None, *, config: Mapping | None = None) -> str:
    """The ledger's location (a path or an SQLAlchemy URL) by the rules of this module.

    Parameters
    ----------
    explicit : str or path, optional
        Given by the user; :data:`DEFAULT_WORD` or ``None`` asks for the default.
    config : mapping, optional
        The ``[ledger]`` section of the caller's own configuration (the app's); without it the
        configuration file is read.
    """
    if explicit is not None and str(explicit) != DEFAULT_WORD:
        return str(explicit)
    if os.environ.get(LEDGER_ENV):
        return os.environ[LEDGER_ENV]
    return _configured(config) or str(default_path())


def to_url(location: str | os.PathLike) -> str:
    """An SQLAlchemy URL for a location: a URL as given, a path as ``sqlite:///<absolute path>``."""
    text = str(location)
    if "://" in text:
        make_url(text)   # raises on a malformed URL
        return text
    if not text.strip():
        raise ValueError("the ledger location must be a file path or an SQLAlchemy URL, got an empty string")
    return "sqlite:///" + str(Path(text).expanduser().resolve())


def display_location(location: str | os.PathLike) -> str:
    """The location to print: a URL's password hidden."""
    text = str(location)
    return make_url(text).render_as_string(hide_password=True) if "://" in text else text
