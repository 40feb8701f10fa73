"""Installation logic: where the build finds OpenCL (headers, loader), how
gpured finds a loader and registers CPU runtimes from wheels at import, the
one version source, the sdist's contents and the progress bars.  Fake paths
throughout: nothing here needs a wheel installed or touches the real
environment variables.
"""
import importlib.util
import os
import subprocess
import sys
import tarfile

import pytest

import gpured
from gpured import _loader

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKEND = os.path.join(ROOT, "_build_backend")


def _module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(BACKEND, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _touch(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def _setuptools_reads_pyproject():
    """setuptools >= 77 reads pyproject.toml's SPDX license string (make
    test's .venv has it; an older system setuptools cannot run setup.py)."""
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


needs_setuptools = pytest.mark.skipif(not _setuptools_reads_pyproject(),
                                      reason="needs setuptools >= 77 (pip install -e .[test] "
                                             "in make's .venv has it)")


# ------------------------------------------------------------ build: OpenCL

@pytest.fixture
def cl(monkeypatch):
    for v in ("GPURED_OPENCL_INCLUDE", "GPURED_OPENCL_LIB", "GPURED_IGNORE_SYSTEM_OPENCL"):
        monkeypatch.delenv(v, raising=False)
    return _module("gpured_opencl")


def fake_wheel(site, layout="cu13"):
    inc = os.path.join(site, "nvidia", layout, "include")
    _touch(os.path.join(inc, "CL", "cl.h"), "/* fake */\n")
    lib = _touch(os.path.join(site, "nvidia", layout, "lib", "libOpenCL.so.1"))
    return inc, lib


@pytest.mark.parametrize("layout", ["cu13", "cuda_opencl"])
def test_build_uses_the_wheel_without_system_opencl(cl, monkeypatch, tmp_path, layout):
    inc, lib = fake_wheel(str(tmp_path), layout)
    monkeypatch.setenv("GPURED_IGNORE_SYSTEM_OPENCL", "1")
    found = cl.find(paths=[str(tmp_path)])
    assert found["include_dirs"] == [inc] and found["link_args"] == [lib]
    assert "nvidia-cuda-opencl" in found["source"]
    assert cl.needs_wheel()


def test_build_error_names_the_fix(cl, monkeypatch, tmp_path):
    monkeypatch.setenv("GPURED_IGNORE_SYSTEM_OPENCL", "1")
    with pytest.raises(cl.OpenCLNotFound) as e:
        cl.find(paths=[str(tmp_path)])
    text = str(e.value)
    assert "CL/cl.h" in text and "pip install nvidia-cuda-opencl" in text
    assert "apt install opencl-c-headers ocl-icd-opencl-dev" in text
    # headers but no loader at all
    _touch(os.path.join(tmp_path, "inc", "CL", "cl.h"))
    monkeypatch.setenv("GPURED_OPENCL_INCLUDE", str(tmp_path / "inc"))
    with pytest.raises(cl.OpenCLNotFound, match="no OpenCL ICD loader"):
        cl.find(paths=[])


def test_build_user_variables(cl, monkeypatch, tmp_path):
    monkeypatch.setenv("GPURED_OPENCL_INCLUDE", str(tmp_path / "nothing"))
    with pytest.raises(cl.OpenCLNotFound, match="holds no CL/cl.h"):
        cl.find(paths=[])
    _touch(os.path.join(tmp_path, "inc", "CL", "cl.h"))
    lib = _touch(os.path.join(tmp_path, "lib", "libOpenCL.so.1"))
    monkeypatch.setenv("GPURED_OPENCL_INCLUDE", str(tmp_path / "inc"))
    monkeypatch.setenv("GPURED_OPENCL_LIB", str(tmp_path / "lib"))
    found = cl.find(paths=[])
    assert found["include_dirs"] == [str(tmp_path / "inc")] and found["link_args"] == [lib]


def test_build_finds_the_system_opencl_here(cl):
    if not (os.path.exists("/usr/include/CL/cl.h") and cl.system_library()):
        pytest.skip("no system OpenCL headers and loader on this machine")
    assert cl.system_headers()
    assert not cl.needs_wheel()
    assert cl.find(paths=[])["source"].startswith("system headers")


@needs_setuptools
def test_backend_asks_for_the_wheel_only_when_needed(cl, monkeypatch):
    monkeypatch.chdir(ROOT)  # setuptools' hooks run setup.py from here
    backend = _module("gpured_build")
    monkeypatch.setattr(backend.gpured_opencl, "needs_wheel", lambda: True)
    assert "nvidia-cuda-opencl" in backend.get_requires_for_build_wheel()
    assert "nvidia-cuda-opencl" in backend.get_requires_for_build_editable()
    monkeypatch.setattr(backend.gpured_opencl, "needs_wheel", lambda: False)
    assert "nvidia-cuda-opencl" not in backend.get_requires_for_build_wheel()


@needs_setuptools
def test_setup_py_stops_with_the_message_not_a_compiler_error(tmp_path):
    env = dict(os.environ, GPURED_OPENCL_INCLUDE=str(tmp_path))
    p = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-temp",
                        str(tmp_path / "t"), "--build-lib", str(tmp_path / "l")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    assert "holds no CL/cl.h" in p.stderr and "pip install nvidia-cuda-opencl" in p.stderr
    assert "No such file" not in p.stderr


# ----------------------------------------------------------- import: loader

def test_wheel_loaders_and_runtimes_are_found(tmp_path):
    site, prefix_lib = str(tmp_path / "site"), str(tmp_path / "prefix" / "lib")
    nv = _touch(os.path.join(site, "nvidia", "cu13", "lib", "libOpenCL.so.1"))
    pocl = _touch(os.path.join(site, "pyopencl", ".libs", "libpocl-21062cec.so"))
    _touch(os.path.join(site, "pyopencl", ".libs", "pocl.icd"), "libpocl-21062cec.so\n")
    intel_loader = _touch(os.path.join(prefix_lib, "libOpenCL.so.1"))
    assert _loader.wheel_loaders([site], [prefix_lib]) == [nv]  # no runtime beside it
    intel = _touch(os.path.join(prefix_lib, "libintelocl.so"))
    assert _loader.wheel_loaders([site], [prefix_lib]) == [nv, intel_loader]
    assert _loader.wheel_runtimes([site], [prefix_lib]) == [("pocl", pocl), ("intel-cpu", intel)]
    assert _loader.wheel_runtimes([str(tmp_path / "empty")], []) == []


def test_no_loader_is_a_clear_import_error(monkeypatch, tmp_path):
    monkeypatch.delenv("GPURED_OPENCL_LOADER", raising=False)
    with pytest.raises(ImportError) as e:
        _loader.load_loader(candidates=[str(tmp_path / "libOpenCL.so.1")], system=False)
    text = str(e.value)
    assert "pip install gpured[cpu]" in text and "apt install ocl-icd-libopencl1" in text
    monkeypatch.setenv("GPURED_OPENCL_LOADER", str(tmp_path / "nope.so"))
    with pytest.raises(ImportError, match="GPURED_OPENCL_LOADER=.*cannot be loaded"):
        _loader.load_loader()


def fake_loader(tmp_path, honours_vendors=True):
    return _touch(os.path.join(tmp_path, "loader", "libOpenCL.so.1"),
                  "\0OCL_ICD_VENDORS\0OCL_ICD_FILENAMES\0" if honours_vendors
                  else "\0OCL_ICD_FILENAMES\0")


def test_register_writes_a_vendors_dir_with_absolute_paths(tmp_path):
    loader = fake_loader(tmp_path)
    pocl = _touch(os.path.join(tmp_path, "site", "pyopencl", ".libs", "libpocl-x.so"))
    intel = _touch(os.path.join(tmp_path, "prefix", "lib", "libintelocl.so"))
    system = {"pocl.icd": "libpocl.so.2\n", "nvidia.icd": "libnvidia-opencl.so.1\n"}
    env = {}
    var = _loader.register_runtimes(loader, [("pocl", pocl), ("intel-cpu", intel)],
                                    system, env, root=str(tmp_path / "cache"))
    assert var == "OCL_ICD_VENDORS" and env["OCL_ICD_VENDORS"].endswith("/")
    d = env["OCL_ICD_VENDORS"].rstrip("/")
    files = {n: open(os.path.join(d, n)).read() for n in os.listdir(d)}
    assert files == {"pocl.icd": "libpocl.so.2\n", "nvidia.icd": "libnvidia-opencl.so.1\n",
                     "gpured-wheel-pocl.icd": pocl + "\n",
                     "gpured-wheel-intel-cpu.icd": intel + "\n"}
    # the same runtimes: the same directory, nothing rewritten
    env2 = {}
    _loader.register_runtimes(loader, [("pocl", pocl), ("intel-cpu", intel)], system,
                              env2, root=str(tmp_path / "cache"))
    assert env2 == env and len(os.listdir(tmp_path / "cache")) == 1


def test_register_khronos_style_loader_gets_filenames(tmp_path):
    loader = fake_loader(tmp_path, honours_vendors=False)
    env = {}
    assert _loader.register_runtimes(loader, [("pocl", "/x/libpocl.so"), ("intel-cpu", "/y/libintelocl.so")],
                                     {}, env, root=str(tmp_path)) == "OCL_ICD_FILENAMES"
    assert env == {"OCL_ICD_FILENAMES": "/x/libpocl.so:/y/libintelocl.so"}


@pytest.mark.parametrize("var", ["OCL_ICD_VENDORS", "OCL_ICD_FILENAMES"])
def test_register_leaves_the_users_choice_alone(tmp_path, var):
    env = {var: "/mine"}
    assert _loader.register_runtimes(fake_loader(tmp_path), [("pocl", "/x/libpocl.so")],
                                     {}, env, root=str(tmp_path)) is None
    assert env == {var: "/mine"}
    assert not [n for n in os.listdir(tmp_path) if n.startswith("icd-")]


def test_register_nothing_without_wheel_runtimes(tmp_path):
    env = {}
    assert _loader.register_runtimes(fake_loader(tmp_path), [], {}, env,
                                     root=str(tmp_path / "c")) is None
    assert env == {} and not os.path.exists(tmp_path / "c")


def test_import_state_says_what_was_done():
    s = _loader.state
    assert s["done"] and s["loader"] and s["loader_source"] in (
        "system", "wheel", "GPURED_OPENCL_LOADER")
    assert ("variable" in s) or ("skipped" in s)


def test_wheel_runtime_registered_in_a_fresh_process():
    """The real thing, where this environment has a runtime from a wheel
    (make test's .venv has Intel's): a process with no OCL_ICD_* sees it."""
    runtimes = _loader.wheel_runtimes()
    if not runtimes:
        pytest.skip("no OpenCL runtime installed from a wheel here")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "GPURED_DEVICE")}
    code = ("import gpured; s = gpured._loader.state; print(s.get('variable')); "
            "print('|'.join(d['platform'] for d in gpured.devices()))")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    var, platforms = p.stdout.strip().splitlines()[-2:]
    assert var in ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES")
    names = {"pocl": "Portable Computing Language", "intel-cpu": "Intel(R) OpenCL"}
    for name, _ in runtimes:
        assert names[name] in platforms, (name, platforms)


