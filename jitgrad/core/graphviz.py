"""IR → Graphviz DOT text (and SVG/PNG through the ``dot`` program when it is installed).

Takes a forward `ir.Function` (and optionally the adjoint `reverse.Kernel`); guarantees one node
per parameter and per equation, labelled with its operation and type, one edge per use of a
value, loops and branches drawn as clusters, the adjoint's equations in red. Deterministic: the
same IR gives the same text.
"""

from __future__ import annotations

import shutil
import subprocess

from jitgrad.core.errors import JitgradError, MissingDependencyError
from jitgrad.core.ir import Block, Eqn, For, If, Repeat, Var, While


class _Dot:
    def __init__(self):
        self.lines: list[str] = []
        self.node_of: dict[Var, str] = {}  # var -> node that defines it
        self.count = 0

    def node(self, label: str, **attrs) -> str:
        name = f"n{self.count}"
        self.count += 1
        attrs = {"label": label, **attrs}
        text = ", ".join(f'{k}="{v}"' for k, v in attrs.items())
        self.lines.append(f"  {name} [{text}];")
        return name

    def edge(self, a, target: str, color: str = "black"):
        if isinstance(a, Var) and a in self.node_of:
            self.lines.append(f'  {self.node_of[a]} -> {target} [color="{color}"];')

    def block(self, b: Block, color: str, title: str | None = None):
        if title is not None:
            self.lines.append(f"  subgraph cluster_{self.count} {{")
            self.lines.append(f'  label="{title}"; color="{color}";')
            self.count += 1
        for s in b.stmts:
            if isinstance(s, Eqn):
                types = ", ".join(str(o.type) for o in s.outs)
                name = self.node(f"{s.prim}\\n{types}" if types else s.prim, shape="box",
                                 color=color)
                for a in s.ins:
                    self.edge(a, name, color)
                for o in s.outs:
                    self.node_of[o] = name
            elif isinstance(s, If):
                self.block(s.then, color, "if (then)")
                self.block(s.orelse, color, "else")
                for m in s.merges:
                    name = self.node(f"merge {m.var.name}\\n{m.var.type}", shape="diamond",
                                     color=color)
                    self.edge(m.init, name, color)
                    self.edge(m.update, name, color)
                    self.node_of[m.var] = name
            elif isinstance(s, (For, While)):
                for c in s.carries:
                    name = self.node(f"carry {c.var.name}\\n{c.var.type}", shape="diamond",
                                     color=color)
                    self.edge(c.init, name, color)
                    self.node_of[c.var] = name
                kind = "for" if isinstance(s, For) else "while"
                if isinstance(s, While):
                    self.block(s.cond_block, color, "while condition")
                self.block(s.body, color, f"{kind} loop")
                for c in s.carries:
                    self.edge(c.update, self.node_of[c.var], color)
            elif isinstance(s, Repeat):
                self.block(s.body, color, "loop, backwards")
        if title is not None:
            self.lines.append("  }")


def to_dot(fn, adjoint=None) -> str:
    """DOT text of the forward graph; with ``adjoint``, its equations too, in red."""
    d = _Dot()
    d.lines.append(f'digraph "{fn.name}" {{')
    d.lines.append("  rankdir=TB; node [fontname=monospace, fontsize=10];")
    for p in fn.params:
        d.node_of[p] = d.node(f"{p.name}\\n{p.type}", shape="ellipse", style="filled",
                                  fillcolor="lightblue")
    d.block(fn.body, "black")
    result = d.node("value", shape="doubleoctagon")
    d.edge(fn.result, result)
    if adjoint is not None:
        d.block(adjoint.body, "red", "adjoint")
    d.lines.append("}")
    return "\n".join(d.lines) + "\n"


def render(dot_text: str, path: str) -> str:
    """Write ``dot_text`` rendered by Graphviz to ``path`` (format from its suffix). Raises
    `MissingDependencyError` when the ``dot`` program is not installed, `JitgradError` with
    dot's own message when it fails (an unknown format, a folder that does not exist)."""
    exe = shutil.which("dot")
    if exe is None:
        raise MissingDependencyError("the Graphviz `dot` program is not installed, and it draws "
                                     "the SVG/PNG (Debian/Ubuntu: apt-get install graphviz; "
                                     "macOS: brew install graphviz); without -o, the DOT text "
                                     "needs nothing")
    fmt = path.rsplit(".", 1)[-1] if "." in path else "svg"
    done = subprocess.run([exe, f"-T{fmt}", "-o", path], input=dot_text.encode(),
                          capture_output=True, check=False)
    if done.returncode != 0:
        raise JitgradError(f"Graphviz could not write {path}: "
                           f"{done.stderr.decode(errors='replace').strip()}")
    return path
