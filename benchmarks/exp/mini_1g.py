"""1 GiB float32 device-resident: gpured sum/argmax/cumsum beside torch, wall clock."""
import numpy as np
import gpured
from _loop import loop_ms as lt
a = np.random.default_rng(0).random(1 << 28, dtype=np.float32)
d = gpured.to_device(a)
import torch
t = torch.from_numpy(a).cuda()
for name, g, tf in (("sum", lambda: gpured.sum(d), lambda: t.sum()),
                    ("argmax", lambda: gpured.argmax(d), lambda: t.argmax()),
                    ("cumsum", lambda: gpured.cumsum(d), lambda: t.cumsum(0))):
    x, y = lt(g, gpured.synchronize), lt(tf, torch.cuda.synchronize)
    print("%-7s 1GiB f32: gpured %.4f ms  torch %.4f ms  ratio %.3f  events %.4f ms" % (
        name, x, y, y / x, gpured.timeit(name, d, reps=5)["seconds"] * 1e3), flush=True)
