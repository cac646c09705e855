"""Backends (L4b: they import `core` and `prims` only): each turns transformed IR into module
source and loads it. A backend is a package exposing ``emit_module``, ``emit_kernel``,
``entry_name`` and ``load``, registered by one line in `jitgrad.pipeline.BACKENDS`."""
