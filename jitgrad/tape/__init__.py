"""An interpreted, PyTorch-like tape over NumPy: the benchmark baseline and an independent oracle.

The user's unmodified function runs on `Tensor` values. Every NumPy operation on a tensor
(operators, ``np.exp(t)`` through ``__array_ufunc__``, ``np.sum(t, axis=0)`` through
``__array_function__``, methods, indexing, ``t[i] = v``) goes through the table
`jitgrad.lang.symbolic.NUMPY` to a primitive of `jitgrad.prims.primitives`, whose NumPy ``impl`` computes
the value; the tape records a node (primitive, input values, parameters, result).
``t.backward()`` walks the nodes in reverse order of recording and applies the derivative
rules of `jitgrad.prims.primitives.RULES` (with `jitgrad.prims.primitives.unbroadcast` for elementwise
primitives): the same table the source transform uses, so each rule lives in one place. The
tape never calls the source transform or generated code.

    x = Tensor(3.0, requires_grad=True)
    y = np.square(x)
    y.backward()
    x.grad  # 6.0

    tape.grad(f, wrt=(0, 1))(a, b)  # the same signature and semantics as jitgrad.grad
    tape.grad(loss, has_aux=True)(params, x)  # dict parameters, (gradients, aux) as JAX

Semantics (what differs from PyTorch is marked):

* ``.grad`` of a leaf is a plain value of the leaf's type: a float for a scalar leaf, a float64
  array of the leaf's shape for an array leaf. ``backward()`` adds to it; ``t.grad = None``
  resets it.
* The graph is kept after ``backward()`` (PyTorch frees it unless ``retain_graph=True``): a
  second ``backward()`` through the same graph runs again and adds the same gradients again.
* ``backward()`` needs a scalar result (or an explicit ``gradient`` of the result's shape) and
  a result that depends on a tensor requiring gradients.
* Gradients flow only through operations the tape records, i.e. NumPy (``np.*``) functions,
  operators and array methods. ``math.exp(t)`` converts ``t`` with ``float()`` and cannot be
  recorded, so ``float()`` of a tensor that carries a gradient raises `UnsupportedError`
  (use ``np.exp``) instead of silently losing the gradient. The same happens when such a
  tensor is written into a plain NumPy array (``y = np.zeros(n); y[i] = t``): allocate the
  array from a tensor (``np.zeros_like(x)``, ``np.copy(x)``, ``x.copy()``) so writes are
  recorded. ``bool()``, ``int()`` and comparisons work on any tensor, so Python control flow
  (``if t > 0``, ``while``, ``range(len(t))``, ``min``/``max``/``abs``) just runs.
* ``item()`` keeps the gradient (it is differentiable, as in jitgrad's compiled code) on a
  tensor that requires gradients; ``detach()`` and ``numpy()`` give the plain value.
* In-place writes (``t[i] = v``, ``t[i] += v``, ``t += v`` on an array tensor) are recorded
  as ``setitem`` (copy-on-write: every recorded value stays as it was, so a write costs
  O(size) in time and memory). Writing into a leaf that requires gradients, or into a view
  (the result of indexing, reshaping or transposing another tensor), is refused. A view of a
  tensor taken before a write into that tensor would, in NumPy, show the write; the tape
  cannot, so using such a view afterwards raises `UnsupportedError` instead of computing
  with the old values.
* Builtins ``min``/``max`` return one of their arguments: at an exact tie the whole gradient
  goes to the one returned (``np.minimum``/``np.maximum`` share it, as jitgrad does).

Cost: about 1-3 microseconds per recorded scalar operation forward and as much backward
(a 10^5-step scalar loop of three operations: about 1.5 s). Binary arithmetic and comparisons
on two scalars use NumPy's float64 scalar operators instead of the ufunc (the same IEEE
result). Reads ``x[i]`` accumulate their adjoint in place into a gradient buffer the tape owns
(as the source transform does), so a loop reading ``n`` elements stays O(n); it is the
scatter-add that ``RULES["getitem"]`` builds, without a zero array per read. Topological order
is iterative (no recursion limit). `grad`/`value_and_grad` and ``backward()`` pause Python's
cyclic garbage collector while they run (restoring it after): a graph is many live objects and
no garbage, and repeated collections made long scalar loops 3-4x slower.

The package: `tensor` (`Tensor`, recording, indexing and writes, the NumPy functions it
handles itself), `graph` (the node layout and ``backward``'s reverse walk), `gradients`
(`grad`, `value_and_grad`) and `errors` (refusals at the user's line). It imports only
`jitgrad.core`, `jitgrad.prims` and `jitgrad.lang` (tests/test_structure.py).
"""

from jitgrad.tape.gradients import TapeGradFunction as TapeGradFunction
from jitgrad.tape.gradients import grad, value_and_grad
from jitgrad.tape.tensor import Tensor

__all__ = ["Tensor", "grad", "value_and_grad"]
