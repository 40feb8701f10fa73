# Type stubs for gpured's public API.  The knobs every algorithm takes are
# spelled out: ``variant`` (see ``gpured.variants``) and its tuning knobs, and
# ``device`` (an index into ``gpured.devices()``, a "platform:device" string
# or part of a device/platform name; None: the current device).
from types import TracebackType
from typing import Any, Literal, Sequence, TypedDict

import numpy as np
import numpy.typing as npt

__version__: str
__all__: list[str]

_Axis = int | tuple[int, ...] | None
_DType = npt.DTypeLike | None
_Device = int | str | None
_Out = npt.NDArray[Any] | Array | None
# The result of a reduction or scan: a NumPy scalar or array for host input
# (as NumPy's), an Array (0-d for a full reduction) for Array input.
_Result = Any

ReduceVariant = Literal[
    "auto", "naive", "divergence_free", "unroll_last", "unroll_complete",
    "stride_global", "stride_local", "vector", "workgroup", "subgroup",
    "atomic", "chunked", "segment_per_item", "segment_per_warp"]
ScanVariant = Literal[
    "auto", "naive", "blelloch", "workgroup", "subgroup", "reduce_then_scan",
    "decoupled_lookback", "row_per_item"]
ByKeyVariant = Literal[
    "auto", "atomic", "warp_aggregated", "local_hash", "sorted_segments",
    "private_bins", "lookback", "fixed_point"]
ReduceOp = Literal["sum", "prod", "min", "max", "all", "any", "mean", "argmin", "argmax"]
ReduceatVariant = Literal["auto", "segment_per_group", "segment_per_item",
                          "segment_per_warp"]
ReduceatOp = Literal["add", "sum", "multiply", "prod", "minimum", "min", "maximum", "max",
                     "logical_and", "all", "logical_or", "any"]
ScanOp = Literal["cumsum", "cumprod", "cummin", "cummax"]
ByKeyFunc = Literal["reduce_by_key", "sum_by_key", "scan_by_key"]
ByKeyOp = Literal["sum", "prod", "min", "max", "count"]


class OpenCLError(RuntimeError): ...
class VariantUnavailable(ValueError): ...


class DeviceInfo(TypedDict, total=False):
    name: str
    platform: str
    vendor: str
    version: str
    driver: str
    opencl_c: str
    platform_version: str
    type: str
    index: str
    compute_units: int
    max_work_group_size: int
    local_mem_size: int
    global_mem_size: int
    max_alloc_size: int
    fp64: bool
    atomics64: bool
    subgroups: bool
    wg_collectives: bool
    nvidia_ptx: bool


