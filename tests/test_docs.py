"""The documentation's code runs, and the README stays a front page.

Every ```python block of README.md and docs/*.md is executed, as a reader would paste it: a
page's blocks in order, in one namespace, written to a real file (jitgrad reads a function's
source with `inspect`) and run by this Python in a fresh process, compiled as users run it
(JITGRAD_CACHE_DIR and the rest of the environment are inherited). A page that imports an
optional package (Dask, JAX, PyTorch...) is skipped where it is not installed. A block that
must not run is marked by the line ``<!-- docs: no-run -->`` just before its fence; keep those
rare. ```bash, ```text and other blocks are not run.

The README is the front page: at most 250 lines, and neither it nor a docs page carries a
commit hash, a run date or an issue number (those belong in bench/NOTES.md and git log).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
README = os.path.join(ROOT, "README.md")
NO_RUN = "<!-- docs: no-run -->"
# Optional packages a page may import: the page is skipped where one is missing.
OPTIONAL = ("dask", "distributed", "jax", "torch", "autograd", "matplotlib")


def pages() -> list[str]:
    """README.md and every Markdown page under docs/."""
    out = [README]
    for folder, _, files in sorted(os.walk(DOCS)):
        out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return out


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)(.*)$")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The page's runnable ```python blocks: (line number of the fence, code)."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start, body = i, []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence)
                                      and lines[i].strip().strip(fence[0]) == ""):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1  # the closing fence
        marked = start > 0 and lines[start - 1].strip() == NO_RUN
        if lang in ("python", "py") and not marked:
            blocks.append((start + 1, "\n".join(body)))
    return blocks


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def page_script(path: str) -> str:
    """The page's blocks as one script, each after a comment naming its line on the page."""
    blocks = python_blocks(read(path))
    rel = os.path.relpath(path, ROOT)
    return "\n\n".join(f"# --- {rel}, block at line {line}\n{code}" for line, code in blocks)


RUNNABLE = [p for p in pages() if python_blocks(read(p))]


def test_block_extraction():
    text = ("x\n```python\na = 1\n```\n```bash\nls\n```\n" + NO_RUN + "\n```python\nb = 2\n```\n"
            "- item\n\n  ```python\n  c = 3\n  ```\n````python\nd = '''\n```\n'''\n````\n")
    assert [code for _, code in python_blocks(text)] == ["a = 1", "c = 3", "d = '''\n```\n'''"]


@pytest.mark.parametrize("path", RUNNABLE, ids=[os.path.relpath(p, ROOT) for p in RUNNABLE])
def test_page_examples_run(path, tmp_path):
    script = page_script(path)
    for name in OPTIONAL:
        if re.search(rf"^\s*(import|from)\s+{name}\b", script, re.MULTILINE):
            pytest.importorskip(name)
    stem = re.sub(r"\W", "_", os.path.relpath(path, ROOT).removesuffix(".md"))
    file = tmp_path / f"page_{stem}.py"
    file.write_text(script + "\n", encoding="utf-8")
    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "Agg")
    run = subprocess.run([sys.executable, str(file)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert run.returncode == 0, (
        f"{os.path.relpath(path, ROOT)}: its examples failed (the '# ---' comments name each "
        f"block's line on the page)\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}")


# A 7-40 digit hex word with a digit and a letter (a commit), an ISO date, an issue number.
HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
ISSUE = re.compile(r"(?i)\bissues?\s*#\d+|(?<![\w&])#\d+\b")


@pytest.mark.parametrize("path", pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_no_diary(path):
    """No commit hashes, run dates or issue numbers on the front page and the docs pages (the
    conformance table's header is written by tests/conformance_run.py)."""
    text = read(path)
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for pattern in (HASH, DATE, ISSUE) for m in pattern.finditer(text)]
    assert not found, f"{os.path.relpath(path, ROOT)} has diary material: {found}"


def test_readme_is_a_front_page():
    text = read(README)
    assert len(text.splitlines()) <= 250, "README.md is a front page: at most 250 lines"
    # the two commands that .ci/run and new users run, exactly
    assert "pip install -e . && python -m jitgrad demo" in text
    assert 'pip install -e ".[test]" && python -m pytest -q' in text
    # its relative links reach files in the repository
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert os.path.exists(os.path.join(ROOT, target)), f"README links to {target}"
