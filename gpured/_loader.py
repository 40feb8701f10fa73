"""OpenCL from wheels: the ICD loader and CPU runtimes, before gpured._core loads.

gpured._core links ``libOpenCL.so.1``, the ICD loader, which finds the
drivers ("ICDs") through ``.icd`` files, by default in /etc/OpenCL/vendors.
A machine without system OpenCL can get every piece from PyPI
(``pip install gpured[cpu]``):

* the loader: ``nvidia-cuda-opencl`` ships one (no NVIDIA driver needed).
  :func:`load_loader` loads the system's ``libOpenCL.so.1`` if there is one,
  else the wheel's, with RTLD_GLOBAL, so that the dynamic linker resolves
  _core's dependency to it;
* a CPU runtime: PoCL (``pocl-binary-distribution``) or Intel's
  (``intel-opencl-rt`` + ``intel-cmplr-lib-rt``).  Neither is registered
  where a loader looks: PoCL's .icd names a bare file name and Intel's a
  placeholder path.  :func:`register_runtimes` writes a directory of .icd
  files holding absolute paths -- the wheels' runtimes plus copies of the
  system's own .icd files, so that system devices stay visible -- and points
  ``OCL_ICD_VENDORS`` at it (ocl-icd, Debian's loader, honours only that; so
  do NVIDIA's and Khronos' loaders).  A loader that knows only
  ``OCL_ICD_FILENAMES`` gets that instead.

Nothing is registered when the user has set ``OCL_ICD_VENDORS`` or
``OCL_ICD_FILENAMES``: their choice stands.  ``GPURED_OPENCL_LOADER=<path of
a libOpenCL.so.1>`` forces a loader.  ``GPURED_IGNORE_SYSTEM_OPENCL=1``
acts as if the machine had no OpenCL of its own (no system loader, no
/etc/OpenCL/vendors): the pip-only route, testable anywhere (the build
honours it too).  ``gpured._loader.state`` tells what was done.
"""
import ctypes
import glob
import hashlib
import os
import site
import sys
import tempfile

LOADER = "libOpenCL.so.1"
SYSTEM_VENDORS = "/etc/OpenCL/vendors"
ENV_VARS = ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES")

FIX = ("Install one: `pip install gpured[cpu]` (a loader and PoCL's CPU runtime "
       "from PyPI), `pip install nvidia-cuda-opencl` (the loader alone), or the "
       "system's (`apt install ocl-icd-libopencl1` on Debian/Ubuntu, "
       "`dnf install ocl-icd` on Fedora); or set GPURED_OPENCL_LOADER to the "
       "path of a libOpenCL.so.1.")

# Intel's loader (in <prefix>/lib beside its runtime) has no RUNPATH: its
# dependencies from intel-cmplr-lib-rt are loaded first, from the same folder.
_INTEL_LOADER_DEPS = ("libintlc.so.5", "libimf.so", "libirng.so", "libsvml.so")

# What setup() did: loader (path), loader_source ("system", "wheel",
# "GPURED_OPENCL_LOADER"), runtimes [(name, path)], vendors_dir, variable
# (the one set, or None), skipped (why nothing was registered).
state = {}


def site_dirs():
    """Folders where wheels' files are: sys.path plus the site folders."""
    out = []
    extra = []
    try:
        extra = site.getsitepackages()
    except AttributeError:  # pragma: no cover - old virtualenv's site.py
        pass
    try:
        extra.append(site.getusersitepackages())
    except AttributeError:  # pragma: no cover
        pass
    for d in list(sys.path) + extra:
        d = os.path.abspath(d) if d else ""
        if d and d not in out and os.path.isdir(d):
            out.append(d)
    return out


def data_lib_dirs():
    """Where wheels' data files for lib/ go: <prefix>/lib (Intel's wheels)."""
    out = []
    for p in (sys.prefix, getattr(site, "USER_BASE", None)):
        if p:
            d = os.path.join(p, "lib")
            if d not in out and os.path.isdir(d):
                out.append(d)
    return out


def wheel_loaders(sites=None, libs=None):
    """Paths of ICD loaders shipped by wheels, best first."""
    sites = site_dirs() if sites is None else sites
    libs = data_lib_dirs() if libs is None else libs
    out = []
    for d in sites:  # nvidia-cuda-opencl: nvidia/cu13/lib, nvidia/cuda_opencl/lib
        out += sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib", LOADER)))
    for d in libs:  # intel-opencl-rt's, needs intel-cmplr-lib-rt
        p = os.path.join(d, LOADER)
        if os.path.exists(os.path.join(d, "libintelocl.so")) and os.path.exists(p):
            out.append(p)
    return out


