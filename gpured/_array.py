"""Device-resident arrays: ``gpured.Array``.

An Array is one device memory block (``_core.Buffer``, from the device's
caching pool) plus NumPy-style metadata: shape, dtype, byte strides and a
byte offset.  Those fields live in C (``_core.ArrayBase``), so the core
reads them and makes result Arrays without running Python; this class adds
the methods.  Views (basic slicing, reshape, transpose) share the buffer
and cost nothing; what cannot be a view (a reshape of a non-contiguous
array) makes a copy on the device; advanced indexing goes through the host.

View arithmetic is NumPy's own: an Array builds a "shadow" ndarray with the
same shape, strides and offset over a fake address that is never read, and
NumPy computes the view; only operations that are guaranteed not to touch
data are ever applied to a shadow.

Every gpured function accepts Arrays and returns Arrays when its input was
one (reductions give 0-d Arrays, as CuPy does).  Arithmetic, comparisons
and NumPy's elementwise ufuncs on Arrays run on the device
(``_elementwise.py``); a ufunc gpured does not run raises TypeError rather
than copying to the host.  Results are enqueued and
not waited for: ``get()``, ``float()``, ``np.asarray`` and
``gpured.synchronize()`` wait.  Mixing arrays of two devices raises
ValueError.

Memory is released when the last Array using a buffer is collected, or at
once by ``release()`` / leaving a ``with`` block; a released array raises
ValueError wherever it is used.  ``release()`` releases the buffer, so
every view of it is released too.  Work already enqueued on it still runs
on the memory it was given: the block returns to the pool only once that
work is enqueued, and the device's queue runs it first.
"""
import operator
import uuid

import numpy as np

from . import _complex as _cx
from . import _core
from . import _elementwise as _ew
from . import _numpy

_FAKE_BASE = 1 << 44   # address of byte 0 of every shadow: never dereferenced


class _Iface:
    __slots__ = ("__array_interface__",)


def _shadow(shape, strides, dtype, offset):
    s = _Iface()
    s.__array_interface__ = {"shape": tuple(shape), "typestr": dtype.str,
                             "data": (_FAKE_BASE + offset, True),
                             "strides": tuple(strides), "version": 3}
    return np.asarray(s)


def _shadow_offset(sh):
    return sh.__array_interface__["data"][0] - _FAKE_BASE


def _reshape_view(sh, shape):
    """sh reshaped (C order) without a copy, or None if no view exists."""
    try:
        return np.reshape(sh, shape, copy=False)
    except TypeError:  # pragma: no cover - NumPy < 2.1
        v = sh.view()
        try:
            v.shape = shape
        except AttributeError:
            return None
        return v
    except ValueError:
        return None


def _is_basic_key(key):
    keys = key if isinstance(key, tuple) else (key,)
    for k in keys:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (bool, np.bool_)):
            return False
        try:
            operator.index(k)
        except TypeError:
            return False
    return True


