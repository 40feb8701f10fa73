"""A short gpured-vs-torch/CuPy check (device-resident float32 sum and
cumsum, 256 MiB and 1 KiB), flushing each line; faulthandler names a hang."""
import faulthandler, sys
import numpy as np
faulthandler.dump_traceback_later(int(sys.argv[1]) if len(sys.argv) > 1 else 120, exit=True)
import gpured
from _loop import loop_ms as lt

print(gpured.get_device()["name"], flush=True)
a = np.ones(1 << 26, np.float32)  # 256 MiB
d = gpured.to_device(a)
print("gpured sum 256MiB ms %.4f" % lt(lambda: gpured.sum(d), gpured.synchronize), flush=True)
print("gpured cumsum 256MiB ms %.4f" % lt(lambda: gpured.cumsum(d), gpured.synchronize), flush=True)
s = gpured.to_device(np.ones(256, np.float32))
print("gpured sum 1KiB ms %.4f" % lt(lambda: gpured.sum(s), gpured.synchronize, 1000), flush=True)
h = np.ones(256, np.float32)
print("gpured sum 1KiB numpy-array ms %.5f numpy %.5f" % (lt(lambda: gpured.sum(h), lambda: None, 1000), lt(lambda: h.sum(), lambda: None, 1000)), flush=True)
h = np.ones(1 << 14, np.float32)
print("gpured sum 64KiB numpy-array ms %.5f numpy %.5f" % (lt(lambda: gpured.sum(h), lambda: None, 1000), lt(lambda: h.sum(), lambda: None, 1000)), flush=True)
import torch
t = torch.from_numpy(a).cuda(); ts = torch.from_numpy(np.ones(256, np.float32)).cuda()
print("torch sum 256MiB ms %.4f" % lt(lambda: t.sum(), torch.cuda.synchronize), flush=True)
print("torch cumsum 256MiB ms %.4f" % lt(lambda: t.cumsum(0), torch.cuda.synchronize), flush=True)
print("torch sum 1KiB ms %.4f" % lt(lambda: ts.sum(), torch.cuda.synchronize, 1000), flush=True)
