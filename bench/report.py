"""Turning ``run.CaseResult``s into the benchmark report: markdown, JSON and a PNG chart.

* ``environment(command, threads, peer_versions, tape)`` -- the header facts: date, machine
  (nproc, CPU model from /proc/cpuinfo, load average), versions (Python, NumPy, Numba,
  jitgrad with its git commit, jitgrad.tape, peers, matplotlib), thread settings, and the
  exact command. Returns a dict.
* ``markdown(env, results, settings)`` -- the report as markdown text: header, a summary
  table of time ratios (tool median / jitgrad median, same run), then one table per case.
* ``write(out_dir, env, results, settings, text)`` -- writes ``<stamp>.json`` /
  ``<stamp>.md`` and ``latest.json`` / ``latest.md`` into ``out_dir`` (and ``<stamp>.png`` /
  ``latest.png`` if matplotlib imports; silently skipped if not). Returns the paths written.

JSON layout: ``{"environment": ..., "settings": ..., "cases": [CaseResult as dict]}``;
times in seconds, memory in bytes.
"""

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

from bench import oracle

TOOL_ORDER = ("jitgrad", "jitgrad entry", "jitgrad.tape", "hand-written Numba", "Numba primal", "NumPy primal",
              "Python primal", "autograd", "torch", "jax")


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git(*args):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = shutil.which("git")
    if git is None:
        return None
    proc = subprocess.run([git, *args], cwd=root, capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _version(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _blas_info():
    """The BLAS libraries loaded in this process and the kernels they run, from threadpoolctl
    (optional, bench-only: without it, a string saying so). Numba's ``@`` and ``np.dot`` call
    SciPy's BLAS (``scipy.linalg.cython_blas``, loaded here first), NumPy's ``@`` its own; the
    two may differ in version and in the kernel OpenBLAS picks (``architecture``: the CPU it
    detected, or OPENBLAS_CORETYPE). XLA's and PyTorch's own kernels are not listed unless they
    load a library threadpoolctl knows."""
    try:
        import scipy.linalg.cython_blas  # noqa: F401 - what Numba's @ calls
        from threadpoolctl import threadpool_info
    except ImportError as e:
        return f"not recorded ({e})"
    out = []
    for d in threadpool_info():
        path = d.get("filepath") or ""
        parts = os.path.dirname(path).split(os.sep)
        folder = parts[-1] if parts[-1] != "lib" or len(parts) < 2 else parts[-2]  # torch/lib
        owner = ("SciPy (Numba's @)" if "scipy" in folder else
                 "NumPy" if "numpy" in folder else
                 folder or "unknown")
        out.append({"owner": owner, "file": os.path.basename(path),
                    **{k: d.get(k) for k in ("user_api", "internal_api", "version",
                                              "architecture", "threading_layer",
                                              "num_threads")}})
    return out


def environment(command, threads, peer_versions, tape, helper_cache, numba_init):
    """Header facts; see the module doc."""
    import numba
    import numpy

    import jitgrad

    commit = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--", "jitgrad"))
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": command,
        "cwd": os.getcwd(),
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu_model": _cpu_model(),
        "load_average_at_start": load,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "jitgrad": jitgrad.__version__,
        "jitgrad_git": None if commit is None else commit + (" + uncommitted changes in "
                                                             "jitgrad/" if dirty else ""),
        "jitgrad_tape": tape,
        "peers": peer_versions,
        "matplotlib": _version("matplotlib"),
        "threads": threads,
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
                                                "OPENBLAS_L2_SIZE", "XLA_FLAGS",
                                                "NUMBA_CACHE_DIR")},
        "helper_cache_at_start": helper_cache,
        "numba_init_first_call": numba_init,
        "blas": _blas_info(),
    }


# --------------------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------------------


def fmt_time(s):
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{s * 1e9:.0f} ns"


def fmt_bytes(b):
    if b is None:
        return "—"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b} B"


def fmt_ratio(x):
    if x is None:
        return "—"
    return f"{x:.3g}×" if x < 1000 else f"{x:.0f}×"


def _table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _blas_text(env):
    blas = env.get("blas")
    if blas is None or isinstance(blas, str):
        text = blas or "not recorded"
    else:
        text = "; ".join(
            f"{b['owner']}: {b['internal_api']} {b['version']} ({b['file']}), kernel "
            f"{b['architecture']}, {b['num_threads']} thread(s)" if b["user_api"] == "blas"
            else f"{b['owner']}: {b['user_api']} ({b['file']}), {b['num_threads']} thread(s)"
            for b in blas) or "none found by threadpoolctl"
    unset = [k for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if not env["env"].get(k)]
    return text + (f"; {' and '.join(unset)} unset" if unset else "")