class Array(_core.ArrayBase):
    """An n-d array in one OpenCL device's memory (see the module docs).

    Create one with :func:`gpured.to_device`, :func:`gpured.empty` or
    :func:`gpured.zeros`, or as the result of a gpured function applied to
    an Array.  ``get()`` copies it to a NumPy array.
    """

    __array_priority__ = 100

    # ------------------------------------------------------------ metadata
    @property
    def device(self):
        """The device holding the array (a dict as in gpured.devices())."""
        return _core.devices()[self.device_index]

    @property
    def flags(self):
        sh = self._sh()
        return {"C_CONTIGUOUS": sh.flags.c_contiguous,
                "F_CONTIGUOUS": sh.flags.f_contiguous}

    @property
    def is_c_contiguous(self):
        return self._sh().flags.c_contiguous

    def _sh(self):
        return _shadow(self.shape, self.strides, self.dtype, self.offset)

    def _from_shadow(self, sh):
        return Array(self.buffer, sh.shape, self.dtype, sh.strides,
                     _shadow_offset(sh))

    def _live(self):
        if self.released:
            raise ValueError("the device array has been released")
        return self

    # ------------------------------------------------------------ lifetime
    def release(self):
        """Release the device memory now (this array and all its views)."""
        self.buffer.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    # ------------------------------------------------------- host transfer
    def get(self, out=None):
        """Copy to host memory: a new NumPy array (or into ``out``)."""
        if self.dtype.kind == "c":  # through its real view (_complex.py)
            host = _cx.cx(_core.get(_cx.real(self._live())), False)
        else:
            host = _core.get(self)
        if out is not None:
            np.copyto(out, host)
            return out
        return host

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a device array cannot be viewed as a NumPy "
                             "array without a copy")
        a = self.get()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        if self.released:
            return "gpured.Array(<released>, shape=%s, dtype=%s)" % (
                self.shape, self.dtype)
        body = np.array2string(self.get(), separator=", ", prefix="gpured.Array(")
        return "gpured.Array(%s, dtype=%s)" % (body, self.dtype)

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of an array with more than one "
                             "element is ambiguous")
        return bool(self.get().reshape(()))

    def __float__(self):
        return float(self.get().reshape(()) if self.size == 1 else self.get())

    def __int__(self):
        return int(self.get().reshape(()) if self.size == 1 else self.get())

    def __index__(self):
        if self.dtype.kind not in "iu" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to "
                            "a scalar index")
        return int(self.get().reshape(()))

    def item(self):
        return self.get().item()

    def tolist(self):
        return self.get().tolist()

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.get()[()], spec)
        return format(self.get(), spec)

    def __round__(self, ndigits=None):
        return _ew.round_(self, ndigits)

    # ---------------------------------------- arithmetic (_elementwise.py)
    # Operators run NumPy's ufuncs on the device; in-place forms write into
    # the array, as NumPy's do (casting 'same_kind').
    __hash__ = None   # elementwise == makes Arrays unhashable, as ndarrays

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        return _ew.array_ufunc(self, ufunc, method, *inputs, **kw)

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's functions: gpured's of that name on the device, else
        # TypeError (never a silent host copy): _numpy.py
        return _numpy.array_function(self, func, types, args, kwargs)

    def __neg__(self): return _ew.apply(np.negative, (self,))
    def __pos__(self): return _ew.apply(np.positive, (self,))
    def __abs__(self): return _ew.apply(np.absolute, (self,))
    def __invert__(self): return _ew.apply(np.invert, (self,))

    def __divmod__(self, o):
        return (_ew.apply(np.floor_divide, (self, o)),
                _ew.apply(np.remainder, (self, o)))

    def __rdivmod__(self, o):
        return (_ew.apply(np.floor_divide, (o, self)),
                _ew.apply(np.remainder, (o, self)))

    # ----------------------------------------------------------------- views
    def __getitem__(self, key):
        self._live()
        if not _is_basic_key(key):
            return to_device(self.get()[key], device=self.device_index)
        keys = key if isinstance(key, tuple) else (key,)
        if not _any(k is Ellipsis for k in keys):
            keys = keys + (Ellipsis,)  # a 0-d view, never a scalar (a read)
        return self._from_shadow(self._sh()[keys])

    def reshape(self, *shape, order="C"):
        """A view with a new shape where one exists, else a device copy."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        if order not in ("C", "A"):
            raise NotImplementedError("gpured.Array.reshape supports order='C'")
        self._live()
        v = _reshape_view(self._sh(), shape)
        if v is not None:
            return self._from_shadow(v)
        c = self.copy()
        return c._from_shadow(_reshape_view(c._sh(), shape))

    def ravel(self):
        return self.reshape(-1)

    def flatten(self):
        return self.copy().reshape(-1)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        return self._from_shadow(self._sh().transpose(axes or None))

    T = property(lambda self: self.transpose())

    def swapaxes(self, a, b):
        return self._from_shadow(self._sh().swapaxes(a, b))

    # ---------------------------------------------------------------- copies
    def copy(self):
        """A C-contiguous copy on the same device."""
        return self.astype(self.dtype)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        """Pickled as its values, a host copy (as CuPy's arrays are), and
        unpickled onto the current device of the process that loads it
        (a dask.distributed worker's own: GPURED_DEVICE); a view pickles
        its elements alone, C-ordered.  copy.copy and copy.deepcopy stay
        on this device."""
        return _unpickle, (self.get(),)

    def __dask_tokenize__(self):
        # Dask tokenizes an object it knows nothing of by pickling it:
        # here a read of every byte to the host.  A token of its own per
        # call instead, as before Arrays pickled (they are mutable: a
        # token from the buffer's identity could name new values).
        return "gpured.Array", uuid.uuid4().hex

    def astype(self, dtype, copy=True):
        """Converted copy on the device (NumPy's unsafe casting)."""
        dt = np.dtype(dtype)
        self._live()
        if not copy and dt == self.dtype and self.is_c_contiguous:
            return self
        out = empty(self.shape, dt, device=self.device_index)
        if self.dtype.kind == "c" or dt.kind == "c":
            _cx_copy(self, out)
        else:
            _core.device_copy(self, out)
        return out

    # ------------------------------------------------- OpenCL neighbours
    def to_pyopencl(self, queue=None):
        """This array as a ``pyopencl.array.Array`` over the same device
        memory (no copy).  The memory is never recycled by gpured's pool
        afterwards.  ``queue`` defaults to gpured's own queue (PyOpenCL
        objects made from :func:`gpured.handles`)."""
        import pyopencl as cl
        import pyopencl.array as cla
        self._live()
        if queue is None:
            h = _core.handles(self.device_index)
            queue = cl.CommandQueue.from_int_ptr(h["queue"], retain=True)
        _core.export(self.buffer)
        buf = cl.Buffer.from_int_ptr(self.buffer.int_ptr, retain=True)
        return cla.Array(queue, self.shape, self.dtype, strides=self.strides,
                         data=buf, offset=self.offset)

    @classmethod
    def from_pyopencl(cls, a):
        """A ``pyopencl.array.Array`` as a gpured Array: its buffer in place
        when gpured runs on its context (:func:`gpured.use_queue`), else a
        copy through the host."""
        return _core.from_pyopencl(a)

    @classmethod
    def from_dlpack(cls, x, device=None):
        """Host memory exported by ``x`` (DLPack, e.g. a NumPy array) as an
        Array: in place on a CPU device, copied to a GPU."""
        return _core.from_dlpack(x, device)

    # ---------------------------------------- gpured functions as methods
    def _call(self, name, *args, **kw):
        import gpured
        return getattr(gpured, name)(self, *args, **kw)

    def sum(self, *a, **k): return self._call("sum", *a, **k)
    def prod(self, *a, **k): return self._call("prod", *a, **k)
    def min(self, *a, **k): return self._call("min", *a, **k)
    def max(self, *a, **k): return self._call("max", *a, **k)
    def mean(self, *a, **k): return self._call("mean", *a, **k)
    def all(self, *a, **k): return self._call("all", *a, **k)
    def any(self, *a, **k): return self._call("any", *a, **k)
    def argmin(self, *a, **k): return self._call("argmin", *a, **k)
    def argmax(self, *a, **k): return self._call("argmax", *a, **k)
    def cumsum(self, *a, **k): return self._call("cumsum", *a, **k)
    def cumprod(self, *a, **k): return self._call("cumprod", *a, **k)
    def var(self, *a, **k): return self._call("var", *a, **k)
    def std(self, *a, **k): return self._call("std", *a, **k)
    def ptp(self, *a, **k): return self._call("ptp", *a, **k)


def _binary(uf):
    def op(self, o):
        return _ew.apply(uf, (self, o))

    def rop(self, o):
        return _ew.apply(uf, (o, self))

    def iop(self, o):
        return _ew.apply(uf, (self, o), out=self)
    return op, rop, iop


for _name, _uf in (("add", np.add), ("sub", np.subtract),
                   ("mul", np.multiply), ("truediv", np.true_divide),
                   ("floordiv", np.floor_divide), ("mod", np.remainder),
                   ("pow", np.power), ("and", np.bitwise_and),
                   ("or", np.bitwise_or), ("xor", np.bitwise_xor),
                   ("lshift", np.left_shift), ("rshift", np.right_shift)):
    _op, _rop, _iop = _binary(_uf)
    for _pre, _f in (("", _op), ("r", _rop), ("i", _iop)):
        _f.__name__ = "__%s%s__" % (_pre, _name)
        setattr(Array, _f.__name__, _f)
for _name, _uf in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal)):
    _op = _binary(_uf)[0]
    _op.__name__ = "__%s__" % _name
    setattr(Array, _op.__name__, _op)
del _name, _uf, _op, _rop, _iop, _pre, _f

_core.set_array_class(Array)


def _any(it):
    for x in it:
        if x:
            return True
    return False


# ------------------------------------------------------------------- public

def _cx_copy(src, dst):
    """astype with a complex side, on the real views: complex -> complex
    part by part, complex -> real the real part (NumPy's ComplexWarning),
    real -> complex into the real part, the imaginary part zero."""
    if src.dtype.kind == "c" and dst.dtype.kind == "c":
        _core.device_copy(_cx.real(src), _cx.real(dst))
    elif src.dtype.kind == "c":
        import warnings
        warnings.warn("Casting complex values to real discards the "
                      "imaginary part", _cx._ComplexWarning, stacklevel=3)
        _core.device_copy(_cx.real(src)[..., 0], dst)
    else:
        v = _cx.real(dst)
        if dst.nbytes:
            _core.buffer_fill(dst.buffer, 0, dst.nbytes, b"\0")
        _core.device_copy(src, v[..., 0])


def to_device(a, dtype=None, device=None):
    """Copy a NumPy array (or anything np.asarray takes) to the current
    device (or ``device``: an index into :func:`gpured.devices`, or part of
    a device name).  Large copies from host memory stream through pinned
    staging buffers on GPUs (see :func:`gpured.set_staging`)."""
    if isinstance(a, Array):
        a._live()
        if device is None or _device_index(device) == a.device_index:
            return a if dtype is None else a.astype(dtype)
        a = a.get()
    return _core.to_device(a, dtype, device)


def _unpickle(values):
    """An Array of a pickled one's values on the current device."""
    return to_device(values)


def _device_index(device):
    return _core.device_index(device)


def from_dlpack(x, device=None):
    """Host memory exported by ``x`` through DLPack (a NumPy array, a torch
    CPU tensor, ...) as a gpured Array on a CPU device, in place (no copy);
    on a GPU device (``device`` or the current one) a copy.  Arrays on CPU
    devices export themselves the same way: ``np.from_dlpack(array)``."""
    return _core.from_dlpack(x, device)


def use_queue(queue):
    """Run gpured on the caller's OpenCL context and in-order queue (a
    ``pyopencl.CommandQueue`` or its ``int_ptr``) for that queue's device,
    so that PyOpenCL arrays of that context are reduced in place and the
    two libraries' work is ordered on one queue.  Call it before creating
    gpured Arrays on that device.  Returns the device's position in
    :func:`gpured.devices`."""
    ptr = getattr(queue, "int_ptr", queue)
    return _core.use_queue(int(ptr))


def handles(device=None):
    """The raw OpenCL handles gpured uses on the current device (or
    ``device``), as integers (PyOpenCL's ``int_ptr``): ``context``,
    ``queue``, ``device``, ``platform``.  E.g.
    ``pyopencl.CommandQueue.from_int_ptr(gpured.handles()["queue"])``."""
    return _core.handles(device)


def asnumpy(a):
    """A NumPy array: ``a.get()`` for an Array, ``np.asarray(a)`` otherwise."""
    return a.get() if isinstance(a, Array) else np.asarray(a)


def _size(shape, itemsize):
    n = itemsize
    for s in shape:
        if s < 0:
            raise ValueError("negative dimensions are not allowed")
        n *= s
        if n >= 1 << 63:
            raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` "
                             "is larger than the maximum possible size.")
    return n


def empty(shape, dtype=np.float64, device=None):
    """An uninitialised Array on the current device (or ``device``)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(n) for n in shape)
    dt = np.dtype(dtype)
    buf = _core.buffer_alloc(_size(shape, dt.itemsize), device)
    return Array(buf, shape, dt)


def zeros(shape, dtype=np.float64, device=None):
    """An Array of zeros on the current device (or ``device``)."""
    a = empty(shape, dtype, device)
    if a.nbytes:
        _core.buffer_fill(a.buffer, 0, a.nbytes, b"\0")
    return a


def synchronize(device=None):
    """Wait until everything enqueued on the current device (or
    ``device``) has finished."""
    _core.finish(device)


def set_staging(chunk_bytes=None, buffers=None, min_bytes=None, force=None,
                threads=None, register=None):
    """Settings of the pinned staging pool that host arrays stream through
    on GPUs: ``chunk_bytes`` per pinned buffer (default 64 MiB), ``buffers``
    (default 4: at most chunk_bytes x buffers of pinned memory, and as much
    device memory for reductions), ``min_bytes`` (smaller inputs take the
    plain path; default 16 MiB), ``force`` (stream on CPU devices too: for
    tests), ``threads`` (memcpy threads; 0: one per CPU, up to 16).

    ``register``: a NumPy array of at least ``min_bytes`` passed to gpured
    in three calls or more has its memory page-locked (registered with the
    driver, as ``cudaHostRegister`` does) while it lives, so that its later
    copies run at the DMA rate straight from the array, without the staging
    copy.  ``"auto"`` (the default) on NVIDIA GPUs, where it was measured
    (1 GiB: 19.6 ms against ~35 through the pool; registering and releasing
    ~25 ms each); ``"always"`` on every device (tests); ``"never"``.  While
    noted, an array refuses ``ndarray.resize()`` (NumPy counts gpured's weak
    reference).  At most 16 arrays and half of the host's memory are
    registered at once.

    Returns the previous settings.  Changing them frees the pool and
    releases every registration."""
    old = staging()
    new = {k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes", "force",
                               "threads", "register")}
    for k, v in (("chunk_bytes", chunk_bytes), ("buffers", buffers),
                 ("min_bytes", min_bytes), ("force", force),
                 ("threads", threads), ("register", register)):
        if v is not None:
            new[k] = v
    _core.set_staging(int(new["chunk_bytes"]), int(new["buffers"]),
                      int(new["min_bytes"]), bool(new["force"]),
                      int(new["threads"]), str(new["register"]))
    return {k: old[k] for k in new}


def staging():
    """The staging settings and counters: ``streams`` (host transfers that
    went through the pool), ``chunks`` (chunks moved), ``direct_chunks``
    (of those, copied straight from registered host memory),
    ``registered`` and ``registered_bytes`` (host memory registered now),
    ``streams_at_once`` (the most streams in flight at once so far: one
    per device, each thread's host-side waits free of the device lock)."""
    return _core.staging()


def memory_info(device=None):
    """The device memory pool's counters (as CuPy's MemoryPool and torch's
    caching allocator show them): ``in_use_bytes``/``in_use_blocks``
    (held by Arrays and calls), ``cached_bytes``/``cached_blocks`` (free,
    kept for reuse), ``limit_bytes`` (the cache's cap), ``allocations``
    (blocks created), ``reuses`` (allocations served from the cache) and
    ``frees`` (blocks released past the cap)."""
    return _core.memory_info(device)


def empty_cache(device=None):
    """Release every cached (free) block of the device's pool."""
    _core.empty_cache(device)


def set_memory_limit(nbytes, device=None):
    """Cap the bytes the device's pool keeps cached (freed blocks past the
    cap are released at once).  The default is a quarter of the device's
    memory."""
    _core.set_memory_limit(int(nbytes), device)


_ew.bind(empty)  # _elementwise.py makes its results with empty()
_numpy.bind(to_device, empty, zeros)  # np.asarray(..., like=d) and kin
