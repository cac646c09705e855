"""How each primitive is written in the generated Numba source: ``LOWER[name]``, a template
``(arg_sources, params, in_types) -> expression source``.

The templates take the sources of the arguments (names and literals), the equation's
parameters and the input types (scalar types for the elements of a fused loop), and return
one Python expression. They use ``np`` for NumPy and ``_rt`` for `runtime` (loop helpers Numba
compiles quickly, standing in for the NumPy forms Numba rejects or compiles slowly). Two kinds
of primitive need no entry:

* a primitive whose Numba source is NumPy's own function of its arguments, ``np.<name>(a,
  b, ...)``: that is the default (`lower`). (An elementwise primitive with an array operand is
  not written from this table: the emitter calls ``_rt.<name>``, which `runtime_elementwise`
  defines for every elementwise primitive);
* a user's ``custom_vjp`` (a row with ``custom_rule=True``): its value is its input
  ``n_args``, copied (`identity_copy`).

What the emitter writes for the internal operations (`core.ops`) and for the statements of a
primitive that writes in place (``setitem``, ``add_at``) is the emitter's (`emit`).
"""

from __future__ import annotations

from collections.abc import Callable

from jitgrad.core.ir import Var
from jitgrad.prims import complex_decompositions, complex_special, elementwise, primitives, shape
from jitgrad.prims.primitives import index_source

# ----------------------------------------------------------------------------- helpers


def reduced_shape_src(x: str, ndim: int, axis, keepdims: bool) -> str:
    """Source of the shape tuple of ``x`` reduced over ``axis`` (None: all axes)."""
    dims = []
    for k in range(ndim):
        if axis is None or k == axis:
            if keepdims:
                dims.append("1")
        else:
            dims.append(f"{x}.shape[{k}]")
    return "(" + "".join(d + ", " for d in dims).rstrip(" ") + ")" if dims else "()"


def shape_src(items: list[str]) -> str:
    """Source of a shape tuple of the sizes ``items``."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


_KIND_DTYPE = {"f": "", "i": ", np.int64", "b": ", np.bool_"}


def allocation(how: str, shape: str, kind: str = "f") -> str:
    """Source of a new array: ``how`` is empty, zeros or ones, ``shape`` the source of an int
    or a shape tuple, ``kind`` f, i or b. Through `runtime` (intrinsics written into the
    caller, nothing compiled of their own), never an inline ``np.empty``: Numba compiles NumPy's
    allocation anew in every process."""
    return f"_rt.{how}({shape}{_KIND_DTYPE[kind]})"


def identity_copy(a, p, t):
    # An array result is a new array (`.copy()`): no alias for an in-place write to reach.
    return f"{a[0]}.copy()" if t[0].ndim else a[0]


def _binop(op):
    return lambda a, p, t: f"{a[0]} {op} {a[1]}"


def _cast(a, p, t):
    if t[0].ndim:
        return f"{a[0]}.astype({ {'f': 'np.float64', 'i': 'np.int64', 'b': 'np.bool_'}[p['kind']]})"
    if t[0].kind == "b" and p["kind"] != "b":  # Numba has no float(bool) / int(bool)
        return f"({'1.0' if p['kind'] == 'f' else '1'} if {a[0]} else {'0.0' if p['kind'] == 'f' else '0'})"
    return f"{ {'f': 'float', 'i': 'int', 'b': 'bool'}[p['kind']]}({a[0]})"


def _reduce(op):
    def emit(a, p, t):
        axis, keep, ndim = p["axis"], p["keepdims"], t[0].ndim
        if axis is None:
            full = _sum_all(a[0]) if op == "sum" and t[0].kind == "f" else f"np.{op}({a[0]})"
            if keep:
                return f"np.full({reduced_shape_src(a[0], ndim, None, True)}, {full})"
            return full
        return f"_rt.{op}_axis({a[0]}, {axis}, {reduced_shape_src(a[0], ndim, axis, keep)})"
    return emit


def _sum_all(x: str) -> str:
    """``np.sum(x)`` of a float array: the runtime's, written into the function (Numba's own
    compiles three functions in each process, 0.15-0.3 s), the same sum to the bit."""
    return f"_rt.sum_all({x})"


def _as_float(x: str, t) -> str:
    """``x`` as floats: NumPy's products and linear algebra convert integer operands to
    float, where Numba's BLAS and LAPACK wrappers refuse them."""
    if t.kind == "f":
        return x
    return f"{x}.astype(np.float64)" if t.ndim else f"float({x})"