def _header_lines(env, settings):
    peers = env["peers"]
    peer_text = ", ".join(f"{k} {v}" if v else f"{k} not installed" for k, v in peers.items())
    if settings.get("no_peers"):
        peer_text = "not run (--no-peers)"
    tape = env["jitgrad_tape"]
    threads = env["threads"]
    thread_text = ("kept from the environment" if threads == "env" else
                   f"{threads}: OPENBLAS_NUM_THREADS={threads}, NUMBA_NUM_THREADS={threads}"
                   + (" (jitgrad with parallel=True, Numba threading layer "
                      f"{os.environ.get('NUMBA_THREADING_LAYER', 'default')})"
                      if threads != "1" else "")
                   + f", torch.set_num_threads({threads}), XLA intra-op threads {threads}; "
                   "per tool: the threads column")
    extra_env = ", ".join(f"{k}={v}" for k, v in env["env"].items()
                          if v and k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                         "NUMBA_CACHE_DIR"))
    load = env["load_average_at_start"]
    helper = env["helper_cache_at_start"]
    lines = [
        f"- command: `{env['command']}` (in `{env['cwd']}`)",
        f"- date: {env['date']}",
        f"- machine: {env['nproc']} cores (nproc), {env['cpu_model']}"
        + (f"; load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
           if load else ""),
        f"- versions: Python {env['python']}, NumPy {env['numpy']}, Numba {env['numba']}, "
        f"jitgrad {env['jitgrad']}"
        + (f" (git {env['jitgrad_git']})" if env["jitgrad_git"] else ""),
        f"- jitgrad.tape: {'available' if tape == 'available' else 'not run: ' + str(tape)}",
        f"- peers: {peer_text}; matplotlib {env['matplotlib'] or 'not installed'}",
        f"- threads: {thread_text}"
        + (f"; from the environment: {extra_env}" if extra_env else ""),
        f"- BLAS: {_blas_text(env)}",
        (
            f"- timing: `bench.timing.measure`, {settings['rounds']} interleaved rounds of "
            f"blocks of ~{fmt_time(settings['target_block'])} after warm-up, each block after "
            "one untimed settling call; median per call, IQR = q3 - q1; ×jitgrad = median / "
            "jitgrad's median in the same run. Interpreted tools slower than 0.1 s per call "
            "are timed alone, one call per round (3-9 rounds); budget "
            f"{settings['budget']:g} s per such tool per case (estimated from a scaled-down "
            "probe and enforced by a deadline; over budget = skipped)"
        ),
        (
            "- verification: jitgrad's gradient first against references that are not "
            "jitgrad (`bench.oracle`): central differences of the Numba primal on sampled "
            "entries of every argument, per entry, and for the ADBench GMM the vectorised "
            "JAX / autograd versions where installed; then every tool's gradient against "
            f"jitgrad's, max |diff| / max |ref| per argument ≤ {settings['tol']:g} (primals "
            "against the Numba primal); a mismatch is excluded from timing"
        ),
        (
            "- memory: `bench.timing.peak_memory` of one warm call (tracemalloc: Python, "
            "NumPy and Numba NRT allocations; torch's and XLA's allocators are invisible to "
            "it: n/t = not traced); ÷ primal = peak / the Numba primal's peak (— when the "
            "primal allocates < 4 kB)"
        ),
    ]
    if settings["fresh_process"]:
        h = helper or {}
        state = ("warm" if h.get("index_files") else "cold (empty)")
        lines.append(
            "- first call (fresh process): `python -m bench --first-call-child`, imports "
            "and data before the clock, median of "
            f"{settings['compile_reps']}; jitgrad's includes `jitgrad.grad(...)` and an "
            "empty JITGRAD_CACHE_DIR, its warm-cache first call a second process on the "
            "cache the first left. Numba's first compilation in a process costs "
            f"{fmt_time(env['numba_init_first_call'])} (trivial njit function), included. "
            "Numba's cache of jitgrad's runtime helpers (in the installed package's "
            f"`__pycache__`, not JITGRAD_CACHE_DIR) was {state} at start "
            f"({h.get('index_files', 0)} index files); a fresh-process value marked * "
            "includes compiling (some of) those helpers")
    else:
        lines.append("- first call: in-process only (fresh-process compile measurement "
                     "skipped: --quick or --no-compile); jitgrad's uses an empty "
                     "JITGRAD_CACHE_DIR but Numba is already initialised")
    return lines


def _summary(results):
    present = [t for t in TOOL_ORDER if any(r["tool"] == t for c in results for r in c.tools)]
    rows = []
    for c in results:
        by = {r["tool"]: r for r in c.tools}
        ref = by.get(c.reference) if c.reference else None
        ref_time = fmt_time(ref["median"]) if ref else "—"
        if ref and c.reference != "jitgrad":
            ref_time += f" ({c.reference}: jitgrad failed or was wrong)"
        row = [f"{c.case}", ref_time]
        for t in present:
            r = by.get(t)
            if r is None:
                row.append("")
            elif r["status"] != "ok":
                row.append(r["status"].upper() if r["status"] != "skipped" else "skipped")
            else:
                row.append(fmt_ratio(r["ratio"]))
        rows.append(row)
    return _table(["case", "reference median", *present], rows)


