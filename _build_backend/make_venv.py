"""Make a virtual environment with pip in it, on any Python >= 3.10.

    python3 _build_backend/make_venv.py .venv

Stock Debian and Ubuntu ship python3 without ensurepip (it is in the
python3-venv package), so ``python3 -m venv`` fails there.  This tries it
first; without ensurepip it makes the environment with ``--without-pip`` and
bootstraps pip from pip's own wheel, taken from a --find-links folder
(PIP_FIND_LINKS) or downloaded from the package index (PIP_INDEX_URL,
default PyPI; the file's sha256 from the index is checked).  pip then runs
from inside its wheel to install itself into the new environment -- never
into the system's interpreter, which PEP 668 (EXTERNALLY-MANAGED) protects.

Only the standard library is used.
"""
import glob
import hashlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import urllib.request

INDEX = "https://pypi.org/simple"


def say(msg):
    print("make_venv: " + msg, flush=True)


def has_ensurepip():
    p = subprocess.run([sys.executable, "-c", "import ensurepip"],
                       capture_output=True)
    return p.returncode == 0


def local_pip_wheel():
    for d in os.environ.get("PIP_FIND_LINKS", "").split():
        if os.path.isdir(d):
            found = sorted(glob.glob(os.path.join(d, "pip-*-py3-none-any.whl")))
            if found:
                return found[-1]
    return None


def _version_key(name):
    v = name.split("-")[1]
    return tuple(int(x) if x.isdigit() else -1 for x in v.split("."))


def _tls():
    """The certificates pip is told to trust (PIP_CERT), else the system's."""
    cafile = os.environ.get("PIP_CERT") or None
    return ssl.create_default_context(cafile=cafile)


def download_pip_wheel(dest):
    """pip's newest wheel from the index's simple API (PEP 691 JSON)."""
    index = (os.environ.get("PIP_INDEX_URL") or INDEX).rstrip("/")
    req = urllib.request.Request(index + "/pip/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120, context=_tls()) as r:
        files = json.load(r)["files"]
    wheels = [f for f in files
              if f["filename"].endswith("-py3-none-any.whl") and not f.get("yanked")
              and all(p.isdigit() for p in f["filename"].split("-")[1].split("."))]
    if not wheels:
        raise SystemExit("make_venv: no pip wheel at %s/pip/" % index)
    best = max(wheels, key=lambda f: _version_key(f["filename"]))
    path = os.path.join(dest, best["filename"])
    say("downloading %s from %s" % (best["filename"], index))
    with urllib.request.urlopen(best["url"], timeout=300, context=_tls()) as r, \
            open(path, "wb") as f:
        shutil.copyfileobj(r, f)
    want = best.get("hashes", {}).get("sha256")
    if want:
        got = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if got != want:
            raise SystemExit("make_venv: sha256 mismatch for %s" % best["filename"])
    return path


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: python3 make_venv.py DIR")
    target = argv[1]
    py = os.path.join(target, "bin", "python")
    if has_ensurepip():
        say("%s -m venv %s" % (sys.executable, target))
        subprocess.run([sys.executable, "-m", "venv", target], check=True)
        return 0
    say("this Python has no ensurepip (Debian/Ubuntu without python3-venv): "
        "%s -m venv --without-pip %s, then pip from its wheel" % (sys.executable, target))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", target], check=True)
    tmp = tempfile.mkdtemp(prefix="gpured-pip-")
    try:
        wheel = local_pip_wheel() or download_pip_wheel(tmp)
        # pip runs from its own wheel (a zip on sys.path), inside the new venv
        subprocess.run([py, os.path.join(wheel, "pip"), "install", "-q",
                        "--no-index", wheel], check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([py, "-m", "pip", "--version"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
