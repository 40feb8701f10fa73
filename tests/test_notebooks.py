"""Execute the notebooks in notebooks/ on small sizes so that they never rot.

Each notebook runs in a fresh Jupyter kernel ("python3") with
GPURED_NOTEBOOK_SMALL=1, from notebooks/, with the repository root on
PYTHONPATH.  Its last cell asserts that every result it timed matched NumPy
and prints a line "NOTEBOOK OK <name>: ..."; the test checks that line, that
no cell raised, and that the plots were drawn.

Needs nbformat, nbclient, ipykernel and matplotlib (test dependencies: a
missing one fails the test, it is not skipped).
"""
import os
import re
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB_DIR = os.path.join(ROOT, "notebooks")
CELL_TIMEOUT = 300
DEPS = "nbformat nbclient ipykernel matplotlib"

NOTEBOOKS = {
    # name: (minimum number of images, extra patterns the summary line must match)
    "01_reduction_ladder": (1, [r"\d+ variants, \d+ timed sums .* all match NumPy"]),
    "02_occupancy_and_ilp": (2, [r"\d+ configurations of .* timed, all match NumPy"]),
    "03_segmented_rows": (1, [r"\d+ segmented results .* match NumPy"]),
    "04_scans": (2, [r"\d+ timed scans .* all match NumPy"]),
    "05_reduce_by_key": (1, [r"\d+ sum_by_key results timed, all match numpy.bincount"]),
}


def _require():
    missing = []
    for mod in ("nbformat", "nbclient", "ipykernel", "matplotlib"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if missing:
        pytest.fail("the notebook tests need %s (pip install %s)"
                    % (", ".join(missing), DEPS), pytrace=False)


def _execute(name, monkeypatch):
    _require()
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    monkeypatch.setenv("GPURED_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    path = os.path.join(NB_DIR, name + ".ipynb")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # stored with the GPU machine's outputs: run afresh
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            startup_timeout=120,
                            resources={"metadata": {"path": NB_DIR}})
    try:
        client.execute()
    except CellExecutionError as e:
        pytest.fail("%s failed:\n%s" % (name, e), pytrace=False)
    return nb


def _outputs(nb):
    text, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                text.append(out.text)
            elif out.output_type in ("display_data", "execute_result"):
                data = out.get("data", {})
                images += "image/png" in data
                text.append(data.get("text/markdown", data.get("text/plain", "")))
            elif out.output_type == "error":
                text.append("%s: %s" % (out.ename, out.evalue))
    return "\n".join(text), images


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs(name, monkeypatch):
    nb = _execute(name, monkeypatch)
    text, images = _outputs(nb)
    lines = [l for l in text.splitlines() if l.startswith("NOTEBOOK OK %s:" % name)]
    assert lines, "%s did not print its summary line; output:\n%s" % (name, text[-4000:])
    min_images, patterns = NOTEBOOKS[name]
    for pat in patterns:
        assert re.search(pat, lines[-1]), "%r does not match %r" % (lines[-1], pat)
    assert images >= min_images, "%s drew %d plot(s), expected %d" % (name, images, min_images)
    if name == "03_segmented_rows":
        if shutil.which("oclgrind-kernel"):
            assert re.search(r"broken kernel [1-9]\d* divergence .* fixed kernel clean and right",
                             lines[-1]), lines[-1]
            assert "Work-group divergence detected (barrier)" in text
        else:
            assert "oclgrind-kernel not installed" in lines[-1]