def _case_table(c):
    rows = []
    for r in c.tools:
        fresh = fmt_time(r["first_call_fresh"])
        if r["fresh_runs"] and any(x.get("helpers_compiled") for x in r["fresh_runs"]["cold"]):
            fresh += " *"
        notes = [r["style"]] if r["style"] else []
        if r["status"] != "ok":
            notes.append(f"**{r['status'].upper()}**")
        if r["error"]:
            err = r["error"].replace("|", "/")
            notes.append(err if len(err) <= 160 else err[:157] + "...")
        if r["note"]:
            notes.append(r["note"])
        if r["interleaved"] is False:
            notes.append(f"timed alone, {r['rounds']} rounds")
        iqr = None if r["median"] is None else r["q3"] - r["q1"]
        rows.append([
            r["tool"], r.get("threads", ""), fmt_time(r["median"]), fmt_time(iqr), fmt_ratio(r["ratio"]),
            fresh, fmt_time(r["first_call_warm_cache"]), fmt_time(r["first_call_inproc"]),
            "n/t" if r["status"] == "ok" and r["peak_bytes"] is None else
            fmt_bytes(r["peak_bytes"]), fmt_ratio(r["mem_ratio"]),
            "ref" if r["tool"] == c.reference else
            "—" if r["rel_err"] is None else f"{r['rel_err']:.1e}",
            "; ".join(notes),
        ])
    header = ["tool", "threads", "median", "IQR", "×jitgrad", "first call (fresh process)",
              "warm-cache first call", "first call (in-process)", "peak mem", "÷ primal",
              "rel err", "notes"]
    return _table(header, rows)


def markdown(env, results, settings):
    """The whole report as markdown; see the module doc."""
    out = ["# jitgrad benchmark", "", *_header_lines(env, settings), ""]
    problems = [(c.case, n) for c in results for n in c.notes]
    problems += [(c.case, f"{r['tool']} {r['status']}: {r['error']}") for c in results
                 for r in c.tools if r["status"] == "failed"]
    if problems:
        out += ["## Problems", ""]
        out += [f"- **{case}**: {msg}" for case, msg in problems]
        out.append("")
    out += ["## Time relative to jitgrad (median ÷ jitgrad's median, same run)", "",
            _summary(results), ""]
    for c in results:
        wrt = ", ".join(str(w) for w in c.wrt)
        out += [(f"## {c.case} — sizes {tuple(c.sizes)}, gradient w.r.t. arguments {wrt}, "
                f"inputs {fmt_bytes(c.input_bytes)}"), ""]
        if c.reference not in (None, "jitgrad"):
            out += [(f"Reference (verification and ratios): **{c.reference}** (jitgrad "
                    "failed, or was wrong against an independent reference)."), ""]
        for tool, checks in c.independent.items():
            out += [(f"{tool}'s gradient against references that are not jitgrad: "
                     f"{oracle.summary(checks)}."), ""]
        out += [_case_table(c), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------


def _chart(path, results):
    try:
        import matplotlib as mpl

        mpl.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    def series(name):  # NumPy primal (two_layer) and Python primal share one bar colour
        return "NumPy/Python primal" if name in ("NumPy primal", "Python primal") else name

    ratios = {}  # (series, case index) -> ratio
    for i, c in enumerate(results):
        for r in c.tools:
            if r["ratio"] and r["tool"] != c.reference:
                ratios[series(r["tool"]), i] = r["ratio"]
    names = list(dict.fromkeys(series(t) for t in TOOL_ORDER))
    tools = [t for t in names if any(key[0] == t for key in ratios)]
    if not tools:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(results)), 5))
    width = 0.8 / len(tools)
    for k, tool in enumerate(tools):
        xs = [i for i in range(len(results)) if (tool, i) in ratios]
        ax.bar([i + (k - (len(tools) - 1) / 2) * width for i in xs],
               [ratios[tool, i] for i in xs], width, label=tool)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([c.case if c.reference == "jitgrad" else f"{c.case}\n(÷ {c.reference})"
                        for c in results], rotation=20, ha="right")
    ax.set_ylabel("median time ÷ jitgrad median (log)")
    ax.set_title("time relative to jitgrad (below 1: faster than jitgrad)")
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write(out_dir, env, results, settings, text):
    """Write JSON, markdown and (if matplotlib imports) PNG; return the paths written."""
    import dataclasses

    os.makedirs(out_dir, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    doc = {"environment": env, "settings": settings,
           "cases": [dataclasses.asdict(c) for c in results]}
    paths = []
    for name in (stamp, "latest"):
        p = os.path.join(out_dir, f"{name}.json")
        with open(p, "w") as fh:
            json.dump(doc, fh, indent=1, default=str)
        paths.append(p)
        p = os.path.join(out_dir, f"{name}.md")
        with open(p, "w") as fh:
            fh.write(text + "\n")
        paths.append(p)
    png = os.path.join(out_dir, f"{stamp}.png")
    if _chart(png, results):
        shutil.copyfile(png, os.path.join(out_dir, "latest.png"))
        paths += [png, os.path.join(out_dir, "latest.png")]
    return paths
