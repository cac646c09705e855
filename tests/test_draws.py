"""``np.random`` inside a differentiated function (issue #25, item 5; `jitgrad.frontend.draws`).

A draw is a constant of the call: drawn once per call, before the compiled code runs, from the
user's own generator, in program order. Each case checks, compiled as users run it: the value
equals the plain NumPy function's with the same seed; the generator's state after the call
equals NumPy's; the gradient equals central finite differences with the draws held fixed (the
generator's state restored before each evaluation). Then the refusals.
"""

import random

import numba
import numpy as np
import pytest

import jitgrad
from jitgrad.core.errors import UnsupportedError

RNG = np.random.default_rng(11)  # a module-level Generator, read by name at each call
RS = np.random.RandomState(5)  # a module-level RandomState


# ----------------------------------------------------------------------------- functions

def global_normal(mu, sigma, x):
    z = np.random.normal(mu, sigma, size=x.shape)
    return np.sum((x - z) ** 2) + np.random.rand()


def global_legacy_forms(w, x):
    a = np.random.randn(3)
    b = np.random.rand(2, 3)
    c = np.random.random()
    d = np.random.random_sample(3)
    e = np.random.standard_normal((2, 3))
    return np.sum(w * a) + np.sum(b @ x) * c + np.sum(d * w * w) + np.sum(e) * w[0]


def global_uniform_reparam(low, high, x):
    u = np.random.uniform(low, high, size=x.shape[0])
    return np.sum(np.sin(u) * x)


def global_uniform_default(x):
    return np.sum(x * np.random.uniform(size=x.shape))


def global_randint_index(x):
    idx = np.random.randint(0, x.shape[0], size=4)
    k = np.random.randint(3)
    return np.sum(x[idx] ** 2) + x[k]


def seeded_inside(x, s):
    np.random.seed(s)
    z = np.random.normal(0.0, 1.0, x.shape)
    return np.sum(x * z)


def local_generator(x, mu):
    rng = np.random.default_rng(42)
    z = rng.normal(mu, 0.5, size=x.shape)
    u = rng.random(3)
    v = rng.uniform(-1.0, mu, size=2)
    g = rng.standard_normal()
    j = rng.integers(0, x.shape[0], size=3)
    return np.sum(x * z) + np.sum(u) * mu + np.sum(v) + g * mu + np.sum(x[j])


def local_random_state(x):
    rs = np.random.RandomState(7)
    return np.sum(np.tanh(x + rs.normal(size=x.shape)) ** 2)


def module_generator(x, mu):
    z = RNG.normal(mu, 1.0, x.shape)
    return np.sum(x * z) + RNG.random()


def module_random_state(x):
    return np.sum(x * RS.standard_normal(x.shape)) + RS.randint(0, 5)


def normal_of_array(mu, sigma):
    return np.sum(np.random.normal(mu, sigma) ** 2)  # mu's shape, drawn entry by entry


