"""The frontend (L3; imports core, prims, lang): reads a function's source (`parse`: fenced,
refused with the user's line) and builds its IR for one signature (`build`, from its parts
`build_exprs`, `build_calls`, `build_stmts`, `build_branches`, `build_loops`, `build_views`, `build_ast`, and `custom_call` for a user's
`custom_vjp`)."""
