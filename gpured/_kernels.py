"""User-defined reductions (CuPy's ReductionKernel, in OpenCL C) and the
fused built-ins on them: :func:`dot`, :func:`vdot`, :func:`logsumexp`.

The Python face: parse the parameters, resolve their types from the
arguments, broadcast and lay the inputs out as M segments of L elements
(the same layout for every input), and write the user's expressions into
kernels/custom.cl's GR_USER_* defines (deterministic text: the program
cache keys on it).  The plan and the passes are the C core's
(csrc/api_custom.c, plan_custom.c, custom.c).
"""
import re
import warnings

import numpy as np

from . import _complex as _cx, _core
from . import _elementwise as _ew  # its bound empty()

_CL = {"bool": "uchar", "int8": "char", "uint8": "uchar", "int16": "short",
       "uint16": "ushort", "int32": "int", "uint32": "uint", "int64": "long",
       "uint64": "ulong", "float32": "float", "float64": "double",
       "complex64": "float2", "complex128": "double2"}
# complex elements: OpenCL vectors (.x real part, .y imaginary part), read
# and written through the arrays' real views (the C core holds no complex
# dtype); their real component's type
_CX_PART = {"complex64": "float", "complex128": "double"}
_C_NAMES = {"float": "float32", "double": "float64", "int": "int32",
            "uint": "uint32", "long": "int64", "ulong": "uint64",
            "short": "int16", "ushort": "uint16", "char": "int8",
            "uchar": "uint8", "bool": "bool", "float2": "complex64",
            "double2": "complex128"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = {"a", "b", "gr_s", "gr_i", "gr_L", "gr_M", "outv", "outx", "at"}


def _dtype_name(word):
    """The dtype a parameter's TYPE names (a NumPy name such as float32 or
    an OpenCL C one such as float), or None: a type placeholder."""
    if word in _C_NAMES:
        return np.dtype(_C_NAMES[word])
    if word in _CL:
        return np.dtype(word)
    return None


class _Param:
    __slots__ = ("name", "type", "dtype")

    def __init__(self, text):
        words = text.split()
        if len(words) != 2 or not all(_IDENT.match(w) for w in words):
            raise ValueError("bad parameter %r: expected 'TYPE name' (no "
                             "'raw' parameters)" % text.strip())
        self.type, self.name = words
        if self.name in _RESERVED or self.name.startswith("gr_") or \
                self.name.startswith("GR_"):
            raise ValueError("parameter name %r is reserved" % self.name)
        self.dtype = _dtype_name(self.type)


def _params(text):
    ps = [_Param(t) for t in text.split(",") if t.strip()]
    if len({p.name for p in ps}) != len(ps):
        raise ValueError("duplicate parameter names in %r" % text)
    return ps


def _one_line(expr):
    return " ".join(str(expr).split())


def _options(options):
    """options= (OpenCL build options, as CuPy's: a tuple or list of
    strings) as one string, appended to the program's build options and
    part of the program cache's key.  gpured picks the OpenCL C version
    its kernels need: -cl-std= is refused."""
    if options is None:
        return ""
    if isinstance(options, (str, bytes)) or \
            not isinstance(options, (tuple, list)):
        raise TypeError("options= is a tuple or list of strings, e.g. "
                        "('-DSCALE=3',) (got %r)" % (options,))
    for o in options:
        if not isinstance(o, str):
            raise TypeError("options= takes strings (got %r)" % (o,))
        if "\n" in o or "\0" in o or "\r" in o:
            raise ValueError("an option may not hold a line break or NUL: "
                             "%r" % o)
        if "-cl-std" in o:
            raise ValueError("options=: gpured chooses the OpenCL C "
                             "version (%r refused)" % o)
    text = " ".join(o.strip() for o in options if o.strip())
    if len(text) > 1000:
        raise ValueError("options= is too long (%d characters; at most "
                         "1000)" % len(text))
    return text


def _is_array(x):
    return isinstance(x, _core.ArrayBase)


def _is_scalar(x):
    return not _is_array(x) and np.ndim(x) == 0 and not isinstance(x, np.ndarray)


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    axs = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axs:
        a = int(a)
        if not -nd <= a < nd:
            raise np.exceptions.AxisError(a, nd)
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def _device_of(args):
    for x in args:
        if _is_array(x):
            return x.device_index
    return None


class _Layout:
    """The broadcast shape, the reduced (R) and kept (K) axes, and whether
    the inputs lie as rows (reduced axes last: seg_stride L, elem_stride
    1) or columns (reduced axes first: seg_stride 1, elem_stride M)."""

    def __init__(self, shape, axis):
        self.shape = tuple(shape)
        nd = len(self.shape)
        self.R = _axes(axis, nd)
        self.K = tuple(i for i in range(nd) if i not in self.R)
        self.M = int(np.prod([self.shape[i] for i in self.K], dtype=np.int64))
        self.L = int(np.prod([self.shape[i] for i in self.R], dtype=np.int64))
        self.cols = bool(self.K) and bool(self.R) and \
            self.R == tuple(range(len(self.R)))
        self.perm = tuple(range(nd)) if self.cols else self.K + self.R

    def strides(self):
        if self.cols:
            return (1, self.M)
        return (self.L, 1)

    def out_shape(self, keepdims):
        if keepdims:
            return tuple(1 if i in self.R else n
                         for i, n in enumerate(self.shape))
        return tuple(self.shape[i] for i in self.K)


def _place(x, dt, lay, dev):
    """Input x as a device Array of dtype dt whose elements lie as lay
    says (C-contiguous in lay.perm's order of the broadcast shape)."""
    if _is_array(x) and x.dtype == dt and x.shape == lay.shape and \
            x.is_c_contiguous and (lay.cols or lay.R == tuple(
                range(len(lay.K), len(lay.shape)))):
        return x  # already laid out (the common case: nothing to do)
    if not _is_array(x):
        h = np.broadcast_to(np.asarray(x, dtype=dt), lay.shape)
        h = np.ascontiguousarray(h.transpose(lay.perm))
        return _core.to_device(h, None, dev)
    if x.dtype != dt:
        x = x.astype(dt)
    if x.shape != lay.shape:
        # a broadcast view (0 strides), copied below
        x = x._from_shadow(np.broadcast_to(x._sh(), lay.shape))
    if lay.perm != tuple(range(len(lay.shape))):
        x = x.transpose(lay.perm)
    if not x.is_c_contiguous:
        x = x.copy()
    return x


class ReductionKernel:
    """A user-defined reduction, CuPy's ``ReductionKernel`` in OpenCL C::

        l2 = gpured.ReductionKernel("T x", "T y", "x * x", "a + b",
                                    "y = sqrt(a)", "0", "l2norm")
        l2(a)                 # a NumPy array or a gpured.Array
        l2(a, axis=1, keepdims=True)

    ``in_params``/``out_params``: ``"TYPE name"`` lists; a TYPE that is no
    dtype name (``T``, ``U``...) is a placeholder bound from the arguments'
    dtypes.  ``map_expr`` reads the inputs' elements by name, ``reduce_expr``
    merges ``a`` and ``b``, ``post_map_expr`` writes the output from ``a``
    (``_in_ind.size()``, ``_out_ind.size()``: elements per result and
    results), ``identity`` starts a reduction.  ``reduce_type``: the
    accumulator's type (default the output's).  ``options``: OpenCL build
    options, a tuple of strings such as ``("-DSCALE=3",)`` (part of the
    program cache's key).  The operator must be
    associative; it runs on every variant of the ladder that is legal for
    any associative operator (:meth:`variants`).
    """

    def __init__(self, in_params, out_params, map_expr, reduce_expr,
                 post_map_expr, identity, name="reduce_kernel",
                 reduce_type=None, preamble="", options=None, *,
                 _state=None):
        self.in_params = _params(in_params)
        self.out_params = _params(out_params)
        if len(self.out_params) != 1:
            raise ValueError("a ReductionKernel has one output parameter")
        if not self.in_params:
            raise ValueError("a ReductionKernel needs an input parameter")
        if identity is None:
            raise ValueError("a ReductionKernel needs an identity")
        self.map_expr = _one_line(map_expr)
        self.reduce_expr = _one_line(reduce_expr)
        self.post_map_expr = _one_line(post_map_expr)
        self.identity = _one_line(identity)
        self.name = name
        self.reduce_type = reduce_type
        self.preamble = preamble or ""
        self._opts = _options(options)
        self.options = tuple(options or ())
        self._state = _state  # built-ins: a two-part state (logsumexp)
        self._variant = None  # tune()'s winner
        self._memo = {}  # _source's, by the arguments' dtypes

    def _knobs(self, knobs):
        if self._variant is not None and "variant" not in knobs:
            knobs = dict(knobs, variant=self._variant)
        return knobs or None

    # -------------------------------------------------------- types
    def _bind(self, args, out):
        if len(args) != len(self.in_params):
            raise TypeError("%s takes %d inputs (%d given)"
                            % (self.name, len(self.in_params), len(args)))
        tmap = {}
        for p, x in zip(self.in_params, args):
            if p.dtype is None and not _is_scalar(x):
                dt = np.dtype(x.dtype) if _is_array(x) else np.asarray(x).dtype
                if tmap.setdefault(p.type, dt) != dt:
                    raise TypeError("type mismatch for %s: %s and %s"
                                    % (p.type, tmap[p.type], dt))
        for p, x in zip(self.in_params, args):
            if p.dtype is None and p.type not in tmap:
                tmap[p.type] = np.asarray(x).dtype
        o = self.out_params[0]
        if o.dtype is None and o.type not in tmap:
            if out is None:
                raise TypeError("cannot resolve the output type %s" % o.type)
            tmap[o.type] = np.dtype(out.dtype)
        for dt in tmap.values():
            if dt.name not in _CL:
                raise TypeError("user kernels take bool, integer, float "
                                "and complex types (not %s)" % dt)
        ins = [p.dtype if p.dtype is not None else tmap[p.type]
               for p in self.in_params]
        rt = o.dtype if o.dtype is not None else tmap[o.type]
        if self.reduce_type is None:
            at = rt
        else:
            at = _dtype_name(self.reduce_type) or tmap.get(self.reduce_type)
            if at is None:
                raise TypeError("cannot resolve reduce_type %s"
                                % self.reduce_type)
        return tmap, ins, rt, np.dtype(at)

    # -------------------------------------------------------- source
    def _user(self, tmap, ins, rt, at, scal):
        """kernels/custom.cl's GR_USER_* defines for these types."""
        fp64 = any(dt in (np.float64, np.complex128)
                   for dt in list(ins) + [rt, at]) or \
            "double" in self.preamble
        lines = []
        if fp64:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        for k in sorted(tmap):
            lines.append("typedef %s %s;" % (_CL[tmap[k].name], k))
        if self.preamble:
            lines.append(self.preamble)
        params, argn, loads, vloads, lanes = [], [], [], [], []
        for j, (p, dt) in enumerate(zip(self.in_params, ins)):
            cl = _CL[dt.name]
            if scal[j]:
                # by value, under a name no kernel local has
                params.append("const %s gr_s%d," % (cl, j))
                argn.append("gr_s%d," % j)
                loads.append("const %s %s = gr_s%d;" % (cl, p.name, j))
                vloads.append("const %s %s = gr_s%d;" % (cl, p.name, j))
                continue
            argn.append("gr_in%d, gr_o%d," % (j, j))
            if dt.kind == "c":
                # the real view's buffer and offset (in parts); the
                # elements as vectors (complex arrays are aligned to them)
                params.append("__global const %s *restrict gr_in%d, ulong "
                              "gr_o%d," % (_CX_PART[dt.name], j, j))
                at_ = "((__global const %s *)(gr_in%d + gr_o%d))" % (cl, j, j)
                loads.append("const %s %s = %s[gr_i_];" % (cl, p.name, at_))
                vloads.append("%s gr_l%d[GR_VW]; for (int gr_v_ = 0; gr_v_ < "
                              "GR_VW; ++gr_v_) { gr_l%d[gr_v_] = %s[(gr_i_) "
                              "+ gr_v_]; }" % (cl, j, j, at_))
                lanes.append("const %s %s = gr_l%d[gr_l_];" % (cl, p.name, j))
                continue
            params.append("__global const %s *restrict gr_in%d, ulong gr_o%d,"
                          % (cl, j, j))
            loads.append("const %s %s = gr_in%d[gr_o%d + (gr_i_)];"
                         % (cl, p.name, j, j))
            vloads.append("%s gr_l%d[GR_VW]; GR_CAT(vstore, GR_VW)(GR_VLOAD("
                          "gr_in%d + gr_o%d + (gr_i_)), 0, gr_l%d);"
                          % (cl, j, j, j, j))
            lanes.append("const %s %s = gr_l%d[gr_l_];" % (cl, p.name, j))
        o = self.out_params[0].name
        post = self.post_map_expr.replace("_in_ind.size()", "gr_L") \
            .replace("_out_ind.size()", "gr_M")
        d = ["#define GR_USER_PARAMS " + " ".join(params),
             "#define GR_USER_ARGS " + " ".join(argn),
             "#define GR_USER_LOADS(gr_i_) " + " ".join(loads),
             "#define GR_USER_VLOADS(gr_i_) " + " ".join(vloads),
             "#define GR_USER_LANE(gr_l_) " + " ".join(lanes),
             "#define GR_USER_MAP (%s)" % self.map_expr,
             "#define GR_USER_OUT %s" % o]
        if self._state is None:
            d += ["#define GR_USER_X 0",
                  "#define GR_USER_IDENT (%s)" % self.identity,
                  "#define GR_USER_IDENT_X 0",
                  "#define GR_USER_MERGE(gr_pa, gr_pb) do { gr_state *gr_p_ "
                  "= (gr_pa); const gr_state gr_q_ = (gr_pb); { const GR_A a "
                  "= gr_p_->v; const GR_A b = gr_q_.v; gr_p_->v = (GR_A)(%s);"
                  " } } while (0)" % self.reduce_expr,
                  "#define GR_USER_POST { const GR_A a = gr_s.v; %s; }"
                  % post]
        else:
            d += self._state
        return "\n".join(lines + d) + "\n", fp64

    # -------------------------------------------------------- calls
    def _source(self, args, out):
        """(user text, types, input dtypes, result dtype, scalar flags),
        memoised by the arguments' dtypes (the per-call cost)."""
        scal = tuple(_is_scalar(x) for x in args)
        key = (tuple(None if s else np.dtype(getattr(x, "dtype", None) or
                                             np.asarray(x).dtype)
                     for x, s in zip(args, scal)), scal,
               None if out is None else np.dtype(out.dtype))
        hit = self._memo.get(key) if None not in key[0] or all(scal) else None
        if hit is not None:
            return hit
        tmap, ins, rt, at = self._bind(args, out)
        user, fp64 = self._user(tmap, ins, rt, at, scal)
        a_size = at.itemsize
        x_size = a_size if self._state is not None else 0
        in_size = max([min(dt.itemsize, 8) for dt, s in zip(ins, scal)
                       if not s] or [4])
        types = (_CL[at.name], _CL[rt.name], a_size, x_size,
                 int(at.kind == "f"), in_size, int(fp64), self._opts)
        hit = (user, types, ins, rt, scal)
        if len(self._memo) < 64:
            self._memo[key] = hit
        return hit

    def _prepare(self, args, axis, keepdims, out):
        user, types, ins, rt, scal = self._source(args, out)
        shapes = [np.shape(x) if not _is_array(x) else x.shape
                  for x, s in zip(args, scal) if not s]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        lay = _Layout(shape, axis)
        dev = _device_of(args)
        placed, uargs = [], []
        for x, dt, s in zip(args, ins, scal):
            if s:
                uargs.append(np.asarray(x, dtype=dt).tobytes())
                continue
            a = _place(x, dt, lay, dev)
            dev = a.device_index
            placed.append(a)
            uargs.append(a)
        if dev is None:
            dev = _core.to_device(np.zeros(1, np.uint8), None, None).device_index
        res = _ew._bound["empty"]((lay.M,), rt, device=dev)
        layout = (lay.M, lay.L) + lay.strides()
        return user, tuple(uargs), res, layout, types, lay, placed

    @staticmethod
    def _c(uargs, res):
        """The C core's view of the arguments: complex Arrays as their
        real views (the kernel reads vectors at the same bytes; a fresh
        result's offset is 0 in either unit)."""
        return (tuple(_cx.real(a) if _is_array(a) and a.dtype.kind == "c"
                      else a for a in uargs),
                _cx.real(res) if res.dtype.kind == "c" else res)

    def __call__(self, *args, axis=None, keepdims=False, out=None, **knobs):
        """Reduce the inputs (broadcast against each other) over ``axis``
        (None: all); a device Array if any input is one, else NumPy."""
        user, uargs, res, layout, types, lay, _ = self._prepare(
            args, axis, keepdims, out)
        _core.custom_reduce(user, *self._c(uargs, res), layout, types,
                            self._knobs(knobs), 0)
        shape = lay.out_shape(keepdims)
        res = res.reshape(shape) if shape != res.shape else res
        if out is not None:
            return _to_out(res, out)
        if any(_is_array(x) for x in args):
            return res
        h = res.get()
        return h[()] if h.ndim == 0 else h

    def explain(self, *args, axis=None, **knobs):
        """The plan a call would run (a dict; nothing runs)."""
        user, uargs, res, layout, types, _, _ = self._prepare(
            args, axis, False, None)
        return _core.custom_reduce(user, *self._c(uargs, res), layout, types,
                                   self._knobs(knobs), 1)

    def timeit(self, *args, axis=None, reps=10, **knobs):
        """Time a call on the device (inputs placed once, one warm-up run,
        then ``reps`` runs; OpenCL profiling events), as
        :func:`gpured.timeit`: seconds (median), gbps (input bytes read /
        seconds), times, plan, result."""
        user, uargs, res, layout, types, lay, placed = self._prepare(
            args, axis, False, None)
        times, plan = [], None
        for _ in range(max(1, int(reps)) + 1):
            t, plan = _core.custom_reduce(user, *self._c(uargs, res), layout,
                                          types, self._knobs(knobs), 2)
            times.append(t / 1e9)
        times = times[1:]
        sec = sorted(times)[len(times) // 2]
        nbytes = sum(a.nbytes for a in placed)
        return {"seconds": sec,
                "gbps": nbytes / sec / 1e9 if sec > 0 else float("inf"),
                "times": times, "plan": plan, "result": res}

    @staticmethod
    def variants():
        """The variants a user-defined operator may run (``variant=``)."""
        return _core.custom_variants()

    def tune(self, *args, axis=None, reps=5):
        """Time every variant available here on these arguments; the
        fastest becomes this kernel's default variant (a call's own
        ``variant=`` still wins).  Returns {variant: median seconds}
        (unavailable ones left out)."""
        found = {}
        for v in self.variants():
            if v == "auto":
                continue
            try:
                found[v] = self.timeit(*args, axis=axis, reps=reps,
                                       variant=v)["seconds"]
            except (_core.VariantUnavailable, ValueError):
                continue
        if found:
            self._variant = min(found, key=found.get)
        return found


class ScanKernel:
    """A user-defined prefix scan of one input (OpenCL C expressions)::

        cummax = gpured.ScanKernel("T x", "T y", "x", "max(a, b)",
                                   "-INFINITY", "cummax")
        cummax(a)                       # flattened, as numpy's cum* do
        cummax(m, axis=1, exclusive=True)

    ``map_expr`` reads the element by the input's name, ``scan_expr``
    merges ``a`` (the prefix) and ``b`` (associative, the order kept),
    ``identity`` is the exclusive scan's first value; the output is the
    scanned state in the output's type.  ``scan_type``: the state's type
    (default the output's).  It runs through kernels/scan.cl, the scans'
    policy and ladder (decoupled look-back on GPUs) with the operator
    injected; the group scans that are built-ins of add/min/max only
    (``workgroup``, ``subgroup`` through sub_group_scan_*) are not used.
    ``options``: OpenCL build options (as :class:`ReductionKernel`'s).
    :meth:`by_key` scans within runs of equal consecutive keys.
    """

    def __init__(self, in_params, out_params, map_expr, scan_expr, identity,
                 name="scan_kernel", scan_type=None, preamble="",
                 options=None):
        self.in_params = _params(in_params)
        self.out_params = _params(out_params)
        if len(self.in_params) != 1 or len(self.out_params) != 1:
            raise ValueError("a ScanKernel has one input and one output "
                             "parameter")
        self.map_expr = _one_line(map_expr)
        self.scan_expr = _one_line(scan_expr)
        self.identity = _one_line(identity)
        self.name = name
        self.scan_type = scan_type
        self.preamble = preamble or ""
        self._opts = _options(options)
        self.options = tuple(options or ())

    def _types(self, x):
        p, o = self.in_params[0], self.out_params[0]
        dt = np.dtype(x.dtype) if _is_array(x) else np.asarray(x).dtype
        tmap = {}
        if p.dtype is None:
            tmap[p.type] = dt
        it = p.dtype if p.dtype is not None else dt
        rt = o.dtype if o.dtype is not None else tmap.get(o.type)
        if rt is None:
            raise TypeError("cannot resolve the output type %s" % o.type)
        at = rt if self.scan_type is None else \
            (_dtype_name(self.scan_type) or tmap.get(self.scan_type))
        if at is None:
            raise TypeError("cannot resolve scan_type %s" % self.scan_type)
        for d in (it, rt, at):
            if d.name not in _CL:
                raise TypeError("user kernels take bool, integer, float "
                                "and complex types (not %s)" % d)
        return tmap, np.dtype(it), np.dtype(rt), np.dtype(at)

    def _head(self, tmap, it, rt, at):
        lines = []
        if any(d in (np.float64, np.complex128) for d in (it, rt, at)) or \
                "double" in self.preamble:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        for k in sorted(tmap):
            lines.append("typedef %s %s;" % (_CL[tmap[k].name], k))
        if self.preamble:
            lines.append(self.preamble)
        return lines

    def _user(self, tmap, it, rt, at):
        lines = self._head(tmap, it, rt, at)
        lines += [
            "inline %s gr_user_map1(%s %s) { return (%s)(%s); }"
            % (_CL[at.name], _CL[it.name], self.in_params[0].name,
               _CL[at.name], self.map_expr),
            "#define GR_USER_X 0",
            "#define GR_USER_IDENT (%s)" % self.identity,
            "#define GR_USER_IDENT_X 0",
            "#define GR_USER_MERGE(gr_pa, gr_pb) do { gr_state *gr_p_ = "
            "(gr_pa); const gr_state gr_q_ = (gr_pb); { const GR_A a = "
            "gr_p_->v; const GR_A b = gr_q_.v; gr_p_->v = (GR_A)(%s); } } "
            "while (0)" % self.scan_expr]
        # complex input / output: the C core plans for (and names) the real
        # part's type; the kernel reads and writes whole vectors, one an
        # element (no wider vector loads of them)
        for macro, size, vw, d in (("GR_T", "GR_T_SIZE", "GR_MV", it),
                                   ("GR_R", "GR_R_SIZE", "GR_MVR", rt)):
            if d.kind == "c":
                lines += ["#undef %s" % m for m in (macro, size, vw)]
                lines += ["#define %s %s" % (macro, _CL[d.name]),
                          "#define %s %d" % (size, d.itemsize),
                          "#define %s 1" % vw]
        return "\n".join(lines) + "\n"

    def _prepare(self, x, axis):
        tmap, it, rt, at = self._types(x)
        if axis is None:
            x = x.reshape(-1) if _is_array(x) else np.ravel(x)
            axis = 0
        nd = len(x.shape) if _is_array(x) else np.ndim(x)
        if nd == 0:
            raise ValueError("a ScanKernel scans an array (0-d given)")
        ax = _axes(axis, nd)[0]
        if not _is_array(x):
            x = _core.to_device(np.ascontiguousarray(
                np.moveaxis(np.asarray(x, dtype=it), ax, -1)), None, None)
        else:
            if x.dtype != it:
                x = x.astype(it)
            x = x.transpose(tuple(i for i in range(nd) if i != ax) + (ax,))
            if not x.is_c_contiguous or (it.kind == "c" and x.offset):
                x = x.copy()  # (complex: the C core's offset is in parts)
        L = x.shape[-1]
        M = int(np.prod(x.shape[:-1], dtype=np.int64))
        res = _ew._bound["empty"](x.shape, rt, device=x.device_index)
        types = (_cx.real_dtype(it) if it.kind == "c" else it,
                 _cx.real_dtype(rt) if rt.kind == "c" else rt,
                 _CL[at.name], at.itemsize, 0, self._opts)
        return (self._user(tmap, it, rt, at), x, res, (M, L, L, 1), (L, 1),
                types, ax)

    @staticmethod
    def _c(x, res):
        """Complex Arrays as their real views (offset 0: _prepare's)."""
        return tuple(_cx.real(a) if a.dtype.kind == "c" else a
                     for a in (x, res))

    def __call__(self, x, axis=None, exclusive=False, out=None, **knobs):
        """The scan of x along axis (None: flattened); a device Array for a
        device input, else NumPy."""
        host = not _is_array(x)
        user, xd, res, lay, ostr, types, ax = self._prepare(x, axis)
        if lay[0] * lay[1]:
            _core.custom_scan(user, *self._c(xd, res), lay, ostr, types,
                              bool(exclusive), knobs or None, 0)
        nd = len(res.shape)
        back = list(range(nd - 1))
        back.insert(ax, nd - 1)
        res = res.transpose(tuple(back)) if back != list(range(nd)) else res
        if out is not None:
            return _to_out(res, out)
        return res.get() if host else res

    def explain(self, x, axis=None, exclusive=False, **knobs):
        user, xd, res, lay, ostr, types, _ = self._prepare(x, axis)
        return _core.custom_scan(user, *self._c(xd, res), lay, ostr, types,
                                 bool(exclusive), knobs or None, 1)

    def timeit(self, x, axis=None, exclusive=False, reps=10, **knobs):
        """As :meth:`ReductionKernel.timeit` (gbps: bytes read and
        written)."""
        user, xd, res, lay, ostr, types, _ = self._prepare(x, axis)
        times, plan = [], None
        for _ in range(max(1, int(reps)) + 1):
            t, plan = _core.custom_scan(user, *self._c(xd, res), lay, ostr,
                                        types, bool(exclusive), knobs or None,
                                        2)
            times.append(t / 1e9)
        times = times[1:]
        sec = sorted(times)[len(times) // 2]
        nbytes = xd.nbytes + res.nbytes
        return {"seconds": sec,
                "gbps": nbytes / sec / 1e9 if sec > 0 else float("inf"),
                "times": times, "plan": plan, "result": res}

    # ---------------------------------------------------- by key
    def _user_by_key(self, tmap, it, rt, at):
        """The (flag, value) state of a keyed scan: elements are packed
        uint64 words (_pack_keyed), bit 32 the run-start flag, bit 33 "the
        identity" (an exclusive scan's run start), the input's bits below.
        Merge: (fa, a) + (fb, b) = (fa | fb, fb ? b : a op b)."""
        a_cl, i_cl = _CL[at.name], _CL[it.name]
        lines = self._head(tmap, it, rt, at)
        lines += [
            "inline %s gr_user_map1(ulong gr_p) { const %s %s = %s; "
            "return (%s)(%s); }"
            % (a_cl, i_cl, self.in_params[0].name, _UNPACK[it.name] % "gr_p",
               a_cl, self.map_expr),
            "#define GR_USER_X 1",
            "#define GR_USER_IDENT (%s)" % self.identity,
            "#define GR_USER_IDENT_X 0",
            "#define GR_USER_ELEM(gr_e, gr_p) do { (gr_e).x = (GR_X)"
            "(((gr_p) >> 32) & 1); (gr_e).v = (((gr_p) >> 33) & 1) ? "
            "(GR_A)(GR_USER_IDENT) : gr_user_map1(gr_p); } while (0)",
            "#define GR_USER_MERGE(gr_pa, gr_pb) do { gr_state *gr_p_ = "
            "(gr_pa); const gr_state gr_q_ = (gr_pb); if (gr_q_.x != "
            "(GR_X)0) { gr_p_->v = gr_q_.v; gr_p_->x = (GR_X)1; } else { "
            "const GR_A a = gr_p_->v; const GR_A b = gr_q_.v; gr_p_->v = "
            "(GR_A)(%s); } } while (0)" % self.scan_expr]
        return "\n".join(lines) + "\n"

    def _prepare_by_key(self, keys, x, exclusive):
        if np.ndim(x) != 1 or np.ndim(keys) != 1:
            raise ValueError("ScanKernel.by_key takes 1-d keys and values "
                             "(got %d-d and %d-d)" % (np.ndim(keys),
                                                      np.ndim(x)))
        n = (x.shape if _is_array(x) else np.shape(x))[0]
        if (keys.shape if _is_array(keys) else np.shape(keys))[0] != n:
            raise ValueError("keys and values differ in length")
        kt = np.dtype(keys.dtype if _is_array(keys) else
                      np.asarray(keys).dtype)
        if kt.kind not in "iu":
            raise TypeError("ScanKernel.by_key: keys of an integer dtype "
                            "(not %s)" % kt)
        tmap, it, rt, at = self._types(x)
        if it.itemsize > 4:
            raise TypeError("ScanKernel.by_key: inputs of at most 4 bytes "
                            "(a packed (flag, element) word; not %s)" % it)
        dev = _device_of((keys, x))
        if not _is_array(x):
            x = _core.to_device(np.asarray(x, dtype=it), None, dev)
        elif x.dtype != it:
            x = x.astype(it)
        if not _is_array(keys):
            keys = _core.to_device(np.asarray(keys), None, x.device_index)
        x = x if x.is_c_contiguous else x.copy()
        keys = keys if keys.is_c_contiguous else keys.copy()
        res = _ew._bound["empty"]((n,), rt, device=x.device_index)
        if n == 0:
            return None, None, res, None
        packed = _pack_keyed(keys, x, kt, it, bool(exclusive))
        types = (np.dtype(np.uint64), rt, _CL[at.name], at.itemsize,
                 at.itemsize, self._opts)
        return self._user_by_key(tmap, it, rt, at), packed, res, types

    def by_key(self, keys, x, exclusive=False, out=None, **knobs):
        """The scan of the 1-d ``x`` within runs of equal consecutive
        ``keys`` (integers, the same length), as
        ``thrust::inclusive_scan_by_key`` / ``exclusive_scan_by_key`` and
        :func:`gpured.scan_by_key` for built-in operators: each run starts
        afresh (an exclusive scan from the identity).  One single-pass
        scan of (run-start flag, value) states, after one pass that packs
        each element with its flag (inputs of at most 4 bytes).  A device
        Array if either input is one, else NumPy."""
        host = not _is_array(x) and not _is_array(keys)
        user, packed, res, types = self._prepare_by_key(keys, x, exclusive)
        n = res.shape[0]
        if n:
            _core.custom_scan(user, packed, res, (1, n, n, 1), (n, 1), types,
                              False, knobs or None, 0)
        if out is not None:
            return _to_out(res, out)
        return res.get() if host else res

    def explain_by_key(self, keys, x, exclusive=False, **knobs):
        """The plan :meth:`by_key` would run (its scan; the packing pass
        first)."""
        user, packed, res, types = self._prepare_by_key(keys, x, exclusive)
        n = res.shape[0]
        if not n:
            return {"variant": "empty", "why": "no elements"}
        return _core.custom_scan(user, packed, res, (1, n, n, 1), (n, 1),
                                 types, False, knobs or None, 1)

    @staticmethod
    def variants():
        """The scans' variants (``workgroup`` and, off NVIDIA,
        ``subgroup`` raise VariantUnavailable for a user operator)."""
        return list(_core.variants("cumsum", "float32", None))


# ScanKernel.by_key's packed elements: the input's bits in the low 32 bits
# of a uint64 word (_PACK: the element -> uint; _UNPACK: back).
_PACK = {"float32": "as_uint(%s)", "int32": "(uint)(%s)",
         "uint32": "(uint)(%s)", "int16": "(ushort)(%s)",
         "uint16": "(ushort)(%s)", "int8": "(uchar)(%s)",
         "uint8": "(uchar)(%s)", "bool": "(uchar)(%s)"}
_UNPACK = {"float32": "as_float((uint)(%s))", "int32": "(int)(uint)(%s)",
           "uint32": "(uint)(%s)", "int16": "(short)(ushort)(%s)",
           "uint16": "(ushort)(%s)", "int8": "(char)(uchar)(%s)",
           "uint8": "(uchar)(%s)", "bool": "(uchar)(%s)"}


def _packer(kt, it):
    """The packing pass as a ReductionKernel of one-element segments:
    word i from keys[i], keys[i-1] (kp), x[i] (x[i-1] for an exclusive
    scan, e, whose run starts read the identity) and f (1: element 0,
    where a run always starts).  One program per (keys, input) dtypes."""
    bits = "(ulong)" + _PACK[it.name] % "x"
    expr = ("((f || k != kp) ? (e ? ((ulong)3 << 32) : (((ulong)1 << 32) | "
            "%s)) : %s)" % (bits, bits))
    return _builtin(("pack", kt.name, it.name), lambda: ReductionKernel(
        "%s k, %s kp, %s x, int32 e, int32 f" % (kt.name, kt.name, it.name),
        "uint64 z", expr, "b", "z = a", "0", "gr_pack_keyed",
        reduce_type="uint64"))


def _pack_keyed(keys, x, kt, it, exclusive):
    """ScanKernel.by_key's elements: (flag, identity?, bits) words, on
    the device, through one-element-segment ReductionKernel calls (views:
    nothing copied): element 0, then the others."""
    n = x.shape[0]
    packed = _ew._bound["empty"]((n,), np.uint64, device=x.device_index)
    seg = {"variant": "segment_per_item"}
    k = _packer(kt, it)
    e = np.int32(bool(exclusive))
    calls = [((keys[:1], keys[:1], x[:1], e, np.int32(1)), packed[:1])]
    if n > 1:
        calls.append(((keys[1:], keys[:-1], x[:-1] if exclusive else x[1:],
                       e, np.int32(0)), packed[1:]))
    for args, dst in calls:
        user, types, _, _, _ = k._source(args, None)
        uargs = tuple(a.tobytes() if s else a
                      for a, s in zip(args, (0, 0, 0, 1, 1)))
        m = dst.shape[0]
        _core.custom_reduce(user, uargs, dst, (m, 1, 1, 1), types, seg, 0)
    return packed


def _to_out(res, out):
    if _is_array(out):
        if out.shape != res.shape:
            raise ValueError("out has shape %s, the result %s"
                             % (out.shape, res.shape))
        _cx.dcopy(res, out)
        return out
    np.copyto(out, res.get() if _is_array(res) else res, casting="unsafe")
    return out


# ------------------------------------------------------------ built-ins

_KCACHE = {}


def _builtin(key, make):
    k = _KCACHE.get(key)
    if k is None:
        k = _KCACHE[key] = make()
    return k


def _device_fp64(args):
    dev = _device_of(args)
    info = _core.devices()[dev] if dev is not None else _core.get_device()
    return bool(info.get("fp64"))


def dot(a, b, out=None, **knobs):
    """NumPy's ``dot`` of two 1-d arrays (NumPy's result dtype), fused: one
    read of each, no product array.  float32 accumulates in float64 where
    the device has it (as gpured.sum)."""
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise ValueError("gpured.dot takes two 1-d arrays (got %d-d and "
                         "%d-d)" % (np.ndim(a), np.ndim(b)))
    if np.shape(a)[0] != np.shape(b)[0]:
        raise ValueError("shapes %s and %s not aligned"
                         % (np.shape(a), np.shape(b)))
    rt = np.result_type(a.dtype if hasattr(a, "dtype") else np.asarray(a),
                        b.dtype if hasattr(b, "dtype") else np.asarray(b))
    if rt.kind == "c":
        res = _cx_dot(a, b, rt, False, knobs)
        return _to_out(res, out) if out is not None else res
    if rt == np.bool_:
        k = _builtin("dot_bool", lambda: ReductionKernel(
            "bool x, bool y", "bool z", "(x && y)", "(a || b)",
            "z = a", "0", "gr_dot"))
    else:
        acc = "float64" if rt == np.float32 and _device_fp64((a, b)) else \
            rt.name
        k = _builtin(("dot", rt.name, acc), lambda: ReductionKernel(
            "%s x, %s y" % (rt.name, rt.name), "%s z" % rt.name,
            "(%s)x * (%s)y" % (_CL[acc], _CL[acc]), "a + b", "z = a", "0",
            "gr_dot", reduce_type=acc))
    res = k(a, b, **knobs)
    if out is not None:
        return _to_out(res, out)
    return res


def vdot(a, b, **knobs):
    """NumPy's ``vdot``: the dot of the flattened inputs, ``a``
    conjugated where it is complex."""
    a, b = _flat(a), _flat(b)
    rt = np.result_type(_dtype(a), _dtype(b))
    if rt.kind == "c":
        if a.shape[0] != b.shape[0]:
            raise ValueError("vectors have different lengths")
        return _cx_dot(a, b, rt, True, knobs)
    return dot(a, b, **knobs)


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


def _cx_dot(a, b, ct, conj, knobs):
    """A complex dot as four real dots of the parts (strided views of the
    real view, no copy of a complex operand): re = ar.br -+ ai.bi, im =
    ar.bi +- ai.br (- and + for a conjugated a).  Each real dot
    accumulates as gpured.dot does (float32 in float64 where the device
    has it): at least as accurate as NumPy's complex loop."""
    parts = []
    for x in (a, b):
        if not _is_array(x):
            x = np.asarray(x)
        if _dtype(x) != ct:
            x = x.astype(ct)
        v = _cx.real(x)
        parts.append((v[:, 0], v[:, 1]))
    (ar, ai), (br, bi) = parts
    rr, ii = dot(ar, br, **knobs), dot(ai, bi, **knobs)
    ri, ir = dot(ar, bi, **knobs), dot(ai, br, **knobs)
    re, im = (rr + ii, ri - ir) if conj else (rr - ii, ri + ir)
    if _is_array(re):
        return _cx._pair(re, im)
    return ct.type(complex(re, im))


def _flat(x):
    if _is_array(x):
        return x.reshape(-1) if x.is_c_contiguous else x.copy().reshape(-1)
    return np.ravel(x)


# logsumexp's state: (m, s), the running maximum and the sum of
# exp(element - m).  Merge: one exp of the smaller maximum minus the larger
# (1 where they are equal: both infinite of one sign); a NaN maximum stays.
_LSE_STATE = [
    "#define GR_USER_X 1",
    "#define GR_USER_IDENT (-INFINITY)",
    "#define GR_USER_IDENT_X 0",
    "#define GR_USER_ELEM_X 1",
    "#define GR_USER_MERGE(gr_pa, gr_pb) do { gr_state *p_ = (gr_pa); "
    "const gr_state q_ = (gr_pb); const GR_A m1_ = p_->v, m2_ = q_.v; "
    "const int f_ = m1_ >= m2_; const GR_A hi_ = f_ ? m1_ : m2_; "
    "const GR_A lo_ = f_ ? m2_ : m1_; "
    "const GR_A e_ = m1_ == m2_ ? (GR_A)1 : exp(lo_ - hi_); "
    "p_->x = f_ ? p_->x + q_.x * e_ : p_->x * e_ + q_.x; "
    "p_->v = GR_ISNAN(m1_) ? m1_ : hi_; } while (0)",
    "#define GR_USER_POST { z = (GR_R)(gr_s.v + log(gr_s.x)); }",
]


def logsumexp(a, axis=None, keepdims=False, out=None, **knobs):
    """scipy.special.logsumexp(a, axis, keepdims): log(sum(exp(a))) without
    overflow, in one pass (the running maximum rides in the state).  -inf
    for an all -inf (or empty) slice, inf where an element is inf, NaN
    where one is NaN.  Float inputs keep their dtype, others give float64."""
    dt = np.dtype(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype)
    if dt.kind == "c":
        raise TypeError("gpured.logsumexp: complex dtypes are not "
                        "supported yet")
    rt = dt if dt in (np.float32, np.float64) else np.dtype(np.float64)
    k = _builtin(("lse", rt.name), lambda: ReductionKernel(
        "%s x" % rt.name, "%s z" % rt.name, "x", "a", "z = a", "0",
        "gr_logsumexp", _state=_LSE_STATE))
    if not _is_array(a):
        a = np.asarray(a, dtype=rt)
    elif a.dtype != rt:
        a = a.astype(rt)
    return k(a, axis=axis, keepdims=keepdims, out=out, **knobs)


# ------------------------------------------- complex products (issue 40)
#
# prod / nanprod / cumprod / nancumprod of complex64 / complex128 on the
# device: user kernels whose elements are OpenCL vectors (.x real, .y
# imaginary) and whose operator is NumPy's complex multiply, the plain
# formula (re = ar br - ai bi, im = ar bi + ai br: NumPy's too).  nan*: an
# element with a NaN part counts as 1+0j; where=: a masked-out one too.

def _cmul(a, b, cl):
    return ("(%s)(%s.x * %s.x - %s.y * %s.y, %s.x * %s.y + %s.y * %s.x)"
            % (cl, a, b, a, b, a, b, a, b))


def _cx_one(rt, v=1):
    return "(%s)(%d, 0)" % (_CL[rt.name], v) if rt.kind == "c" else \
        "(%s)%d" % (_CL[rt.name], v)


def _cx_op(rt):
    """The product of states a and b in the result's type (a real dtype=:
    NumPy casts the elements, dropping the imaginary parts)."""
    return _cmul("a", "b", _CL[rt.name]) if rt.kind == "c" else "a * b"


def _cx_map(it, rt, nan, where, ident=1):
    """The map of element x (and mask w): converted to the result's type,
    the identity (1; sums: 0) for a NaN element (nan) or a masked-out one
    (where)."""
    cl = _CL[rt.name]
    x = "x" if it == rt else "convert_%s(x)" % cl if rt.kind == "c" else \
        "(%s)(x.x)" % cl
    one = _cx_one(rt, ident)
    if nan:
        x = "((isnan(x.x) || isnan(x.y)) ? %s : %s)" % (one, x)
    if where:
        x = "(w ? %s : %s)" % (x, one)
    return x


def _cx_types(name, a, dtype, out):
    """(input dtype, result dtype), or None where NumPy's answer is not a
    complex product (a real dtype= or out=: NumPy's casting rules)."""
    it = np.dtype(_dtype(a))
    rt = np.dtype(dtype) if dtype is not None else \
        np.dtype(out.dtype) if out is not None else it
    if rt.kind not in "cfiu" or rt.name not in _CL or \
            (rt.kind != "c" and dtype is None):
        return None  # (a real out= without dtype=: NumPy's casting rule)
    if rt.kind != "c" and dtype is not None:
        warnings.warn("Casting complex values to real discards the "
                      "imaginary part", _cx._ComplexWarning, stacklevel=4)
    return it, rt


def _cx_host(name, a, kw, fn, **npkw):
    """What runs no kernel: NumPy's own answer for host input; for a
    device Array a TypeError (never a silent copy to the host)."""
    if _is_array(a) or any(_is_array(v) for v in npkw.values()):
        raise TypeError(
            "gpured.%s of a complex device Array with %s: no device kernel "
            "for this case; copy it to the host first (np.asarray(a)) to "
            "get NumPy's answer" % (name, ", ".join(
                "%s=%r" % (k, v) for k, v in sorted(npkw.items())
                if v is not None)))
    if kw:
        raise _core.VariantUnavailable(
            "gpured.%s of a complex array in this form runs on NumPy: the "
            "knobs %s do not apply" % (name, sorted(kw)))
    return fn(a, **npkw)


def _to_dev(a, kw):
    """A host input on device= (a knob of the reductions), else as given."""
    dev = kw.pop("device", None)
    if dev is not None and not _is_array(a):
        return _core.to_device(np.asarray(a), None, dev)
    return a


def cx_prod(a, axis, dtype, out, keepdims, initial, where, nan, kw):
    """prod / nanprod of complex a (gpured._reduce's complex branch)."""
    name = "nanprod" if nan else "prod"
    host = not _is_array(a)
    ts = _cx_types(name, a, dtype, out)
    if ts is None:
        return _cx_host(name, a, kw, getattr(np, name), axis=axis,
                        dtype=dtype, out=out, keepdims=keepdims,
                        **({} if initial is np._NoValue else
                           {"initial": initial}),
                        **({} if where is True else {"where": where}))
    it, rt = ts
    masked = where is not True
    k = _cx_reduction(it, rt, nan, masked)
    kw = dict(kw)
    a = _to_dev(a, kw)
    if masked:
        where = where if _is_array(where) else np.asarray(where, dtype=bool)
        if where.dtype != np.bool_:
            raise TypeError("Cannot cast array data from %r to dtype('bool') "
                            "according to the rule 'safe'" % where.dtype)
    args = (a, where) if masked else (a,)
    res = k(*args, axis=axis, keepdims=keepdims, **kw)
    if initial is not np._NoValue:
        res = _cx_scale(res, rt.type(initial)) if rt.kind == "c" else \
            res * rt.type(initial)
    return _cx_deliver(res, host, out)


def _cx_deliver(res, host, out):
    """A complex user reduction's result where the caller wants it: on the
    host for host input (a 0-d result as a scalar), or written to out=
    (a host result moved to out's device first)."""
    if host and _is_array(res):
        res = res.get()
        res = res[()] if res.ndim == 0 else res
    elif host:
        res = np.asarray(res)
        res = res[()] if res.ndim == 0 else res
    if out is not None:
        if not _is_array(res):
            res = np.asarray(res)
            if _is_array(out):
                res = _core.to_device(res, None, out.device_index)
        return _to_out(res, out)
    return res


def _cx_reduction(it, rt, nan, masked):
    return _builtin(("cxprod", it.name, rt.name, nan, masked),
                    lambda: ReductionKernel(
                        "%s x%s" % (it.name, ", bool w" if masked else ""),
                        "%s y" % rt.name, _cx_map(it, rt, nan, masked),
                        _cx_op(rt), "y = a", _cx_one(rt),
                        "gr_nanprod" if nan else "gr_prod"))


def _cx_scan(it, rt, nan, add=False):
    """cumprod (add: cumsum) of complex elements as a user scan of
    float2 / double2 states: one pass, no layout copies."""
    name = ("gr_nancumsum" if nan else "gr_cumsum") if add else \
        ("gr_nancumprod" if nan else "gr_cumprod")
    return _builtin(("cxcumsum" if add else "cxcumprod", it.name, rt.name,
                     nan),
                    lambda: ScanKernel(
                        "%s x" % it.name, "%s y" % rt.name,
                        _cx_map(it, rt, nan, False, 0 if add else 1),
                        "a + b" if add else _cx_op(rt),
                        _cx_one(rt, 0 if add else 1), name))


def _cx_scale(r, s):
    """r * s (complex r, complex scalar s): NumPy's multiply on host
    results, a one-element user reduction per element on the device."""
    if not _is_array(r):
        return (r * s).astype(r.dtype) if np.ndim(r) else r.dtype.type(r * s)
    dt = np.dtype(r.dtype)
    cl = _CL[dt.name]
    k = _builtin(("cxscale", dt.name), lambda: ReductionKernel(
        "%s x, %s s" % (dt.name, dt.name), "%s y" % dt.name,
        _cmul("x", "s", cl), _cmul("a", "b", cl), "y = a", "(%s)(1, 0)" % cl,
        "gr_cscale"))
    shape = r.shape
    flat = r.reshape((r.size, 1)) if r.is_c_contiguous else \
        r.copy().reshape((r.size, 1))
    return k(flat, s, axis=1).reshape(shape)


def _cx_run_scan(k, a, axis, out, exclusive, kw):
    """Built-in complex scan k on a: a host input runs on device= (or the
    default device) and comes back as NumPy; out= receives the result."""
    kw = dict(kw)
    host = not _is_array(a)
    a = _to_dev(a, kw)
    res = k(a, axis=axis, exclusive=exclusive, **kw)
    if host and _is_array(res):
        res = res.get()
    if out is not None:
        if not _is_array(res) and _is_array(out):
            res = _core.to_device(np.asarray(res), None, out.device_index)
        return _to_out(res, out)
    return res


def cx_cumsum(a, axis, dtype, out, exclusive, nan, kw):
    """cumsum / nancumsum of complex a into a complex dtype (gpured._scan's
    complex branch; a real dtype= stays on the real view's scan): the user
    scan of vector states, one pass (the real view's scan needed the parts
    moved apart and back: two layout copies of the whole array)."""
    return cx_cumprod(a, axis, dtype, out, exclusive, nan, kw, add=True)


def cx_cumprod(a, axis, dtype, out, exclusive, nan, kw, add=False):
    """cumprod / nancumprod of complex a (gpured._scan's complex branch)."""
    name = ("nancum" if nan else "cum") + ("sum" if add else "prod")
    ts = _cx_types(name, a, dtype, out)
    if ts is None:
        if exclusive:
            raise TypeError("gpured.%s(exclusive=True) of a complex array "
                            "into a real dtype: NumPy has no exclusive "
                            "scans to fall back on" % name)
        return _cx_host(name, a, kw, getattr(np, name), axis=axis,
                        dtype=dtype, out=out)
    it, rt = ts
    return _cx_run_scan(_cx_scan(it, rt, nan, add), a, axis, out,
                        exclusive, kw)


def _cx_ext_scan(dt, is_min):
    """cummin / cummax of complex elements as NumPy's minimum / maximum
    .accumulate: an element with a NaN part wins from where it stands (the
    first such), else the lexicographic extreme (real part, then
    imaginary), the earlier one on ties."""
    name = "gr_cx_cummin" if is_min else "gr_cx_cummax"
    c = "<" if is_min else ">"
    expr = ("((isnan(a.x) || isnan(a.y)) ? a : (isnan(b.x) || isnan(b.y)) ? b"
            " : (b.x %s a.x || (b.x == a.x && b.y %s a.y)) ? b : a)" % (c, c))
    inf = "INFINITY" if is_min else "-INFINITY"
    return _builtin(("cxcumext", dt.name, is_min), lambda: ScanKernel(
        "%s x" % dt.name, "%s y" % dt.name, "x", expr,
        "(%s)(%s, %s)" % (_CL[dt.name], inf, inf), name))


def cx_cumext(a, axis, dtype, out, exclusive, is_min, kw):
    """cummin / cummax of complex a on the device (host input too), or None
    where dtype= asks for another type (the caller's NumPy route)."""
    it = np.dtype(_dtype(a))
    if dtype is not None and np.dtype(dtype) != it:
        return None
    return _cx_run_scan(_cx_ext_scan(it, is_min), a, axis, out, exclusive,
                        kw)


_CX_OPS = ("prod", "nanprod", "cumprod", "nancumprod")
_CX_SUMS = ("cumsum", "nancumsum")  # user scans unless dtype= is real


def cx_kernel_op(op, a, dtype, axis=None, kw=None):
    """Whether explain / timeit of op on complex a (along axis, with
    knobs kw) go through the user kernels (cx_plan)."""
    if op in _CX_SUM_OPS:
        return cx_sum_route(op, a, axis, dtype, None, True, kw or {})
    if op in _CX_SUMS:
        return dtype is None or _cx.dtype_is_cx(dtype)
    return op in _CX_OPS


def cx_plan(mode, op, a, axis, dtype, kw, reps=10):
    """gpured.explain / timeit of a complex product, scan or sum (op in
    _CX_OPS, _CX_SUMS, _CX_SUM_OPS): the built-in user kernel's explain()
    / timeit(), "complex" naming it."""
    if op in _CX_SUM_OPS:
        return _cx_sum_explain(mode, op, a, axis, dtype, kw, reps)
    ts = _cx_types(op, a, dtype, None)
    if ts is None:
        raise _core.VariantUnavailable(
            "%s of a complex array into %s runs on NumPy (no kernel to "
            "explain or time)" % (op, np.dtype(dtype)))
    it, rt = ts
    nan = op.startswith("nan")
    kw = dict(kw)
    a = _to_dev(a, kw)
    if "cum" in op:
        k = _cx_scan(it, rt, nan, op.endswith("cumsum"))
        ex = kw.pop("exclusive", False)
        r = k.explain(a, axis, ex, **kw) if mode == "explain" else \
            k.timeit(a, axis, ex, reps=reps, **kw)
    else:
        k = _cx_reduction(it, rt, nan, False)
        r = k.explain(a, axis=axis, **kw) if mode == "explain" else \
            k.timeit(a, axis=axis, reps=reps, **kw)
    r = dict(r)
    r["complex"] = "%s as OpenCL %s, %s (a user kernel)" % (
        it, _CL[it.name], "vector addition" if op.endswith("cumsum") else
        "NumPy's complex multiply")
    return r


# ------------------------------------- complex extremes, one pass each
#
# min / max / argmin / argmax of complex device Arrays in NumPy's order
# (real part, then imaginary; a NaN in either part beats everything; ties
# and NaNs: the first) as one user reduction: the state is the element
# and its offset (the second part's bits: as_float2 of a ulong), the merge
# keeps the better one, the lower offset on a tie -- commutative, so every
# variant of the ladder may run it.  arg*: the offset back to the index
# along the axis (rows: offset % L; columns: offset / M).

def _cx_ext_state(dt, name, cols):
    cl = _CL[dt.name]
    if dt == np.complex64:
        idx, mk = "as_ulong(%s)", "as_float2((ulong)(%s))"
    else:
        idx, mk = "as_ulong2(%s).x", "as_double2((ulong2)((ulong)(%s), 0))"
    cmp = "<" if name.endswith("min") else ">"
    big = "INFINITY" if cmp == "<" else "-INFINITY"
    if name.startswith("arg"):
        post = "{ z = (long)(%s %s); }" % (idx % "gr_s.x",
                                           "/ gr_M" if cols else "% gr_L")
    else:
        post = "{ z = gr_s.v; }"
    return [
        "#define GR_USER_X 1",
        "#define GR_USER_IDENT ((%s)(%s, %s))" % (cl, big, big),
        "#define GR_USER_IDENT_X (%s)" % (mk % "ULONG_MAX"),
        "#define GR_USER_ELEM_X (%s)" % (mk % "gr_e_"),
        "#define GR_USER_MERGE(gr_pa, gr_pb) do { gr_state *p_ = (gr_pa); "
        "const gr_state q_ = (gr_pb); "
        "const int na_ = isnan(p_->v.x) || isnan(p_->v.y); "
        "const int nb_ = isnan(q_.v.x) || isnan(q_.v.y); "
        "const ulong ia_ = %s, ib_ = %s; "
        "const int eq_ = q_.v.x == p_->v.x && q_.v.y == p_->v.y; "
        "const int gt_ = q_.v.x %s p_->v.x || (q_.v.x == p_->v.x && "
        "q_.v.y %s p_->v.y); "
        "if ((na_ || nb_) ? (nb_ && (!na_ || ib_ < ia_)) : "
        "(gt_ || (eq_ && ib_ < ia_))) { *p_ = q_; } } while (0)"
        % (idx % "p_->x", idx % "q_.x", cmp, cmp),
        "#define GR_USER_POST " + post]


def _cx_ext_kernel(name, x, ax):
    dt = np.dtype(x.dtype)
    cols = bool(_Layout(x.shape, ax).cols)
    arg = name.startswith("arg")
    return _builtin(("cxext", dt.name, name, cols and arg),
                    lambda: ReductionKernel(
                        "%s x" % dt.name,
                        "%s z" % ("int64" if arg else dt.name), "x", "a", "",
                        "0", "gr_cx" + name, reduce_type=dt.name,
                        _state=_cx_ext_state(dt, name, cols)))


def cx_extreme(name, x, ax):
    """name in min / max / argmin / argmax of the complex device Array x
    along the int axis ax (keepdims): one pass (see above)."""
    return _cx_ext_kernel(name, x, ax)(x, axis=ax, keepdims=True)


_CX_EXT = ("min", "max", "argmin", "argmax")


def cx_ext_explain(op, a, axis, kw):
    """gpured.explain of a complex device Array's min / max / argmin /
    argmax (no knobs): the one-pass kernel's plan; None otherwise (the
    caller's NumPy answer)."""
    if op not in _CX_EXT or not _is_array(a) or kw or a.size == 0 or not (
            axis is None or isinstance(axis, (int, np.integer))):
        return None
    x = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else _axes(axis, a.ndim)[0]
    r = dict(_cx_ext_kernel(op, x, ax).explain(x, axis=ax))
    r["complex"] = "%s as OpenCL %s, NumPy's lexicographic order in one " \
        "pass (the element and its offset as the state)" % (
            a.dtype, _CL[np.dtype(a.dtype).name])
    return r


# ------------------------------- complex sums along rows, nan forms (issue 40)
#
# sum / mean along trailing axes ("rows") and nansum / nanmean along any
# axes of complex64 / complex128, as user reductions of float2 / double2
# elements: the real view's row sums read each part as a strided segment
# (elem_stride 2) and its nan forms built an element mask first (three
# elementwise passes, then a masked sum).  Accumulation as the real sums:
# a complex64 result in double2 where the device has fp64 (plain adds),
# otherwise -- complex128, or no fp64 -- Knuth's TwoSum per component, the
# error term riding in the state's second part.  A mean divides by the
# count of elements kept, carried in the state's second part (double2
# accumulation), or afterwards (L, or nanmean's counting pass) where that
# part holds the compensation.  where= and knobs keep the real view's
# route (_complex.reduce).

_CX_SUM_OPS = ("sum", "mean", "nansum", "nanmean")


def cx_sum_route(op, a, axis, dtype, out, where, kw):
    """Whether op of complex a runs as a user kernel here (cx_sum): no
    knobs but device=, no where= (a masked sum keeps the real view's
    where= pass: fewer kernels to compile), a complex (or no) dtype= and
    out=; nansum / nanmean along any axes, sum / mean along trailing axes
    that keep some (a full sum keeps _complex's two-stage columns,
    leading axes the real view's column kernels, which read it
    contiguously)."""
    if op not in _CX_SUM_OPS or set(kw) - {"device"} or where is not True:
        return False
    if dtype is not None and np.dtype(dtype).kind != "c":
        return False
    if out is not None and (isinstance(out, tuple) or
                            not isinstance(out, (np.ndarray,
                                                 _core.ArrayBase)) or
                            out.dtype.kind != "c" or
                            out.dtype.name not in _CL):
        return False
    if op.startswith("nan"):
        return True
    if axis is None:
        return False  # a full sum or mean (no _Layout: ~50 us a call)
    nd = len(a.shape) if _is_array(a) else np.ndim(a)
    r = _axes(axis, nd)
    return len(r) < nd and r == tuple(range(nd - len(r), nd))


def _cx_sum_types(a, dtype, out, fp64):
    """(input, result, accumulator dtypes, compensated)."""
    it = np.dtype(_dtype(a))
    rt = np.dtype(dtype) if dtype is not None else \
        np.dtype(out.dtype) if out is not None else it
    if rt == np.complex64 and fp64:
        return it, rt, np.dtype(np.complex128), False
    return it, rt, rt, True


# The kernels' texts are few (every one is compiled per plan): whether
# NaN elements are dropped (nanf) and whether a mean is asked (meanf) are
# run-time scalars, not defines.
_CX_KEEP = "!(nanf && (isnan(x.x) || isnan(x.y)))"  # an element kept


def _cx_ins(it):
    return "%s x, int32 nanf, int32 meanf" % it.name


def _cx_sum_kernel(it, rt, at, comp, state):
    """The user reduction of the kept elements: state (complex64 results
    on fp64 devices): the state's second part counts them (.x) and holds
    meanf per element (.y): a mean divides by the count; comp: TwoSum per
    component (sums only: a mean divides afterwards); else plain adds of
    the accumulator's vectors, a sum."""
    key = ("cxsum", it.name, rt.name, at.name, comp, state)
    acl, rcl = _CL[at.name], _CL[rt.name]
    keep = _CX_KEEP
    zero = "(%s)(0, 0)" % acl
    mapx = "((%s) ? convert_%s(x) : %s)" % (keep, acl, zero)
    ins = _cx_ins(it)
    if not comp and not state:
        return _builtin(key, lambda: ReductionKernel(
            ins, "%s y" % rt.name, mapx, "a + b",
            "y = convert_%s(a)" % rcl, zero, "gr_cx_sum",
            reduce_type=at.name))
    if comp:
        merge = ("const %s t_ = p_->v + q_.v; const %s b_ = t_ - p_->v; "
                 "p_->x += q_.x + ((p_->v - (t_ - b_)) + (q_.v - b_)); "
                 "p_->v = t_;" % (acl, acl))
        # an infinite sum has a NaN error term: keep the infinity
        val = "select(gr_s.v + gr_s.x, gr_s.v, isinf(gr_s.v) | " \
              "(gr_s.x == %s))" % zero
        ex = zero
    else:
        merge = "p_->v += q_.v; p_->x += q_.x;"
        # NumPy's complex division by a real count (Smith's: a NaN or
        # infinite part spreads to the other)
        val = "(gr_s.x.y != 0 ? (%s)(gr_s.v.x + gr_s.v.y * 0, gr_s.v.y - " \
              "gr_s.v.x * 0) / gr_s.x.x : gr_s.v)" % acl
        ex = "(%s)((%s) ? 1 : 0, meanf)" % (acl, keep)
    st = [
        "#define GR_USER_X 1",
        "#define GR_USER_IDENT %s" % zero,
        "#define GR_USER_IDENT_X %s" % zero,
        "#define GR_USER_ELEM_X %s" % ex,
        "#define GR_USER_MERGE(gr_pa, gr_pb) do { gr_state *p_ = (gr_pa); "
        "const gr_state q_ = (gr_pb); %s } while (0)" % merge,
        "#define GR_USER_POST { y = convert_%s(%s); }" % (rcl, val)]
    return _builtin(key, lambda: ReductionKernel(
        ins, "%s y" % rt.name, mapx, "a", "", zero,
        "gr_cx_mean" if state else "gr_cx_sum", reduce_type=at.name,
        _state=st))


def _cx_count_kernel(it):
    """The kept elements' count per slice (int64): a compensated
    nanmean's divisor."""
    return _builtin(("cxcount", it.name), lambda: ReductionKernel(
        _cx_ins(it), "int64 c", "((%s) ? 1 : 0)" % _CX_KEEP,
        "a + b", "c = a", "0", "gr_cx_count", reduce_type="int64"))


def _cx_div(s, c):
    """Complex results s divided by the counts c (an int, or int64 of s's
    shape) as NumPy divides (complex by complex(c, 0): a NaN or infinite
    part spreads to the other), its dtype kept: NumPy on the host, the
    real views' elementwise operations on the device."""
    if not _is_array(s):
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.asarray(s) / np.asarray(c)
        return r.astype(s.dtype)
    v = _cx.real(s)
    re, im = v[..., 0], v[..., 1]
    if not _is_array(c) and np.ndim(c):
        c = _core.to_device(np.ascontiguousarray(c), None, s.device_index)
    if _is_array(c):
        c = c.astype(v.dtype)  # (float32 parts: no float64 on the way)
    nr, ni = (re + im * 0.0) / c, (im - re * 0.0) / c
    return _cx._pair(nr.astype(v.dtype), ni.astype(v.dtype))


def _cx_sum_plan(op, a, dtype, out, kw):
    """(kernel, arguments, the divisor afterwards (None: none; "L": the
    slices' length; else the counting kernel), the call's kw, the result
    dtype) of cx_sum / cx_plan."""
    nan, mean = op.startswith("nan"), op.endswith("mean")
    kw = dict(kw)
    a = _to_dev(a, kw)
    args = (a, np.int32(nan), np.int32(mean))
    it, rt, at, comp = _cx_sum_types(a, dtype, out, _device_fp64(args))
    k = _cx_sum_kernel(it, rt, at, comp, mean and not comp)
    ck = None
    if mean and comp:
        ck = _cx_count_kernel(it) if nan else "L"
    return k, args, ck, kw, rt


def _cx_divided(res, ck, args, axis, keepdims, kw):
    """A compensated mean's sums res divided by the divisor ck (see
    _cx_sum_plan)."""
    if isinstance(ck, str):
        x = args[0]
        return _cx_div(res, _Layout(x.shape if _is_array(x) else
                                    np.shape(x), axis).L)
    return _cx_div(res, ck(*args, axis=axis, keepdims=keepdims, **kw))


def cx_sum(op, a, axis, dtype, out, keepdims, initial, where, kw):
    """sum / mean / nansum / nanmean of complex a as a user kernel (see
    above), or None where cx_sum_route says no (the real view's path)."""
    if not cx_sum_route(op, a, axis, dtype, out, where, kw):
        return None
    host = not _is_array(a)
    k, args, ck, kw, rt = _cx_sum_plan(op, a, dtype, out, kw)
    res = k(*args, axis=axis, keepdims=keepdims, **kw)
    if ck is not None:
        res = _cx_divided(res, ck, args, axis, keepdims, kw)
    elif op.endswith("mean") and 0 in (a.shape if _is_array(a) else
                                       np.shape(a)):
        res = _cx_div(res, 0)  # empty slices (the state's meanf is 0)
    if host and op.endswith("mean"):
        _cx_mean_warn(op, a, axis, res)
    if initial is not np._NoValue:
        if _is_array(res):
            res = _cx.cx(_cx._add_initial(_cx.real(res), initial, None),
                         False)
        else:
            res = (np.asarray(res) + rt.type(initial)).astype(rt)
    return _cx_deliver(res, host, out)


def _cx_mean_warn(op, a, axis, res):
    """NumPy's "Mean of empty slice" for host input where a slice keeps
    no element (looked for only where a result is NaN)."""
    a = np.asarray(a)
    if a.size and not np.isnan(np.asarray(res)).any():
        return
    keep = ~np.isnan(a) if op == "nanmean" else np.ones(a.shape, bool)
    if (np.count_nonzero(keep, axis=axis) == 0).any():
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)


def _cx_sum_explain(mode, op, a, axis, dtype, kw, reps):
    """cx_plan of sum / mean / nansum / nanmean: the one user kernel's
    plan (a compensated mean: the sum's, then the division)."""
    k, args, ck, kw, rt = _cx_sum_plan(op, a, dtype, None, kw)
    r = dict(k.explain(*args, axis=axis, **kw) if mode == "explain" else
             k.timeit(*args, axis=axis, reps=reps, **kw))
    if mode != "explain" and ck is not None:  # the result, not the sum
        r["result"] = _cx_divided(r["result"], ck, args, axis, False, kw)
    it, _, at, comp = _cx_sum_types(a, dtype, None, _device_fp64(args))
    r["complex"] = "%s as OpenCL %s, %saccumulated in %s%s (a user " \
        "kernel)%s" % (
            it, _CL[it.name], "elements with a NaN part dropped, " if
            op.startswith("nan") else "", _CL[at.name],
            ", TwoSum per part" if comp else "",
            "" if ck is None else ", then divided by each slice's count")
    return r