def loop_scalar_draws(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * a + x[i] * np.random.normal(0.0, 1.0)
    return s


def loop_interleaved(x):
    s = 0.0
    for i in range(1, x.shape[0], 2):
        e = np.random.standard_normal()
        u = np.random.rand()
        s += x[i] * e + u * x[i - 1] ** 2
    return s


def loop_nested(x, n):
    s = 0.0
    for i in range(n):
        for j in range(x.shape[0]):
            s += np.sin(x[j] + np.random.normal(0.0, 0.1))
        s += np.sum(x * np.random.rand(x.shape[0]))
    return s


def loop_array_draws(w, n):
    rng = np.random.default_rng(3)
    total = 0.0
    for k in range(n):
        noise = rng.normal(0.0, 0.1, size=w.shape)
        total += np.sum((w + noise) ** 2)
    return total / n


def written_draws(x):
    s = 0.0
    for i in range(2):
        z = np.random.rand(3)  # a new array each iteration, as in NumPy: writable
        z[0] = 1.0
        s += np.sum(x * z)
    w = np.random.rand(3)
    w[1] *= x[1]
    return s + np.sum(w * x)


def _helper_noise(x):
    return x + np.random.normal(0.0, 0.3, x.shape)


def draw_in_helper(x):
    y = _helper_noise(x)
    return np.sum(np.sin(y)) + np.sum(_helper_noise(y) ** 2)


def exponential_scale(scale, x):
    e = np.random.exponential(scale, size=x.shape)  # scale * a standard exponential
    return np.sum(x * e) + RNG.exponential(scale) * x[0] + np.random.standard_exponential()


def other_distributions(x):
    """Replayed as drawn (their parameters are constants): gamma, poisson, beta in a loop, a
    permutation, a legacy sample/ranf."""
    s = np.sum(x * RNG.gamma(2.0, size=3)) + np.random.poisson(3.0) * x[0]
    for i in range(2):
        s += x[i] * RS.beta(2.0, 3.0)
    p = RNG.permutation(3)
    return s + np.sum(x[p] * np.arange(3.0)) + np.random.sample() + np.random.ranf() * x[2]


CASES = [
    (exponential_scale, (0.7, np.array([0.5, 1.0, -2.0])), (0, 1)),
    (other_distributions, (np.array([0.5, 1.0, -2.0]),), (0,)),
    (global_normal, (0.5, 2.0, np.linspace(0.0, 1.0, 5)), (0, 1, 2)),
    (global_legacy_forms, (np.array([0.2, -0.4, 0.9]), np.array([1.0, 0.5, -0.3])), (0, 1)),
    (global_uniform_reparam, (-0.3, 1.7, np.array([0.5, 1.0, -2.0, 0.3])), (0, 1, 2)),
    (global_uniform_default, (np.array([0.5, 1.0, -2.0]),), (0,)),
    (global_randint_index, (np.array([0.5, 1.0, -2.0, 0.7, 0.1]),), (0,)),
    (seeded_inside, (np.array([0.5, 1.0, -2.0]), 123), (0,)),
    (local_generator, (np.array([0.5, 1.0, -2.0, 0.4]), 0.7), (0, 1)),
    (local_random_state, (np.array([0.5, 1.0, -2.0]),), (0,)),
    (module_generator, (np.array([0.5, 1.0, -2.0]), 0.3), (0, 1)),
    (module_random_state, (np.array([0.5, 1.0, -2.0]),), (0,)),
    (normal_of_array, (np.array([0.5, 1.0, -2.0]), np.array([1.5, 0.5, 2.0])), (0, 1)),
    (loop_scalar_draws, (np.array([0.5, 1.0, -2.0, 0.3]), 0.8), (0, 1)),
    (loop_interleaved, (np.array([0.5, 1.0, -2.0, 0.3, 0.9, -0.1]),), (0,)),
    (loop_nested, (np.array([0.5, 1.0, -2.0]), 3), (0,)),
    (loop_array_draws, (np.array([0.5, 1.0, -2.0]), 4), (0,)),
    (draw_in_helper, (np.array([0.5, 1.0, -2.0]),), (0,)),
    (written_draws, (np.array([0.5, 1.0, -2.0]),), (0,)),
]


# ----------------------------------------------------------------------------- helpers

def _seed_all(seed=1234):
    np.random.seed(seed)
    RNG.bit_generator.state = np.random.default_rng(seed + 1).bit_generator.state
    RS.seed(seed + 2)


def _states():
    g = np.random.get_state()
    return (g[0], g[1].tolist(), g[2], g[3], g[4], RNG.bit_generator.state,
            [a.tolist() if isinstance(a, np.ndarray) else a for a in RS.get_state()])


def _fd(f, args, k, eps=1e-6):
    """Central differences in argument ``k``, every evaluation from the same generator states."""
    def at(v):
        a = list(args)
        a[k] = v
        _seed_all()
        return f(*a)
    x = args[k]
    if np.ndim(x) == 0:
        return (at(x + eps) - at(x - eps)) / (2 * eps)
    g = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (at(up) - at(down)) / (2 * eps)
    return g


# ----------------------------------------------------------------------------- agreement

@pytest.mark.parametrize(("f", "args", "wrt"), CASES, ids=[c[0].__name__ for c in CASES])
def test_value_state_and_gradient_match_numpy(f, args, wrt):
    g = jitgrad.value_and_grad(f, wrt=wrt)
    for _ in range(2):  # a second call replays again (fresh draws, same as NumPy's)
        _seed_all()
        value, grads = g(*args)
        after = _states()
        _seed_all()
        want = f(*args)
        assert _states() == after
        assert value == pytest.approx(want, rel=1e-12, abs=1e-12)
    for k, got in zip(wrt, grads):
        np.testing.assert_allclose(got, _fd(f, args, k), rtol=1e-5, atol=1e-6)


def test_consecutive_calls_draw_new_values_as_numpy_does():
    g = jitgrad.grad(global_normal, wrt=2)
    x = np.linspace(0.0, 1.0, 4)
    np.random.seed(0)
    first, second = g(0.1, 1.0, x), g(0.1, 1.0, x)
    assert not np.allclose(first, second)
    np.random.seed(0)
    z1 = np.random.normal(0.1, 1.0, 4)
    np.random.rand()
    np.testing.assert_allclose(first, 2 * (x - z1), rtol=1e-12)


def test_the_same_draws_serve_the_forward_and_the_adjoint_pass():
    def f(x):
        z = np.random.standard_normal(x.shape)
        return np.sum(np.exp(x * z))

    x = np.array([0.1, -0.2, 0.3])
    np.random.seed(9)
    gx = jitgrad.grad(f)(x)
    np.random.seed(9)
    z = np.random.standard_normal(3)
    np.testing.assert_allclose(gx, z * np.exp(x * z), rtol=1e-12)


def test_check_grad_holds_the_draws_fixed():
    np.random.seed(2)
    assert jitgrad.check_grad(global_normal, 0.5, 2.0, np.linspace(0.0, 1.0, 5)) < 1e-4
    assert jitgrad.check_grad(local_generator, np.array([0.5, 1.0, -2.0, 0.4]), 0.7) < 1e-4
    _seed_all()
    assert jitgrad.check_grad(module_generator, np.array([0.5, 1.0, -2.0]), 0.3) < 1e-4


def test_the_generator_ends_as_one_call_of_numpy_leaves_it_after_check_grad():
    x = np.linspace(0.0, 1.0, 5)
    np.random.seed(4)
    jitgrad.check_grad(global_normal, 0.5, 2.0, x)
    after = np.random.get_state()[1].copy()
    np.random.seed(4)
    global_normal(0.5, 2.0, x)
    assert np.array_equal(after, np.random.get_state()[1])


def test_a_rebound_module_generator_is_read_at_each_call():
    global RNG
    saved = RNG
    try:
        g = jitgrad.grad(module_generator)
        x = np.array([0.5, 1.0])
        RNG = np.random.default_rng(1)
        first = g(x, 0.0)
        RNG = np.random.default_rng(1)
        np.testing.assert_array_equal(g(x, 0.0), first)
        RNG = np.random.default_rng(2)
        assert not np.allclose(g(x, 0.0), first)
    finally:
        RNG = saved


@pytest.mark.parametrize("legacy", [True, False])
def test_numpy_fills_a_size_n_draw_as_n_scalar_draws(legacy):
    """What batching a loop's draws relies on."""
    def make():
        return np.random.RandomState(3) if legacy else np.random.default_rng(3)
    calls = [("standard_normal", ()), ("normal", (0.0, 1.0))]
    calls += [("random_sample", ())] if legacy else [("random", ())]
    calls += [("randint" if legacy else "integers", (lo, hi))
              for lo, hi in [(0, 10), (-5, 7), (0, 2 ** 40), (0, 2)]]
    for name, params in calls:
        a, b = make(), make()
        batch = getattr(a, name)(*params, size=(3, 5))
        one = [getattr(b, name)(*params) for _ in range(15)]
        np.testing.assert_array_equal(batch.ravel(), one)
        state = (lambda r: r.get_state()[1].tolist()) if legacy else \
            (lambda r: r.bit_generator.state)
        assert state(a) == state(b)


# ----------------------------------------------------------------------------- refusals

def in_while(x):
    s = 0.0
    k = 0
    while s < 3.0:
        s += np.random.rand() + x[k % 3]
        k += 1
    return s


def in_branch(x):
    if x[0] > 0:
        return np.sum(x * np.random.rand(3))
    return np.sum(x)


def after_continue(x):
    s = 0.0
    for i in range(3):
        if x[i] < 0:
            continue
        s += x[i] * np.random.rand()
    return s


def in_breaking_loop(x):
    s = 0.0
    for i in range(3):
        s += x[i] * np.random.rand()
        if s > 1.0:
            break
    return s


def triangular_loop(x):
    s = 0.0
    for i in range(3):
        for j in range(i):
            s += x[j] * np.random.rand()
    return s


def size_from_index(x):
    s = 0.0
    for i in range(1, 3):
        s += np.sum(np.random.rand(i)) * x[i]
    return s


def parameter_from_the_function(x):
    return np.sum(x * np.random.gamma(x[0] * x[0] + 1.0, size=x.shape))


def generator_choice(x):
    rng = np.random.default_rng(0)
    return np.sum(x[rng.choice(x.size, size=x.size - 1)])


def shuffled(x):
    np.random.shuffle(x[1:])
    return np.sum(x * np.arange(3.0))


def bit_generator_inside(x):
    g = np.random.Generator(np.random.PCG64(1))
    return np.sum(x * g.random(3))


def float32_draw(x):
    rng = np.random.default_rng(0)
    return np.sum(x * rng.standard_normal(3, dtype=np.float32))


@pytest.mark.parametrize(("f", "words"), [
    (in_while, ["while loop", "known only at run time", "s += np.random.rand()"]),
    (in_branch, ["branch on a value known only at run time", "np.random.rand(3)"]),
    (after_continue, ["branch", "continue", "s += x[i] * np.random.rand()"]),
    (in_breaking_loop, ["may exit early", "for i in range(3)"]),
    (triangular_loop, ["range of this loop", "for j in range(i)"]),
    (size_from_index, ["size or bounds of this draw", "np.random.rand(i)"]),
    (parameter_from_the_function, ["np.random gamma", "computed in the function",
                                   "standard_normal"]),
    (generator_choice, ["np.random choice", "size=", "known while building"]),
    (shuffled, ["shuffles an array it names", "x[rng.permutation(len(x))]"]),
    (float32_draw, ["dtype=float32"]),
    (bit_generator_inside, ["np.random.PCG64(...)", "np.random.default_rng(seed)"]),
])
def test_refusals_name_the_construct_and_the_line(f, words):
    with pytest.raises(UnsupportedError) as e:
        jitgrad.grad(f)(np.array([0.5, 1.0, -2.0]))
    for w in words:
        assert w in str(e.value), str(e.value)


X3 = np.array([0.5, 1.0, -2.0])


def _vector_draw(x):
    return np.sin(x) * np.random.rand(3)


@pytest.mark.parametrize(("make", "call"), [
    (lambda: global_uniform_default, lambda f: jitgrad.jvp(f, (X3,), (X3,))),
    (lambda: jitgrad.hessian(global_uniform_default), lambda t: t(X3)),
    (lambda: jitgrad.hvp(global_uniform_default), lambda t: t(X3, X3)),
    (lambda: jitgrad.jacobian(_vector_draw), lambda t: t(X3)),
    (lambda: jitgrad.grad(jitgrad.grad(global_uniform_default)), lambda t: t(X3)),
    (lambda: jitgrad.vmap(jitgrad.grad(global_uniform_default)), lambda t: t(np.ones((2, 3)))),
    (lambda: jitgrad.grad(global_uniform_default), lambda t: t.njit(X3)),
])
def test_entry_points_that_do_not_replay_refuse(make, call):
    with pytest.raises(UnsupportedError) as e:
        call(make())
    assert "replayed before it by jitgrad.grad and value_and_grad only" in str(e.value)
    assert "np.random.uniform" in str(e.value) or "np.random.rand" in str(e.value)


def test_vjp_refuses():
    with pytest.raises(UnsupportedError, match="value_and_grad only"):
        jitgrad.vjp(_vector_draw, X3)


# ----------------------------------------------------------------------------- call paths

def broadcast_bias(W, b):
    z = np.random.normal(size=W.shape)
    return np.sum((W + b) * z)


def tree_params(params, x):
    w, b = params["w"], params["b"]
    noise = np.random.normal(0.0, 0.1, size=w.shape)
    return np.sum(np.tanh(x @ (w + noise) + b) ** 2)


def with_aux(x):
    z = np.random.rand(x.shape[0])
    v = np.sum(x * z)
    return v, z


def comprehension_draws(x):
    return sum(np.random.normal(0.0, 1.0) * v for v in x)


def prange_draws(x):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += np.sin(x[i] + np.random.normal(0.0, 0.2))
    return s


def long_recurrence(x, a):
    h = 0.0
    for i in range(x.shape[0]):
        h = np.tanh(a * h + x[i] + np.random.normal(0.0, 0.1))
    return h


def test_a_broken_size_assumption_reuses_the_calls_draws():
    g = jitgrad.grad(broadcast_bias)
    W = np.arange(6.0).reshape(2, 3)
    for b in (np.array([0.1, 0.2, 0.3]), np.array([0.5])):  # the second breaks W.shape[1] == b.shape[0]
        _seed_all()
        gW = g(W, b)
        after = _states()
        _seed_all()
        z = np.random.normal(size=W.shape)
        assert _states() == after
        np.testing.assert_allclose(gW, z, rtol=1e-12)


def test_tree_arguments_float32_and_0d_arguments():
    params = {"w": np.array([[0.2, -0.1], [0.4, 0.3]]), "b": np.array([0.1, -0.2])}
    x = np.array([[1.0, 2.0], [0.5, -1.0], [0.3, 0.3]])
    _seed_all()
    v, g = jitgrad.value_and_grad(tree_params)(params, x)
    _seed_all()
    assert v == pytest.approx(tree_params(params, x), rel=1e-12)

    def of_w(w):
        return tree_params({"w": w, "b": params["b"]}, x)
    np.testing.assert_allclose(g["w"], _fd(of_w, (params["w"],), 0), rtol=1e-5, atol=1e-6)
    w32 = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    _seed_all()
    g32 = jitgrad.grad(global_uniform_default)(w32)
    _seed_all()
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, np.random.uniform(size=3), rtol=1e-6)
    _seed_all()
    g0 = jitgrad.grad(seeded_inside)(np.array(0.5), 3)
    np.random.seed(3)
    assert float(g0) == pytest.approx(np.random.normal(0.0, 1.0, ()))


