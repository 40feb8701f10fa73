"""Device-resident arrays: ``gpured.Array``.

An Array is one OpenCL buffer (``_core.Buffer``) plus NumPy-style metadata:
shape, dtype, strides and a byte offset.  Views (basic slicing, reshape,
transpose) share the buffer and cost nothing; anything that cannot be a
view (a reshape of a non-contiguous array, negative strides handed to a
kernel, advanced indexing) makes a copy on the device, except advanced
indexing, which goes through the host.

View arithmetic is NumPy's own: an Array builds a "shadow" ndarray with the
same shape, strides and offset over a fake address that is never read, and
NumPy computes the view; only operations that are guaranteed not to touch
data are ever applied to a shadow.

Every gpured function accepts Arrays and returns Arrays when its input was
one (reductions give 0-d Arrays, as CuPy does).  Results are enqueued and
not waited for: ``get()`` (or ``gpured.synchronize()``) waits.  Mixing
arrays of two devices raises ValueError.

Memory is released when the last Array using a buffer is collected, or at
once by ``release()`` / leaving a ``with`` block; a released array raises
ValueError wherever it is used.  ``release()`` releases the buffer, so
every view of it is released too.
"""
import math
import operator

import numpy as np

from . import _core

_FAKE_BASE = 1 << 44   # address of byte 0 of every shadow: never dereferenced
_SUPPORTED = "bool, int8-int64, uint8-uint64, float32, float64"


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


def _check_dtype(dt):
    dt = np.dtype(dt)
    if dt.kind in "biu" or (dt.kind == "f" and dt.itemsize in (4, 8)):
        return dt.newbyteorder("=")
    raise TypeError("gpured does not support dtype %s (supported: %s)"
                    % (dt, _SUPPORTED))


def _c_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(strides))