def _linalg(name):
    """A product or linear-algebra call through `runtime` (``_rt.solve``), on float
    operands: Numba's BLAS and LAPACK wrappers take seconds to compile, and there they
    compile once per machine (cached), not per module."""
    return lambda a, p, t: f"_rt.{name}({', '.join(map(_as_float, a, t))})"


def _with_full(name):
    """A decomposition's helper called with its ``full=`` (svd's factors) after its
    operands, when the row has it."""
    def lower(a, p, t):
        args = list(map(_as_float, a, t))
        if "full" in p:
            args.append(repr(bool(p["full"])))
        return f"_rt.{name}({', '.join(args)})"
    return lower


def _transpose(a, p, t):
    if p.get("axes") is None:
        return f"{a[0]}.T" if t[0].ndim else a[0]
    return f"np.transpose({a[0]}, {tuple(p['axes'])})"


def _sum_to(a, t):
    g, like = a
    if t[1].ndim == 0:
        return (_sum_all(g) if t[0].kind == "f" else f"np.sum({g})") if t[0].ndim else g
    for k in range(1, t[0].ndim - t[1].ndim + 1):  # sum away the leading axes, one by one
        g = f"_rt.sum_axis({g}, 0, {a[0]}.shape[{k}:])"
    if t[0].ndim < t[1].ndim:  # a (1, n) value written into a row: its leading axes are 1s
        g = f"np.ascontiguousarray({g}).reshape({(1,) * (t[1].ndim - t[0].ndim)} + {g}.shape)"
    return f"_rt.sum_to({g}, {like})"


def _getitem(a, p, t):
    # A full-array result of basic indexing is a view: callers that keep it get a copy only
    # where the analysis in reverse.py says the storage is written later.
    return index_source(a[0], p["index_spec"], a[1:])


def _stack(a, p, t):
    if t[0].ndim:
        return f"np.stack(({', '.join(a)},))"
    if primitives.stack_kind([u.kind for u in t]) == "i":
        return f"np.array([{', '.join(a)}], dtype=np.int64)"
    return f"np.array([{', '.join(f'float({x})' if u.kind != 'f' else x for x, u in zip(a, t))}])"


def _runtime_call(name):
    """``_rt.<name>(a, b, ...)``: the runtime's function of the same name."""
    return lambda a, p, t: f"_rt.{name}({', '.join(a)})"


# ----------------------------------------------------------------------------- the table