def test_has_aux_returns_the_draws_of_the_call():
    x = np.array([0.5, 1.0, -2.0])
    _seed_all()
    g, z = jitgrad.grad(with_aux, has_aux=True)(x)
    np.testing.assert_array_equal(g, z)
    _seed_all()
    np.testing.assert_array_equal(z, np.random.rand(3))


@pytest.mark.parametrize(("f", "kw"), [
    (comprehension_draws, {}),
    (prange_draws, {"parallel": True}),
    (long_recurrence, {"memory_cap": 64}),
])
def test_loop_strategies_replay_the_same_draws(f, kw):
    x = np.array([0.5, 1.0, -2.0, 0.25, 0.75])
    args = (x, 0.7) if f is long_recurrence else (x,)
    _seed_all()
    v, g = jitgrad.value_and_grad(f, **kw)(*args)
    after = _states()
    _seed_all()
    assert v == pytest.approx(f(*args), rel=1e-12)
    assert _states() == after
    np.testing.assert_allclose(g, _fd(f, args, 0), rtol=1e-5, atol=1e-6)


def test_generating_without_replay_refuses():
    """What `jitgrad.dask` does (its blocks would each draw, or draw nothing)."""
    from jitgrad.api import GradFunction
    from jitgrad.core.types import type_of_value

    g = GradFunction(global_uniform_default)
    with pytest.raises(UnsupportedError, match="value_and_grad only"):
        g.generate((type_of_value(X3, "x"),))