# ------------------------------------------------------------------ hygiene

def test_one_version():
    from gpured import _version
    assert gpured.__version__ == _version.__version__
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        text = f.read()
    assert 'dynamic = ["version"]' in text and "gpured._version.__version__" in text
    assert '\nversion = "' not in text
    assert 'license = "MIT"' in text
    assert open(os.path.join(ROOT, "LICENSE")).read().startswith("MIT License")


def test_typing_files():
    pkg = os.path.dirname(gpured.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    stub = open(os.path.join(pkg, "__init__.pyi")).read()
    for name in gpured.__all__:
        assert ("def %s(" % name in stub or "class %s" % name in stub), name
    for name in ("wg_size", "ilp", "vw", "groups", "items", "spins", "device: _Device"):
        assert name in stub


@needs_setuptools
def test_sdist_carries_what_its_tests_need(tmp_path):
    p = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    (sdist,) = os.listdir(tmp_path)
    with tarfile.open(os.path.join(tmp_path, sdist)) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for need in ["LICENSE", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in",
                 "Makefile", "_build_backend/gpured_build.py", "_build_backend/gpured_opencl.py",
                 "_build_backend/make_venv.py", "tests/conftest.py", "tests/_oclgrind.py",
                 "tests/test_notebooks.py", "tests/oclgrind_check.py", "csrc/gpured.h",
                 "kernels/common.cl", "gpured/py.typed", "gpured/__init__.pyi",
                 "gpured/_loader.py", "gpured/_version.py",
                 "notebooks/03_segmented_rows.ipynb", "notebooks/broken_barrier.cl",
                 "notebooks/broken_barrier.sim", "notebooks/fixed_barrier.sim"]:
        assert need in names, need
    for f in os.listdir(os.path.join(ROOT, "tests")):
        if f.endswith(".py"):
            assert "tests/" + f in names, f
    for f in os.listdir(os.path.join(ROOT, "csrc")):
        if f != "kernels_gen.h" and f.endswith((".c", ".h")):
            assert "csrc/" + f in names, f
    assert "csrc/kernels_gen.h" not in names  # generated by the build
    assert not [n for n in names if n.endswith(".so")]


def test_progress_bar_only_with_tqdm(monkeypatch):
    from gpured import _tune
    assert _tune._bar(3, "x", enabled=False) is None
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    assert _tune._bar(3, "x") is None
    monkeypatch.undo()
    pytest.importorskip("tqdm")
    bar = _tune._bar(3, "x")
    assert bar is not None and bar.total == 3
    bar.close()
