"""``python -m jitgrad``: the command line (`jitgrad.tools.cli`)."""

from jitgrad.tools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
