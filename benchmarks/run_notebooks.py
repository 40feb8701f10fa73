"""Run the notebooks as plain Python and store their outputs in them.

    python3 benchmarks/run_notebooks.py OUTDIR notebooks/01_reduction_ladder.ipynb ...

For the GPU machine, which has matplotlib but no Jupyter: each notebook's
code cells run in order in one namespace, from notebooks/, and each cell's
printed text, its Markdown displays and the figures it shows (plt.show)
become its outputs, as Jupyter would store them.  The notebooks written to
OUTDIR are the ones committed with outputs (tests/test_notebooks.py runs
them again, outputs cleared, in a real kernel).
"""
import base64
import contextlib
import io
import json
import os
import sys
import time
import traceback
import types

os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bars in stored outputs


def _ipython_stub(sink):
    """IPython.display's display and Markdown where IPython is missing."""
    class Markdown:
        def __init__(self, data):
            self.data = data

    def display(*objs):
        for o in objs:
            if isinstance(o, Markdown):
                sink.append({"output_type": "display_data", "metadata": {},
                             "data": {"text/markdown": o.data,
                                      "text/plain": "<IPython.core.display.Markdown object>"}})
            else:
                print(repr(o))

    disp = types.ModuleType("IPython.display")
    disp.Markdown, disp.display = Markdown, display
    ip = types.ModuleType("IPython")
    ip.display, ip.get_ipython, ip.version_info = disp, lambda: None, (9, 0, 0)
    sys.modules["IPython"], sys.modules["IPython.display"] = ip, disp
    return display


def run(path, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nb = json.load(open(path))
    sink = []
    display = _ipython_stub(sink)

    def show(*a, **k):
        for num in plt.get_fignums():
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format="png", dpi=80, bbox_inches="tight")
            sink.append({"output_type": "display_data", "metadata": {},
                         "data": {"image/png": base64.b64encode(buf.getvalue()).decode(),
                                  "text/plain": "<Figure>"}})
        plt.close("all")

    plt.show = show
    ns = {"__name__": "__main__", "display": display}
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    count, t0 = 0, time.time()
    try:
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            count += 1
            src = "".join(cell["source"])
            out = io.StringIO()
            sink.clear()
            outputs = []
            err = None
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                try:
                    exec(compile(src, "<cell %d>" % count, "exec"), ns)
                    show()
                except Exception as e:  # noqa: BLE001 (stored, then raised)
                    err = e
                    traceback.print_exc()
            if out.getvalue():
                outputs.append({"output_type": "stream", "name": "stdout",
                                "text": out.getvalue().splitlines(True)})
            outputs += list(sink)
            cell["outputs"], cell["execution_count"] = outputs, count
            if err is not None:
                raise SystemExit("%s: cell %d failed:\n%s" % (path, count, out.getvalue()[-3000:]))
    finally:
        os.chdir(here)
    dst = os.path.join(outdir, os.path.basename(path))
    with open(dst, "w") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("%s: %d cells, %.0f s -> %s" % (path, count, time.time() - t0, dst))


if __name__ == "__main__":
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for p in sys.argv[2:]:
        run(p, outdir)
