"""jitgrad chooses Numba's threading layer for parallel gradients unless the user did
(`backend.numba.compile.choose_threading_layer`): GNU OpenMP spins between parallel loops,
which made parallel gradients 2-5x slower than serial ones on a shared 2-core machine
(`python -m bench.parallel --layer=omp` against the default). Each case runs in a fresh
process, where the layer is not launched yet."""

import os
import subprocess
import sys

import pytest

CHILD = os.path.join(os.path.dirname(__file__), "threading_layer_child.py")


def layer_in_child(tmp_path, **env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY")}
    full.update(env, JITGRAD_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, CHILD], env=full, capture_output=True, text=True,
                         check=False,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_the_default_does_not_spin(tmp_path):
    layer, policy = layer_in_child(tmp_path)
    assert (layer, policy) in (("omp", "passive"), ("workqueue", "unset"), ("tbb", "passive"))


def test_the_users_layer_is_kept(tmp_path):
    assert layer_in_child(tmp_path, NUMBA_THREADING_LAYER="workqueue") == ["workqueue", "unset"]


@pytest.mark.skipif(sys.platform != "linux", reason="GNU OpenMP's wait policy: Linux")
def test_an_active_wait_policy_is_not_overridden_it_is_avoided(tmp_path):
    layer, policy = layer_in_child(tmp_path, OMP_WAIT_POLICY="active")
    assert policy == "active" and layer in ("workqueue", "tbb")