def _row_noise(x):
    return np.sum(x * RNG.normal(size=x.shape))


def test_vmap_of_a_plain_function_that_draws_refuses():
    """Numba's np.random has a generator of its own: the rows would not see NumPy's draws."""
    for f, where in [(global_uniform_default, "np.random.uniform"), (_row_noise, "RNG.normal")]:
        with pytest.raises(UnsupportedError) as e:
            jitgrad.vmap(f)(np.ones((2, 3)))
        assert where in str(e.value) and "Numba's generator" in str(e.value)


def _noisy_loss(mu, rs):
    return np.sum((mu + rs.randn(3)) ** 2)


def _noisy_sines(mu, rng):
    return np.sum(np.sin(mu * rng.normal(size=3)))


def test_a_generator_passed_as_an_argument():
    """A RandomState or Generator argument (autograd's VAE and GAN examples pass one): the
    call's own generator is drawn from before the call, as the plain function would, and
    left where it would leave it; check_grad gives each evaluation the same draws."""
    mu = np.array([0.1, 0.2, 0.3])
    z = np.random.RandomState(0).randn(3)
    np.testing.assert_allclose(jitgrad.grad(_noisy_loss)(mu, np.random.RandomState(0)),
                               2 * (mu + z), rtol=1e-13)
    rng, twin = np.random.default_rng(1), np.random.default_rng(1)
    g = jitgrad.grad(_noisy_sines)
    for _ in range(2):  # the second call draws the next values, as Python's would
        z = twin.normal(size=3)
        np.testing.assert_allclose(g(mu, rng), np.cos(mu * z) * z, rtol=1e-13)
    assert rng.bit_generator.state == twin.bit_generator.state
    assert jitgrad.check_grad(_noisy_sines, mu, np.random.default_rng(5)) < 1e-6


