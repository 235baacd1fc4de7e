"""``python -m core``: the command line of :mod:`core.cli`."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