LOWER: dict[str, Callable] = {
    # elementwise
    "neg": lambda a, p, t: f"-{a[0]}",
    "erf": lambda a, p, t: f"_rt.erf({a[0]})",
    # not libm's tanh: runtime_elementwise.tanh_scalar says why
    "tanh": lambda a, p, t: f"_rt.tanh({a[0]})" if t[0].ndim else f"_rt.tanh_scalar({a[0]})",
    "erfc": lambda a, p, t: f"_rt.erfc({a[0]})",
    "gammaln": lambda a, p, t: f"_rt.gammaln({a[0]})",
    "gamma": lambda a, p, t: f"_rt.gamma({a[0]})",
    "digamma": lambda a, p, t: f"_rt.digamma({a[0]})",
    "trigamma": lambda a, p, t: f"_rt.trigamma({a[0]})",
    "tetragamma": lambda a, p, t: f"_rt.tetragamma({a[0]})",
    "lambertw": lambda a, p, t: f"_rt.lambertw({a[0]})",
    "gammainc_slope": _runtime_call("gammainc_slope"),
    **{name: _runtime_call(name) for name in complex_special.PARTS},
    # SciPy's special functions: its compiled kernels, as ufuncs (`runtime_elementwise`)
    **{name: _runtime_call(name) for name in elementwise.SCIPY_FUNCTIONS},
    "logical_not": lambda a, p, t: f"np.logical_not({a[0]})" if t[0].ndim else f"not {a[0]}",
    "add": _binop("+"), "sub": _binop("-"), "mul": _binop("*"), "div": _binop("/"),
    "pow": _binop("**"), "floordiv": _binop("//"), "mod": _binop("%"),
    "lt": _binop("<"), "le": _binop("<="), "gt": _binop(">"), "ge": _binop(">="),
    "eq": _binop("=="), "ne": _binop("!="),
    "bitwise_and": _binop("&"), "bitwise_or": _binop("|"), "bitwise_xor": _binop("^"),
    "left_shift": _binop("<<"), "right_shift": _binop(">>"),
    "invert": lambda a, p, t: f"~{a[0]}",
    "frexp_exponent": lambda a, p, t: f"_rt.frexp_exponent_scalar({a[0]})",
    "logical_and": lambda a, p, t: f"np.logical_and({a[0]}, {a[1]})" if max(x.ndim for x in t)
    else f"({a[0]} and {a[1]})",
    "logical_or": lambda a, p, t: f"np.logical_or({a[0]}, {a[1]})" if max(x.ndim for x in t)
    else f"({a[0]} or {a[1]})",
    "maximum": lambda a, p, t: f"np.maximum({a[0]}, {a[1]})" if max(x.ndim for x in t)
    else f"max({a[0]}, {a[1]})",
    "minimum": lambda a, p, t: f"np.minimum({a[0]}, {a[1]})" if max(x.ndim for x in t)
    else f"min({a[0]}, {a[1]})",
    "tie_share": lambda a, p, t: f"({a[0]} > {a[1]}) + ({a[0]} == {a[1]}) * 0.5",
    "where": lambda a, p, t: f"np.where({a[0]}, {a[1]}, {a[2]})" if max(x.ndim for x in t)
    else f"{a[1]} if {a[0]} else {a[2]}",
    "cast": _cast,
    "round_float32": lambda a, p, t: f"float(np.float32({a[0]}))",  # (arrays: `_rt`)
    # reductions
    "sum": _reduce("sum"), "max": _reduce("max"), "min": _reduce("min"),
    "argmax": lambda a, p, t: f"np.argmax({a[0]})" if p.get("axis") is None
    else f"np.argmax({a[0]}, axis={p['axis']})",
    "argmin": lambda a, p, t: f"np.argmin({a[0]})" if p.get("axis") is None
    else f"np.argmin({a[0]}, axis={p['axis']})",
    "prod_others": lambda a, p, t: f"_rt.prod_others({a[0]})",
    "prod_axis": lambda a, p, t: f"_rt.prod_axis({a[0]}, {p['axis']}, "
    f"{reduced_shape_src(a[0], t[0].ndim, p['axis'], p['keepdims'])})",
    "prod_others_axis": lambda a, p, t: f"_rt.prod_others_axis({a[0]}, {p['axis']})",
    "prod_others_jvp": lambda a, p, t: f"_rt.prod_others_jvp({a[0]}, {a[1]})",
    "cumsum_axis": lambda a, p, t: f"_rt.cumsum_axis({a[0]}, {p['axis']})",
    "cumprod_grad": lambda a, p, t: f"_rt.cumprod_grad({a[0]}, {a[1]})",
    "cumprod_jvp": lambda a, p, t: f"_rt.cumprod_jvp({a[0]}, {a[1]})",
    "spread": lambda a, p, t: f"_rt.broadcast_like({a[0]}, {a[1]})" if p["axis"] is None
    else f"_rt.spread({a[0]}, {a[1]}, {p['axis']})",
    "argsort": lambda a, p, t: f"np.argsort({a[0]}, kind='mergesort')",
    "searchsorted": lambda a, p, t: f"np.searchsorted({a[0]}, {a[1]}, side={p['side']!r})",
    "digitize": lambda a, p, t: f"np.digitize({a[0]}, {a[1]}, {p['right']!r})",
    # linear algebra
    # products through the runtime: Numba's BLAS wrappers compile for 0.5-2 s in each process
    "matmul": lambda a, p, t: _linalg("matmul" if t[0].ndim + t[1].ndim > 2 else "dot")(a, p, t),
    "inv": lambda a, p, t: _linalg("inv_stack" if t[0].ndim == 3 else "inv")(a, p, t),
    "det": lambda a, p, t: _linalg("det_stack" if t[0].ndim == 3 else "det")(a, p, t),
    "solve": _linalg("solve"),
    "cholesky": _linalg("cholesky"), "cholesky_fails": _linalg("cholesky_fails"),
    "logabsdet": _linalg("logabsdet"), "signdet": _linalg("signdet"),
    "dft": lambda a, p, t: f"_rt.dft({a[0]}, {p['sign']})",
    # decompositions (`prims.decompositions`), one result each
    "eigvalsh": _linalg("eigvalsh"), "eigh_vectors": _linalg("eigh_vectors"),
    "eigh_vectors_upper": _linalg("eigh_vectors_upper"),
    "eig_values": _linalg("eig_values"), "eig_vectors": _linalg("eig_vectors"),
    "svdvals": _linalg("svdvals"), "qr_q": _linalg("qr_q"), "qr_r": _linalg("qr_r"),
    "pinv": _linalg("pinv"), "matrix_rank": _linalg("matrix_rank"),
    "sqrtm": _linalg("sqrtm"), "sqrtm_adjoint": _linalg("sqrtm_adjoint"),
    "inverse_gaps": _linalg("inverse_gaps"), "companion": _linalg("companion"),
    "svd_u": lambda a, p, t: f"_rt.svd_u({_as_float(a[0], t[0])}, {p.get('full', False)})",
    "svd_vt": lambda a, p, t: f"_rt.svd_vt({_as_float(a[0], t[0])}, {p.get('full', False)})",
    # a complex matrix's decompositions, of its two float parts (`prims.complex_decompositions`)
    **{name: _with_full(name) for name in complex_decompositions.RESULTS},
    "inverse_square_gaps": _linalg("inverse_square_gaps"),
    # shapes
    "transpose": _transpose,
    "reshape": lambda a, p, t: f"_rt.reshape({a[0]}, {shape_src(a[1:])})",
    "reshape_like": lambda a, p, t: f"_rt.reshape({a[0]}, {a[1]}.shape)"
    if t[1].ndim else f"{a[0]}.item()" if t[0].ndim else a[0],
    # (of a number, x[..., None]: the array of it; Numba's expand_dims takes arrays only)
    "expand_dims": lambda a, p, t: f"np.expand_dims({a[0]}, {p['axis']})" if t[0].ndim
    else f"np.array([{a[0]}])",
    "broadcast_like": lambda a, p, t: f"_rt.broadcast_like({a[0]}, {a[1]})"
    if t[1].ndim else a[0],
    "sum_to_like": lambda a, p, t: _sum_to(a, t),
    "shape_dim": lambda a, p, t: f"{a[0]}.shape[{p['axis']}]",
    "same_size": lambda a, p, t: f"_rt.same_size({a[0]}, {a[1]})",
    "size_at_least": lambda a, p, t: f"_rt.size_at_least({a[0]}, {a[1]})",
    "same_carried_size": lambda a, p, t: f"if {a[0]} != {a[1]}: raise ValueError("
    f"{shape.CARRIED_SIZE_MESSAGE.format(name=p['name'])!r})",
    "size": lambda a, p, t: f"{a[0]}.size",
    "memory": lambda a, p, t: (f"{a[0]}.strides[{p['axis']}]" if p["attr"] == "strides" else
                               f"{a[0]}.flags.{p['attr']}" if p["attr"].endswith("contiguous")
                               else f"{a[0]}.{p['attr']}"),
    "unpack_count": lambda a, p, t: f"_rt.unpack_count({a[0]}, {a[1]})",
    "squeezed_size": lambda a, p, t: f"_rt.squeezed_size({a[0]})",
    "raise_error": lambda a, p, t: f"raise {p['exc']}" if p["msg"] is None
    else f"raise {p['exc']}({p['msg']!r})",
    # indexing
    "getitem": _getitem,
    "setitem": lambda a, p, t: index_source(a[0], p["index_spec"], a[2:]),
    "add_at": lambda a, p, t: index_source(a[0], p["index_spec"], a[2:]),
    "take": lambda a, p, t: f"{a[0]}[{a[1]}]",
    "bincount": lambda a, p, t: f"np.bincount({a[0]}, {a[2] if len(a) > 2 else None}, {a[1]})",
    "index_positions": lambda a, p, t: _positions(a, p),
    "strided_positions": lambda a, p, t: (
        f"_rt.strided_positions({a[0]}, ({''.join(v + ', ' for v in a[1:1 + p['ndim']])}), "
        f"({''.join(v + ', ' for v in a[1 + p['ndim']:])}), {p.get('distinct', False)})"),
    "take_add": lambda a, p, t: f"_rt.take_add_{'vector' if t[0].ndim == 1 else 'rows'}("
                                f"{a[0]}, {a[1]}, {a[2]})",
    # new arrays
    "zeros": lambda a, p, t: allocation("zeros", shape_src(a), p.get("kind", "f")),
    "ones": lambda a, p, t: allocation("ones", shape_src(a), p.get("kind", "f")),
    "empty": lambda a, p, t: allocation("empty", shape_src(a), p.get("kind", "f")),
    "zeros_like": lambda a, p, t: allocation("zeros", f"{a[0]}.shape") if t[0].ndim else "0.0",
    "ones_like": lambda a, p, t: allocation("ones", f"{a[0]}.shape") if t[0].ndim else "1.0",
    # through the runtime: NumPy's forms took 0.3-1.2 s to compile in each process
    "eye": lambda a, p, t: f"_rt.eye({a[0]})",
    "arange": lambda a, p, t: f"_rt.arange({a[0]}, {a[1]}, {a[2]})"
    if all(x.kind == "i" for x in t) else f"np.arange({a[0]}, {a[1]}, {a[2]})",
    "outer": lambda a, p, t: f"_rt.outer({a[0]}, {a[1]})"
    if all(x.kind == "f" for x in t) else f"np.outer({a[0]}, {a[1]})",
    "full": lambda a, p, t: f"_rt.full({shape_src(a[1:])}, {a[0]})"
    if t[0].kind == "f" else f"np.full({shape_src(a[1:])}, {a[0]})",
    "kaiser": lambda a, p, t: f"np.kaiser({a[0]}, {p['beta']!r})",
    "vander": lambda a, p, t: f"np.vander({a[0]}, {a[1]}, {p['increasing']!r})",
    "copy": lambda a, p, t: f"{a[0]}.copy()" if t[0].ndim else a[0],
    "stack": _stack,
    "concatenate": lambda a, p, t: f"np.concatenate(({', '.join(a)},), axis={p['axis']})",
    "constant": lambda a, p, t: p["name"],
    "stop_gradient": identity_copy,
    "pseudo_covariance": identity_copy,  # (its derivative is refused: `prims.decompositions`)
    # a root's value and its slope for the implicit function theorem (`prims.implicit`)
    "implicit_root": lambda a, p, t: a[0],
    "root_at": lambda a, p, t: a[0],
    "root_slope": lambda a, p, t: f"-1.0 / {a[0]}",
}