def python_random_draws(x, w):
    """Python's random module, seeded inside: replayed as drawn, in the same order."""
    random.seed(11)
    s = x * random.random() + w * random.gauss(0.0, 1.0)
    for _ in range(3):
        s += random.uniform(1.0, 2.0) * x * w + random.randint(1, 3)
    return s + random.expovariate(1.5) * w


def test_python_random_module_draws_are_replayed():
    """The global `random` generator (seed and all): NumPy-free scalar draws are made before
    the call, as the plain function makes them, and the gradient is central differences'."""
    g = jitgrad.value_and_grad(python_random_draws, wrt=(0, 1))
    random.seed(99)
    value, (gx, gw) = g(0.7, -1.3)
    after = random.getstate()
    random.seed(99)
    assert value == pytest.approx(python_random_draws(0.7, -1.3), rel=1e-12)
    assert random.getstate() == after
    eps = 1e-6
    fx = (python_random_draws(0.7 + eps, -1.3) - python_random_draws(0.7 - eps, -1.3)) / (2 * eps)
    fw = (python_random_draws(0.7, -1.3 + eps) - python_random_draws(0.7, -1.3 - eps)) / (2 * eps)
    assert gx == pytest.approx(fx, rel=1e-6) and gw == pytest.approx(fw, rel=1e-6)
    with pytest.raises(UnsupportedError, match="random.shuffle"):
        jitgrad.grad(_python_shuffle)(np.ones(3))


def _python_shuffle(x):
    idx = [0, 1, 2]
    random.shuffle(idx)
    return np.sum(x * idx[0])
