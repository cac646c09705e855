"""Backends (L4b: they import `core` and `prims` only): each turns transformed IR into module
source and loads it. A backend is a package exposing ``emit_module``, ``emit_kernel``,
``entry_name``, ``load``, ``batch_loop`` and ``compile_plain`` (writing and loading modules;
a compiled loop around a compiled entry and a user's plain function compiled, for
`jitgrad.vmap`) and ``compiles``, ``freeze``,
``thaw``, ``is_cache_damage``, ``drop_disk_cache``, ``missing_dependency`` and
``is_compile_error`` (what a call needs to know about compiled entries and their failures),
``prepare_parallel`` (called when a parallel gradient is made, before any launch), and
``warm`` (compile what generated code calls, ahead of a first gradient: once per machine),
registered by one line in `jitgrad.pipeline.BACKENDS` (`backend/numba` is the model)."""