class Array:
    """An n-d array in one OpenCL device's memory (see the module docs).

    Create one with :func:`gpured.to_device`, :func:`gpured.empty` or
    :func:`gpured.zeros`, or as the result of a gpured function applied to
    an Array.  ``get()`` copies it to a NumPy array.
    """

    __array_priority__ = 100

    def __init__(self, buf, shape, dtype, strides=None, offset=0):
        self._buf = buf
        self._shape = tuple(int(n) for n in shape)
        self._dtype = np.dtype(dtype)
        self._strides = (tuple(int(s) for s in strides) if strides is not None
                         else _c_strides(self._shape, self._dtype.itemsize))
        self._offset = int(offset)

    # ------------------------------------------------------------ metadata
    shape = property(lambda self: self._shape, doc="Tuple of dimensions.")
    dtype = property(lambda self: self._dtype, doc="Element type.")
    strides = property(lambda self: self._strides, doc="Byte strides.")
    offset = property(lambda self: self._offset,
                      doc="Byte offset of element 0 in the buffer.")
    ndim = property(lambda self: len(self._shape))
    itemsize = property(lambda self: self._dtype.itemsize)
    size = property(lambda self: math.prod(self._shape))
    nbytes = property(lambda self: self.size * self._dtype.itemsize)
    buffer = property(lambda self: self._buf, doc="The _core.Buffer.")

    @property
    def device(self):
        """The device holding the array (a dict as in gpured.devices())."""
        return _core.devices()[self._buf.device]

    @property
    def released(self):
        return self._buf.released

    @property
    def flags(self):
        sh = self._sh()
        return {"C_CONTIGUOUS": sh.flags.c_contiguous,
                "F_CONTIGUOUS": sh.flags.f_contiguous}

    @classmethod
    def _wrap(cls, buf, shape, dtype, strides=None, offset=0):
        """Internal constructor: arguments already normalised."""
        a = object.__new__(cls)
        a._buf = buf
        a._shape = shape
        a._dtype = dtype
        a._strides = strides if strides is not None else _c_strides(shape, dtype.itemsize)
        a._offset = offset
        return a

    def _is_c(self):
        """C-contiguous (dimensions of length 1 have any stride)."""
        acc = self._dtype.itemsize
        for n, st in zip(reversed(self._shape), reversed(self._strides)):
            if n != 1 and st != acc:
                return False
            acc *= n
        return True

    def _sh(self):
        return _shadow(self._shape, self._strides, self._dtype, self._offset)

    def _from_shadow(self, sh):
        return Array(self._buf, sh.shape, self._dtype, sh.strides,
                     _shadow_offset(sh))

    def _live(self):
        if self._buf.released:
            raise ValueError("the device array has been released")
        return self

    @property
    def is_c_contiguous(self):
        return self._sh().flags.c_contiguous

    # ------------------------------------------------------------ lifetime
    def release(self):
        """Release the device memory now (this array and all its views)."""
        self._buf.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    # ------------------------------------------------------- host transfer
    def get(self, out=None):
        """Copy to host memory: a new NumPy array (or into ``out``)."""
        self._live()
        src = self if self.is_c_contiguous else self.copy()
        host = np.empty(self._shape, self._dtype)
        if host.size:
            _core.buffer_read(src._buf, src._offset, host)
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
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __repr__(self):
        if self._buf.released:
            return "gpured.Array(<released>, shape=%s, dtype=%s)" % (
                self._shape, self._dtype)
        body = np.array2string(self.get(), separator=", ", prefix="gpured.Array(")
        return "gpured.Array(%s, dtype=%s)" % (body, self._dtype)

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
        if self._dtype.kind not in "iu" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to "
                            "a scalar index")
        return int(self.get().reshape(()))

    def item(self):
        return self.get().item()

    def tolist(self):
        return self.get().tolist()

    # ----------------------------------------------------------------- views
    def __getitem__(self, key):
        self._live()
        if not _is_basic_key(key):
            return to_device(self.get()[key])
        keys = key if isinstance(key, tuple) else (key,)
        if not builtins_any(k is Ellipsis for k in keys):
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
        return self.astype(self._dtype)

    def astype(self, dtype, copy=True):
        """Converted copy on the device (NumPy's unsafe casting)."""
        dt = _check_dtype(dtype)
        self._live()
        if not copy and dt == self._dtype and self.is_c_contiguous:
            return self
        out = _empty_on(self._buf.device, self._shape, dt)
        _copy_into(self, out)
        return out

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


# ------------------------------------------------------------------ helpers

def _device_index():
    d = _core.get_device()
    for i, e in enumerate(_core.devices()):
        if e["index"] == d["index"]:
            return i
    raise RuntimeError("current device not found")  # pragma: no cover


def _empty_on(dev, shape, dtype):
    shape = tuple(int(n) for n in shape)
    if builtins_any(n < 0 for n in shape):
        raise ValueError("negative dimensions are not allowed")
    dt = _check_dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    return Array(_core.buffer_alloc(n, dev), shape, dt)


def builtins_any(it):
    for x in it:
        if x:
            return True
    return False


