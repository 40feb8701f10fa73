import numpy as np, gpured
RNG = np.random.default_rng(5)
def runs(n):
    lens = []
    while sum(lens) < n:
        lens.append(int(RNG.integers(2000, 4000)) if RNG.random() < 1/20 else int(RNG.integers(1, 40)))
    return np.repeat(RNG.integers(0, 5, len(lens)), lens)[:n]
def ref(keys, x, exclusive):
    out = np.empty(len(x), np.int64); acc = 0
    for i in range(len(x)):
        if i == 0 or keys[i] != keys[i-1]: acc = 0
        if exclusive: out[i] = acc; acc += int(x[i])
        else: acc += int(x[i]); out[i] = acc
    return out
KSUM = gpured.ScanKernel("T x", "T y", "x", "a + b", "0", "ksum")
n = 70000
keys = runs(n).astype(np.int64)
x = RNG.integers(-3, 4, n).astype(np.int32)
for kdt in (np.int64, np.int32):
  for xdt in (np.int32, np.float32):
    k = keys.astype(kdt); xx = x.astype(xdt)
    for ex in (False, True):
        want = ref(k, xx.astype(np.int64), ex)
        for mode in ("host", "dev"):
            a, b = (k, xx) if mode == "host" else (gpured.to_device(k), gpured.to_device(xx))
            g = KSUM.by_key(a, b, exclusive=ex)
            g = g.get() if isinstance(g, gpured.Array) else g
            bad = np.nonzero(g.astype(np.int64) != want)[0]
            print(np.dtype(kdt).name, np.dtype(xdt).name, "excl" if ex else "incl", mode, "bad", len(bad), bad[:3], flush=True)
print(KSUM.explain_by_key(gpured.to_device(keys), gpured.to_device(x)))
print(KSUM.explain_by_key(keys, x))
