"""Where the build finds OpenCL: headers (CL/cl.h) and the ICD loader to link.

Shared by setup.py (which compiles) and gpured_build.py (the PEP 517 backend,
which asks for the ``nvidia-cuda-opencl`` wheel as a build requirement only
when the system cannot provide both).  Order of preference:

1. ``GPURED_OPENCL_INCLUDE`` (a directory holding CL/cl.h) and
   ``GPURED_OPENCL_LIB`` (a libOpenCL.so / libOpenCL.so.1 file or its
   directory): the user's word.
2. The system, as the C compiler sees it (its default include and library
   paths plus CPATH, C_INCLUDE_PATH, LIBRARY_PATH): Debian's
   ``opencl-c-headers`` + ``ocl-icd-opencl-dev``, a CUDA toolkit on the paths...
   A runtime-only loader (libOpenCL.so.1 without the libOpenCL.so link) is
   linked by its full path.
3. A PyPI wheel on sys.path: ``nvidia-cuda-opencl`` ships the OpenCL 3.0
   headers and an ICD loader (``nvidia/<cuXX or cuda_opencl>/include``,
   ``.../lib/libOpenCL.so.1``).

``GPURED_IGNORE_SYSTEM_OPENCL=1`` skips step 2: it builds and links against
the wheel as on a machine without system OpenCL (the wheel's include
directory then comes first on the compiler's search path, so its CL/cl.h is
the one compiled even where /usr/include/CL exists).

Nothing here imports anything outside the standard library.
"""
import glob
import os
import shlex
import subprocess
import sys
import sysconfig

WHEEL = "nvidia-cuda-opencl"

FIX = ("Install the OpenCL headers and loader, one of:\n"
       "  pip install %s     (headers + loader from PyPI: `pip install .`\n"
       "                                 adds it by itself; with --no-build-isolation\n"
       "                                 install it first)\n"
       "  apt install opencl-c-headers ocl-icd-opencl-dev   (Debian/Ubuntu)\n"
       "  dnf install opencl-headers ocl-icd-devel          (Fedora/RHEL)\n"
       "or point the build at them: GPURED_OPENCL_INCLUDE=<dir holding CL/cl.h>,\n"
       "GPURED_OPENCL_LIB=<libOpenCL.so.1 or its directory>." % WHEEL)


class OpenCLNotFound(RuntimeError):
    pass


def _truthy(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "no", "false")


def ignore_system():
    return _truthy("GPURED_IGNORE_SYSTEM_OPENCL")


def _compiler():
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)


def _run(cmd, stdin=""):
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return p


def system_headers():
    """True when the C compiler finds <CL/cl.h> on its own search path."""
    p = _run(_compiler() + ["-E", "-x", "c", "-", "-o", os.devnull],
             "#include <CL/cl.h>\n")
    if p is not None:
        return p.returncode == 0
    # no compiler to ask: the usual places
    dirs = ["/usr/include", "/usr/local/include"]
    for var in ("CPATH", "C_INCLUDE_PATH"):
        dirs += [d for d in os.environ.get(var, "").split(os.pathsep) if d]
    return any(os.path.isfile(os.path.join(d, "CL", "cl.h")) for d in dirs)


def system_library():
    """How to link the system's loader: ["-lOpenCL"] where libOpenCL.so is on
    the compiler's library path, [<path of libOpenCL.so.1>] where only the
    runtime library is, None where neither is."""
    for name in ("libOpenCL.so", "libOpenCL.so.1"):
        p = _run(_compiler() + ["-print-file-name=" + name])
        if p is None or p.returncode != 0:
            continue
        path = p.stdout.strip()
        if os.path.isabs(path) and os.path.exists(path):
            return ["-lOpenCL"] if name == "libOpenCL.so" else [path]
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib",
              "/usr/lib/aarch64-linux-gnu"):
        if os.path.exists(os.path.join(d, "libOpenCL.so")):
            return ["-L" + d, "-lOpenCL"]
        if os.path.exists(os.path.join(d, "libOpenCL.so.1")):
            return [os.path.join(d, "libOpenCL.so.1")]
    return None


