"""Tools on top of the public API (L7): the command line (`cli`, ``python -m jitgrad``) and
the demo (`demo`)."""
