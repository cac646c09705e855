"""IR to IR (L4a; imports core, prims, lang, frontend; never the backend): reverse mode
(`reverse`, with `saving` and the loop strategies `recompute` and `checkpoint`, which plan each
loop in `core.ir.LoopPlan`), the user's rules (`custom_rule`), forward mode (`forward`), the
optimiser (`optimise`) and the parallel rewrite (`parallel`)."""