def _copy_into(src, dst, div=0.0):
    """dst[...] = src (same shape), cast, or src / div; on the device."""
    if src.shape != dst.shape:
        raise ValueError("shapes %s and %s differ" % (src.shape, dst.shape))
    if src.size == 0:
        return dst
    si, di = src.itemsize, dst.itemsize
    for a in (src, dst):
        if a._offset % a.itemsize or builtins_any(s % a.itemsize for s in a._strides):
            raise ValueError("misaligned device view")
    _core.device_copy(src._live()._buf, src.dtype, src._offset // si, src.shape,
                      [s // si for s in src._strides], dst._live()._buf,
                      dst.dtype, dst._offset // di,
                      [s // di for s in dst._strides], float(div))
    return dst


def same_device(*arrays):
    """The device index shared by the Arrays among ``arrays`` (None if
    there are none); ValueError if they live on two devices."""
    dev = None
    for a in arrays:
        if isinstance(a, Array):
            a._live()
            if dev is None:
                dev = a._buf.device
            elif a._buf.device != dev:
                names = [e["name"] for e in _core.devices()]
                raise ValueError("arrays on two devices (%s and %s): move one "
                                 "first" % (names[dev], names[a._buf.device]))
    return dev


# ------------------------------------------------------------------- public

def to_device(a, dtype=None):
    """Copy a NumPy array (or anything np.asarray takes) to the current
    device.  Large copies from host memory stream through pinned staging
    buffers on GPUs (see :func:`gpured.set_staging`)."""
    if isinstance(a, Array):
        dev = same_device(a)
        if dev == _device_index():
            return a if dtype is None else a.astype(dtype)
        a = a.get()
    return _upload_to(_device_index(), np.asarray(a, dtype=dtype))


def asnumpy(a):
    """A NumPy array: ``a.get()`` for an Array, ``np.asarray(a)`` otherwise."""
    return a.get() if isinstance(a, Array) else np.asarray(a)


def empty(shape, dtype=np.float64):
    """An uninitialised Array on the current device."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return _empty_on(_device_index(), shape, dtype)


def zeros(shape, dtype=np.float64):
    """An Array of zeros on the current device."""
    a = empty(shape, dtype)
    if a.nbytes:
        _core.buffer_fill(a._buf, 0, a.nbytes, b"\0")
    return a


def synchronize():
    """Wait until everything enqueued on the current device has finished."""
    _core.finish()


def set_staging(chunk_bytes=None, buffers=None, min_bytes=None, force=None,
                threads=None):
    """Settings of the pinned staging pool that host arrays stream through
    on GPUs: ``chunk_bytes`` per pinned buffer (default 64 MiB), ``buffers``
    (default 4: at most chunk_bytes x buffers of pinned memory, and as much
    device memory for reductions), ``min_bytes`` (smaller inputs take the
    plain path; default 16 MiB), ``force`` (stream on CPU devices too: for
    tests), ``threads`` (memcpy threads; 0: one per CPU, up to 16).  Returns the previous
    settings.  Changing them frees the pool."""
    old = staging()
    new = {k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes", "force",
                               "threads")}
    for k, v in (("chunk_bytes", chunk_bytes), ("buffers", buffers),
                 ("min_bytes", min_bytes), ("force", force),
                 ("threads", threads)):
        if v is not None:
            new[k] = v
    _core.set_staging(int(new["chunk_bytes"]), int(new["buffers"]),
                      int(new["min_bytes"]), bool(new["force"]),
                      int(new["threads"]))
    return old


def staging():
    """The staging settings and counters: ``streams`` (host transfers that
    went through the pool) and ``chunks`` (pinned chunks moved)."""
    return _core.staging()


def host_roundtrip(fn):
    """Wrap a host-only function so that it accepts Arrays: their values go
    to the host, and NumPy results come back as Arrays on their device."""
    import functools

    def back(r, dev):
        if isinstance(r, tuple):
            return tuple(back(x, dev) for x in r)
        if isinstance(r, (np.ndarray, np.generic)):
            r = np.asarray(r)
            if r.dtype.kind in "biuf":
                return _upload_to(dev, r)
        return r

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        dev = same_device(*args, *kw.values())
        if dev is None:
            return fn(*args, **kw)
        out = kw.get("out")
        if isinstance(out, Array):
            kw = dict(kw)
            del kw["out"]
        args = [a.get() if isinstance(a, Array) else a for a in args]
        kw = {k: (v.get() if isinstance(v, Array) else v) for k, v in kw.items()}
        r = back(fn(*args, **kw), dev)
        if isinstance(out, Array):
            _copy_into(r if isinstance(r, Array) else _upload_to(dev, np.asarray(r)), out)
            return out
        return r
    return wrapper


def _upload_to(dev, host):
    host = np.asarray(host, dtype=_check_dtype(host.dtype), order="C")
    out = _empty_on(dev, host.shape, host.dtype)
    if host.size:
        _core.buffer_write(out._buf, 0, host)
    return out