class Array:
    """An n-d array in one OpenCL device's memory."""
    __array_priority__: int
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @property
    def offset(self) -> int: ...
    @property
    def ndim(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def buffer(self) -> Any: ...
    @property
    def device(self) -> DeviceInfo: ...
    @property
    def released(self) -> bool: ...
    @property
    def flags(self) -> dict[str, bool]: ...
    @property
    def is_c_contiguous(self) -> bool: ...
    @property
    def T(self) -> Array: ...
    def release(self) -> None: ...
    def __enter__(self) -> Array: ...
    def __exit__(self, exc_type: type[BaseException] | None,
                 exc: BaseException | None, tb: TracebackType | None) -> bool: ...
    def get(self, out: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]: ...
    def __array__(self, dtype: _DType = None, copy: bool | None = None) -> npt.NDArray[Any]: ...
    def item(self) -> Any: ...
    def tolist(self) -> Any: ...
    def __len__(self) -> int: ...
    def __float__(self) -> float: ...
    def __int__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __index__(self) -> int: ...
    def __getitem__(self, key: Any) -> Array: ...
    def reshape(self, *shape: int | Sequence[int], order: Literal["C", "A"] = "C") -> Array: ...
    def ravel(self) -> Array: ...
    def flatten(self) -> Array: ...
    def transpose(self, *axes: int | Sequence[int] | None) -> Array: ...
    def swapaxes(self, a: int, b: int) -> Array: ...
    def copy(self) -> Array: ...
    def astype(self, dtype: _DType, copy: bool = True) -> Array: ...
    def sum(self, *args: Any, **kw: Any) -> Array: ...
    def prod(self, *args: Any, **kw: Any) -> Array: ...
    def min(self, *args: Any, **kw: Any) -> Array: ...
    def max(self, *args: Any, **kw: Any) -> Array: ...
    def mean(self, *args: Any, **kw: Any) -> Array: ...
    def all(self, *args: Any, **kw: Any) -> Array: ...
    def any(self, *args: Any, **kw: Any) -> Array: ...
    def argmin(self, *args: Any, **kw: Any) -> Array: ...
    def argmax(self, *args: Any, **kw: Any) -> Array: ...
    def cumsum(self, *args: Any, **kw: Any) -> Array: ...
    def cumprod(self, *args: Any, **kw: Any) -> Array: ...
    @property
    def device_index(self) -> int: ...
    def to_pyopencl(self, queue: Any = None) -> Any: ...
    @classmethod
    def from_pyopencl(cls, a: Any) -> Array: ...
    @classmethod
    def from_dlpack(cls, x: Any, device: _Device = None) -> Array: ...
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...


# ------------------------------------------------------------- reductions
# where: NumPy's mask (bool, broadcast against a), or a bool device Array.
_Where = npt.ArrayLike | Array | bool
# Knobs: variant; wg_size (work-group size, a power of two); groups
# (work-groups per segment, 1..65535); items (elements per work-item);
# ilp (independent accumulators, 1..8); vw (vector width 1, 2, 4, 8, 16).

def sum(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
        out: _Out = None, keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None,
        exact: bool = False) -> _Result: ...
def nansum(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
           out: _Out = None, keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None,
           exact: bool = False) -> _Result: ...
def prod(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
         out: _Out = None, keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
         variant: ReduceVariant | str = "auto", wg_size: int | None = None,
         groups: int | None = None, items: int | None = None, ilp: int | None = None,
         vw: int | None = None, device: _Device = None) -> _Result: ...
def nanprod(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
            out: _Out = None, keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
            variant: ReduceVariant | str = "auto", wg_size: int | None = None,
            groups: int | None = None, items: int | None = None, ilp: int | None = None,
            vw: int | None = None, device: _Device = None) -> _Result: ...
def min(a: npt.ArrayLike | Array, axis: _Axis = None, out: _Out = None,
        keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def max(a: npt.ArrayLike | Array, axis: _Axis = None, out: _Out = None,
        keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def nanmin(a: npt.ArrayLike | Array, axis: _Axis = None, out: _Out = None,
           keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None) -> _Result: ...
def nanmax(a: npt.ArrayLike | Array, axis: _Axis = None, out: _Out = None,
           keepdims: bool = False, initial: Any = ..., where: _Where = True, *,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None) -> _Result: ...
def reduceat(a: npt.ArrayLike | Array, indices: npt.ArrayLike | Array, axis: int | None = 0,
             dtype: _DType = None, out: _Out | tuple[Any] = None,
             op: ReduceatOp | np.ufunc | str = "add", *,
             variant: ReduceatVariant | str = "auto", wg_size: int | None = None,
             groups: int | None = None, vw: int | None = None,
             device: _Device = None) -> _Result: ...
def ptp(a: npt.ArrayLike | Array, axis: _Axis = None, out: npt.NDArray[Any] | None = None,
        keepdims: bool = False, *,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def count_nonzero(a: npt.ArrayLike | Array, axis: _Axis = None, *, keepdims: bool = False,
                  variant: ReduceVariant | str = "auto", wg_size: int | None = None,
                  groups: int | None = None, items: int | None = None, ilp: int | None = None,
                  vw: int | None = None, device: _Device = None) -> Any: ...
def all(a: npt.ArrayLike | Array, axis: _Axis = None, out: _Out = None,
        keepdims: bool = False, *, where: _Where = True,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def any(a: npt.ArrayLike | Array, axis: _Axis = None, out: _Out = None,
        keepdims: bool = False, *, where: _Where = True,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def mean(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
         out: _Out = None, keepdims: bool = False, *, where: _Where = True,
         variant: ReduceVariant | str = "auto", wg_size: int | None = None,
         groups: int | None = None, items: int | None = None, ilp: int | None = None,
         vw: int | None = None, device: _Device = None,
         exact: bool = False) -> _Result: ...
def average(a: npt.ArrayLike | Array, axis: _Axis = None,
            weights: npt.ArrayLike | Array | None = None, returned: bool = False, *,
            keepdims: bool = ...,
            variant: ReduceVariant | str = "auto", wg_size: int | None = None,
            groups: int | None = None, items: int | None = None, ilp: int | None = None,
            vw: int | None = None, device: _Device = None) -> Any: ...
def nanmean(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
            out: npt.NDArray[Any] | None = None, keepdims: bool = False, *, where: _Where = True,
            variant: ReduceVariant | str = "auto", wg_size: int | None = None,
            groups: int | None = None, items: int | None = None, ilp: int | None = None,
            vw: int | None = None, device: _Device = None,
            exact: bool = False) -> _Result: ...
def var(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
        out: _Out = None, ddof: float = 0, keepdims: bool = False, *,
        where: _Where = True, correction: float = ...,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def std(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
        out: _Out = None, ddof: float = 0, keepdims: bool = False, *,
        where: _Where = True, correction: float = ...,
        variant: ReduceVariant | str = "auto", wg_size: int | None = None,
        groups: int | None = None, items: int | None = None, ilp: int | None = None,
        vw: int | None = None, device: _Device = None) -> _Result: ...
def nanvar(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
           out: _Out = None, ddof: float = 0, keepdims: bool = False, *,
           where: _Where = True, correction: float = ...,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None) -> _Result: ...
def nanstd(a: npt.ArrayLike | Array, axis: _Axis = None, dtype: _DType = None,
           out: _Out = None, ddof: float = 0, keepdims: bool = False, *,
           where: _Where = True, correction: float = ...,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None) -> _Result: ...
def argmin(a: npt.ArrayLike | Array, axis: int | None = None, out: _Out = None,
           keepdims: bool = False, *,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None) -> _Result: ...
def nanargmin(a: npt.ArrayLike | Array, axis: int | None = None, out: _Out = None, *,
              keepdims: bool = False,
              variant: ReduceVariant | str = "auto", wg_size: int | None = None,
              groups: int | None = None, items: int | None = None, ilp: int | None = None,
              vw: int | None = None, device: _Device = None) -> _Result: ...
def nanargmax(a: npt.ArrayLike | Array, axis: int | None = None, out: _Out = None, *,
              keepdims: bool = False,
              variant: ReduceVariant | str = "auto", wg_size: int | None = None,
              groups: int | None = None, items: int | None = None, ilp: int | None = None,
              vw: int | None = None, device: _Device = None) -> _Result: ...
def argmax(a: npt.ArrayLike | Array, axis: int | None = None, out: _Out = None,
           keepdims: bool = False, *,
           variant: ReduceVariant | str = "auto", wg_size: int | None = None,
           groups: int | None = None, items: int | None = None, ilp: int | None = None,
           vw: int | None = None, device: _Device = None) -> _Result: ...


# ------------------------------------------------------------------ scans
# Knobs: variant; wg_size; items (elements per work-item); groups; ilp;
# spins (decoupled look-back: polls before a stalled tile is reduced).

def cumsum(a: npt.ArrayLike | Array, axis: int | None = None, dtype: _DType = None,
           out: _Out = None, exclusive: bool = False, *,
           variant: ScanVariant | str = "auto", wg_size: int | None = None,
           items: int | None = None, groups: int | None = None, ilp: int | None = None,
           spins: int | None = None, device: _Device = None) -> _Result: ...
def nancumsum(a: npt.ArrayLike | Array, axis: int | None = None, dtype: _DType = None,
              out: _Out = None, exclusive: bool = False, *,
              variant: ScanVariant | str = "auto", wg_size: int | None = None,
              items: int | None = None, groups: int | None = None, ilp: int | None = None,
              spins: int | None = None, device: _Device = None) -> _Result: ...
def cumprod(a: npt.ArrayLike | Array, axis: int | None = None, dtype: _DType = None,
            out: _Out = None, exclusive: bool = False, *,
            variant: ScanVariant | str = "auto", wg_size: int | None = None,
            items: int | None = None, groups: int | None = None, ilp: int | None = None,
            spins: int | None = None, device: _Device = None) -> _Result: ...
def nancumprod(a: npt.ArrayLike | Array, axis: int | None = None, dtype: _DType = None,
               out: _Out = None, exclusive: bool = False, *,
               variant: ScanVariant | str = "auto", wg_size: int | None = None,
               items: int | None = None, groups: int | None = None, ilp: int | None = None,
               spins: int | None = None, device: _Device = None) -> _Result: ...
def cummin(a: npt.ArrayLike | Array, axis: int | None = None, dtype: _DType = None,
           out: _Out = None, exclusive: bool = False, *,
           variant: ScanVariant | str = "auto", wg_size: int | None = None,
           items: int | None = None, groups: int | None = None, ilp: int | None = None,
           spins: int | None = None, device: _Device = None) -> _Result: ...
def cummax(a: npt.ArrayLike | Array, axis: int | None = None, dtype: _DType = None,
           out: _Out = None, exclusive: bool = False, *,
           variant: ScanVariant | str = "auto", wg_size: int | None = None,
           items: int | None = None, groups: int | None = None, ilp: int | None = None,
           spins: int | None = None, device: _Device = None) -> _Result: ...


# ----------------------------------------------------------- reduce by key
# Knobs: variant; wg_size; items.

def reduce_by_key(keys: npt.ArrayLike | Array, values: npt.ArrayLike | Array | None,
                  op: ByKeyOp | str = "sum", *, deterministic: bool = False,
                  variant: ByKeyVariant | str | None = None, wg_size: int | None = None,
                  items: int | None = None,
                  device: _Device = None) -> tuple[Any, Any]: ...
def scan_by_key(keys: npt.ArrayLike | Array, values: npt.ArrayLike | Array,
                op: ByKeyOp | str = "sum", exclusive: bool = False, *,
                variant: ByKeyVariant | str | None = None, wg_size: int | None = None,
                items: int | None = None, device: _Device = None) -> Any: ...
def sum_by_key(keys: npt.ArrayLike | Array, values: npt.ArrayLike | Array,
               num_keys: int | None = None, op: ByKeyOp | str = "sum", *,
               deterministic: bool = False, sorted: bool | None = None,
               exact: bool = False,
               variant: ByKeyVariant | Literal["host"] | str | None = None,
               wg_size: int | None = None,
               items: int | None = None, device: _Device = None) -> Any: ...
def variants_by_key(func: ByKeyFunc | str = "sum_by_key", keys_dtype: _DType = "int64",
                    values_dtype: _DType = "float64", op: ByKeyOp | str = "sum") -> list[str]: ...
def explain_by_key(func: ByKeyFunc | str, keys: npt.ArrayLike | Array,
                   values: npt.ArrayLike | Array | None = None, op: ByKeyOp | str = "sum",
                   num_keys: int | None = None, *, deterministic: bool = False,
                   sorted: bool | None = None, exclusive: bool = False,
                   exact: bool = False,
                   variant: ByKeyVariant | str | None = None, wg_size: int | None = None,
                   items: int | None = None, device: _Device = None) -> dict[str, Any]: ...
def timeit_by_key(func: ByKeyFunc | str, keys: npt.ArrayLike | Array,
                  values: npt.ArrayLike | Array | None = None, op: ByKeyOp | str = "sum",
                  num_keys: int | None = None, reps: int = 10, *,
                  deterministic: bool = False, sorted: bool | None = None,
                  exclusive: bool = False, exact: bool = False,
                  variant: ByKeyVariant | str | None = None,
                  wg_size: int | None = None, items: int | None = None,
                  device: _Device = None) -> dict[str, Any]: ...


# ----------------------------------------------------------- introspection

def variants(op: ReduceOp | ScanOp | str = "sum", dtype: _DType = "float32") -> list[str]: ...
def explain(op: ReduceOp | ScanOp | str, a: npt.ArrayLike | Array, axis: _Axis = None,
            dtype: _DType = None, *, variant: str = "auto", wg_size: int | None = None,
            groups: int | None = None, items: int | None = None, ilp: int | None = None,
            vw: int | None = None, spins: int | None = None, exclusive: bool = False,
            indices: npt.ArrayLike | Array | None = None, ufunc: str | None = None,
            device: _Device = None) -> dict[str, Any]: ...
def timeit(op: ReduceOp | ScanOp | str, a: npt.ArrayLike | Array, axis: _Axis = None,
           dtype: _DType = None, reps: int = 10, *, variant: str = "auto",
           wg_size: int | None = None, groups: int | None = None, items: int | None = None,
           ilp: int | None = None, vw: int | None = None, spins: int | None = None,
           exclusive: bool = False, indices: npt.ArrayLike | Array | None = None,
           ufunc: str | None = None, device: _Device = None) -> dict[str, Any]: ...
def tune(ops: Sequence[ReduceOp | str] = ("sum",), dtypes: Sequence[_DType] = ("float32",),
         sizes: Sequence[int] = (2**20, 2**24, 2**28), reps: int = 5, save: bool = True,
         verbose: bool = False, progress: bool | None = None,
         rates: bool = True) -> list[dict[str, Any]]: ...
def kernel_source(family: Literal["reduce", "scan", "bykey", "copy"] | str = "reduce") -> str: ...


# ----------------------------------------------------------------- devices

def devices() -> list[DeviceInfo]: ...
def get_device() -> DeviceInfo: ...
def set_device(spec: int | str | None = None, queue: Any = None) -> DeviceInfo: ...
def cache_dir() -> str: ...


# ----------------------------------------------------------- device arrays

def to_device(a: npt.ArrayLike | Array, dtype: _DType = None, *,
              device: _Device = None) -> Array: ...
def asnumpy(a: npt.ArrayLike | Array) -> npt.NDArray[Any]: ...
def empty(shape: int | Sequence[int], dtype: _DType = np.float64, *,
          device: _Device = None) -> Array: ...
def zeros(shape: int | Sequence[int], dtype: _DType = np.float64, *,
          device: _Device = None) -> Array: ...
def synchronize(device: _Device = None) -> None: ...
def set_staging(chunk_bytes: int | None = None, buffers: int | None = None,
                min_bytes: int | None = None, force: bool | None = None,
                threads: int | None = None,
                register: Literal["auto", "always", "never"] | None = None
                ) -> dict[str, Any]: ...
def staging() -> dict[str, Any]: ...
def memory_info(device: _Device = None) -> dict[str, int]: ...
def empty_cache(device: _Device = None) -> None: ...
def set_memory_limit(nbytes: int, device: _Device = None) -> None: ...
def from_dlpack(x: Any, device: _Device = None) -> Array: ...
def use_queue(queue: Any) -> int: ...
def handles(device: _Device = None) -> dict[str, int]: ...
def placement(mode: Literal["auto", "current"] | None = None) -> str: ...
def rates(device: _Device = None) -> dict[str, Any]: ...
def set_rates(device: _Device = None, *, host_call_us: float | None = None,
              device_call_us: float | None = None,
              host_gbs: dict[str, float] | None = None,
              device_gbs: dict[str, float] | None = None,
              threads_call_us: float | None = None,
              threads_gbs: dict[str, float] | None = None) -> dict[str, Any]: ...
def measure_rates(sizes: tuple[int, int] = ..., reps: int | None = None,
                  device: int | str | dict[str, Any] | None = None,
                  save: bool = False) -> dict[str, Any]: ...
def host_threads() -> int: ...
def set_host_threads(n: int = 0) -> int: ...
def split_rates() -> dict[str, float]: ...
def set_split_rates(**gbs: float) -> dict[str, float]: ...
def measure_split(sizes: tuple[int, int] = ..., reps: int | None = None,
                  save: bool = False) -> dict[str, float] | None: ...
