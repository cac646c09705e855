"""The suite's order: its longest files first.

The suite runs in two worker processes, each taking whole files (``--dist loadfile``: a file's
module-level caches stay in one process), handed out in the order the files are collected. A
long file collected last runs alone at the end while the other worker idles: `test_views`,
near the end of the alphabet, did so for two to three minutes of a 15-minute run. Starting
with the longest files (measured: each takes 3-14 % of the suite's compile time) lets the
short ones fill the gaps at the end.
"""

from __future__ import annotations

LONGEST_FIRST = ("test_corpus_kernels.py", "test_parallel.py", "test_properties.py",
                 "test_forward_compiled.py", "test_python_forms.py", "test_indexing.py",
                 "test_views.py", "test_inplace.py", "test_corpus_domains.py", "test_dask.py",
                 "test_transforms.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files keep order