def wheel_dirs(paths=None):
    """(include dir, loader path or None) of an OpenCL wheel on ``paths``
    (default sys.path), or None.  nvidia-cuda-opencl 12.x installs under
    nvidia/cuda_opencl/, 13.x under nvidia/cu13/."""
    for base in (sys.path if paths is None else paths):
        if not base or not os.path.isdir(base):
            continue
        for h in sorted(glob.glob(os.path.join(base, "nvidia", "*", "include", "CL", "cl.h"))):
            root = os.path.dirname(os.path.dirname(os.path.dirname(h)))
            libs = sorted(glob.glob(os.path.join(root, "lib", "libOpenCL.so*")))
            return os.path.dirname(os.path.dirname(h)), (libs[0] if libs else None)
    return None


def _user_lib(value):
    if os.path.isdir(value):
        for name in ("libOpenCL.so", "libOpenCL.so.1"):
            if os.path.exists(os.path.join(value, name)):
                return [os.path.join(value, name)]
        raise OpenCLNotFound("GPURED_OPENCL_LIB=%s holds no libOpenCL.so or "
                             "libOpenCL.so.1" % value)
    if os.path.exists(value):
        return [value]
    raise OpenCLNotFound("GPURED_OPENCL_LIB=%s does not exist" % value)


def find(paths=None):
    """Resolve the build's OpenCL: dict(include_dirs=[...], link_args=[...],
    source="..."), or raise OpenCLNotFound with the fix in its message."""
    inc = os.environ.get("GPURED_OPENCL_INCLUDE")
    lib = os.environ.get("GPURED_OPENCL_LIB")
    include_dirs, link_args, source = [], None, []
    have_headers = False
    if inc:
        if not os.path.isfile(os.path.join(inc, "CL", "cl.h")):
            raise OpenCLNotFound("GPURED_OPENCL_INCLUDE=%s holds no CL/cl.h.\n%s" % (inc, FIX))
        include_dirs, have_headers = [inc], True
        source.append("headers from GPURED_OPENCL_INCLUDE")
    if lib:
        link_args = _user_lib(lib)
        source.append("loader from GPURED_OPENCL_LIB")
    if not ignore_system():
        if not have_headers and system_headers():
            have_headers = True
            source.append("system headers")
        if link_args is None:
            link_args = system_library()
            if link_args is not None:
                source.append("system loader")
    if not have_headers or link_args is None:
        w = wheel_dirs(paths)
        if w is not None:
            if not have_headers:
                include_dirs, have_headers = [w[0]], True
                source.append("headers from %s (%s)" % (WHEEL, w[0]))
            if link_args is None and w[1] is not None:
                link_args = [w[1]]
                source.append("loader from %s (%s)" % (WHEEL, w[1]))
    if not have_headers:
        raise OpenCLNotFound("gpured: the OpenCL headers (CL/cl.h) were not found%s.\n%s"
                             % (" (system headers ignored: GPURED_IGNORE_SYSTEM_OPENCL)"
                                if ignore_system() else "", FIX))
    if link_args is None:
        raise OpenCLNotFound("gpured: no OpenCL ICD loader (libOpenCL.so) to link against%s.\n%s"
                             % (" (system loader ignored: GPURED_IGNORE_SYSTEM_OPENCL)"
                                if ignore_system() else "", FIX))
    return dict(include_dirs=include_dirs, link_args=link_args, source=", ".join(source))


def needs_wheel():
    """True when the build cannot do without the nvidia-cuda-opencl wheel."""
    try:
        find(paths=[])  # the system (and the user's variables) alone
        return False
    except OpenCLNotFound:
        return True


if __name__ == "__main__":  # python _build_backend/gpured_opencl.py: what the build would use
    try:
        print(find())
    except OpenCLNotFound as e:
        print(e)
        sys.exit(1)