def _positions(a, p) -> str:
    """The positions an advanced index names, checked (`prims.indexing.index_positions`)."""
    kind = p["kind"]
    if kind == "rows":
        return f"_rt.rows_at({a[0]}, {a[1]}.shape[0])"
    if kind == "mask":
        return f"_rt.mask_positions({a[0]}, {a[1]})"
    if kind == "mask_rows":
        return f"_rt.mask_rows({a[0]}, {a[1]}.shape[0])"
    if kind == "pairs":
        return f"_rt.pair_positions({a[0]}, {a[1]}, {a[2]}.shape[0], {a[2]}.shape[1])"
    if len(a) == 3:  # np.put_along_axis: the values, of the index's shape
        return f"_rt.along_positions({a[0]}, _rt.same_shape({a[1]}, {a[0]}, {a[2]}), " \
            f"{p['axis']})"
    return f"_rt.along_positions({a[0]}, {a[1]}, {p['axis']})"


def default(name: str, a, p, t) -> str:
    """NumPy's own function of the arguments: ``np.<name>(a, b, ...)``."""
    return f"np.{name}({', '.join(a)})"


def lower(name: str, a, p, t) -> str:
    """The source of primitive ``name`` applied to the argument sources ``a`` (parameters
    ``p``, input types ``t``)."""
    template = LOWER.get(name)
    if template is not None:
        return template(a, p, t)
    if primitives.PRIMITIVES[name].custom_rule:  # custom_vjp<n>: the value is input n_args
        n = p["n_args"]
        return identity_copy(a[n:], p, t[n:])
    return default(name, a, p, t)


def atom_source(a) -> str:
    """The source of an IR atom: a variable's name, or a constant written out."""
    if isinstance(a, Var):
        return a.name
    return primitives.constant_source(a.value)


def primitive_source(prim: str, args: list[str], params: dict, types: list) -> str:
    """The source of primitive ``prim`` applied to ``args`` (source texts of operands of
    ``types``): its Numba template (`lowering.LOWER`). The one place it is looked up."""
    return lower(prim, args, params, types)
