"""Float32 row cumsums of a view with an offset (tests/test_interop.py's
case), on the current device: the plan and the error against float64."""
import numpy as np
import gpured

rng = np.random.default_rng(1)
a = rng.standard_normal((64, 33)).astype(np.float32)
ref = np.cumsum(a[3:40], axis=1, dtype=np.float64)
for name, src in (("view", gpured.to_device(a)[3:40]), ("copy", gpured.to_device(a[3:40].copy())),
                  ("host", a[3:40])):
    e = gpured.explain("cumsum", src, axis=1)
    got = gpured.cumsum(src, axis=1)
    got = got.get() if hasattr(got, "get") else got
    err = np.abs(got - ref).max()
    print(name, "err %.3g" % err, e.get("variant"), e.get("wg_size"), e.get("items"),
          e.get("accumulator"), e.get("copied"), e.get("why", "")[:90])