def _loaded_path(name="libOpenCL.so"):
    """The file the process mapped for `name` (from /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith(name):
                    return path
    except OSError:  # pragma: no cover - not Linux
        pass
    return None


def _dlopen(path):
    d = os.path.dirname(path)
    if os.path.isabs(path) and os.path.exists(os.path.join(d, "libintelocl.so")):
        for dep in _INTEL_LOADER_DEPS:
            try:
                ctypes.CDLL(os.path.join(d, dep), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
    return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


def load_loader(candidates=None, system=True):
    """Load an ICD loader with RTLD_GLOBAL; return (path, source).

    The user's GPURED_OPENCL_LOADER first, then the system's libOpenCL.so.1
    (if ``system``), then the wheels' (``candidates``, default
    :func:`wheel_loaders`).  ImportError naming the fix if none loads.
    """
    forced = os.environ.get("GPURED_OPENCL_LOADER")
    if forced:
        try:
            _dlopen(forced)
        except OSError as e:
            raise ImportError("gpured: GPURED_OPENCL_LOADER=%s cannot be loaded (%s). %s"
                              % (forced, e, FIX)) from None
        return forced, "GPURED_OPENCL_LOADER"
    errors = []
    if system:
        try:
            ctypes.CDLL(LOADER, mode=ctypes.RTLD_GLOBAL)
            return _loaded_path() or LOADER, "system"
        except OSError as e:
            errors.append(str(e))
    for path in wheel_loaders() if candidates is None else candidates:
        try:
            _dlopen(path)
            return path, "wheel"
        except OSError as e:
            errors.append(str(e))
    raise ImportError("gpured needs an OpenCL ICD loader (%s) and found none "
                      "(not on the system, not in a wheel). %s\n(tried: %s)"
                      % (LOADER, FIX, "; ".join(errors) or "nothing"))


def wheel_runtimes(sites=None, libs=None):
    """CPU runtimes installed from wheels: [(name, absolute library path)]."""
    sites = site_dirs() if sites is None else sites
    libs = data_lib_dirs() if libs is None else libs
    out, seen = [], set()
    for d in sites:  # pocl-binary-distribution puts PoCL in pyopencl/.libs
        for p in sorted(glob.glob(os.path.join(d, "pyopencl", ".libs", "libpocl*.so*"))):
            real = os.path.realpath(p)
            if real not in seen:
                seen.add(real)
                out.append(("pocl", p))
    for d in libs:  # intel-opencl-rt puts its runtime in <prefix>/lib
        p = os.path.join(d, "libintelocl.so")
        if os.path.exists(p) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            out.append(("intel-cpu", p))
    return out


def system_icds(vendors=None):
    """{file name: content} of the system's .icd files."""
    vendors = vendors or os.environ.get("OPENCL_VENDOR_PATH") or SYSTEM_VENDORS
    out = {}
    for p in sorted(glob.glob(os.path.join(vendors, "*.icd"))):
        try:
            with open(p) as f:
                out[os.path.basename(p)] = f.read()
        except OSError:
            continue
    return out


def _cache_root():
    d = os.environ.get("GPURED_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "gpured")
    return d


def vendors_dir(files, root=None):
    """A directory holding exactly ``files`` ({name: content}); the same
    content gives the same directory (written once, atomically)."""
    key = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:16]
    for base in ([root] if root else [_cache_root(), tempfile.gettempdir()]):
        target = os.path.join(base, "icd-" + key)
        if os.path.isdir(target):
            return target
        try:
            os.makedirs(base, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=".icd-", dir=base)
            for name, text in files.items():
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
            try:
                os.rename(tmp, target)
            except OSError:  # another process made it first
                for name in files:
                    os.unlink(os.path.join(tmp, name))
                os.rmdir(tmp)
            return target
        except OSError:
            continue
    return None


def honours_vendors(loader_path):
    """Whether a loader reads OCL_ICD_VENDORS (ocl-icd, NVIDIA's and recent
    Khronos loaders do; it is named in their binary)."""
    try:
        with open(loader_path, "rb") as f:
            return b"OCL_ICD_VENDORS" in f.read()
    except OSError:
        return True  # unknown: the variable the common loaders honour


def register_runtimes(loader_path, runtimes=None, system=None, environ=None, root=None):
    """Make the wheels' runtimes visible to the loader (see the module text).

    Returns the variable set, or None (nothing to register, or the user's
    own OCL_ICD_* setting).  Writes only to ``environ`` (default os.environ).
    """
    environ = os.environ if environ is None else environ
    user = [v for v in ENV_VARS if environ.get(v)]
    if user:
        state["skipped"] = "%s set by the user" % user[0]
        return None
    runtimes = wheel_runtimes() if runtimes is None else runtimes
    if not runtimes:
        state["skipped"] = "no runtime from a wheel"
        return None
    state["runtimes"] = list(runtimes)
    if loader_path and not honours_vendors(loader_path):
        environ["OCL_ICD_FILENAMES"] = os.pathsep.join(p for _, p in runtimes)
        state["variable"] = "OCL_ICD_FILENAMES"
        return "OCL_ICD_FILENAMES"
    files = dict(system_icds() if system is None else system)
    for name, path in runtimes:
        files["gpured-wheel-%s.icd" % name] = os.path.abspath(path) + "\n"
    d = vendors_dir(files, root)
    if d is None:
        state["skipped"] = "no writable folder for the .icd files"
        return None
    # the trailing slash: NVIDIA's loader joins the variable and the file
    # name without adding one
    environ["OCL_ICD_VENDORS"] = d + "/"
    state["vendors_dir"] = d
    state["variable"] = "OCL_ICD_VENDORS"
    return "OCL_ICD_VENDORS"


def ignore_system():
    return os.environ.get("GPURED_IGNORE_SYSTEM_OPENCL", "").strip().lower() not in (
        "", "0", "no", "false")


def setup():
    """Called first thing by gpured/__init__.py, before _core is imported."""
    if state.get("done"):
        return state
    no_system = ignore_system()
    path, source = load_loader(system=not no_system)
    state.update(loader=path, loader_source=source)
    register_runtimes(path, system={} if no_system else None)
    state["done"] = True
    return state
