import numpy as np, gpured
RNG = np.random.default_rng(5)
def runs(n):
    lens = []
    while sum(lens) < n:
        lens.append(int(RNG.integers(2000, 4000)) if RNG.random() < 1/20 else int(RNG.integers(1, 40)))
    return np.repeat(RNG.integers(0, 5, len(lens)), lens)[:n]
def ref(keys, x):
    out = np.empty(len(x), np.int64); acc = 0
    for i in range(len(x)):
        if i == 0 or keys[i] != keys[i-1]: acc = 0
        acc += int(x[i]); out[i] = acc
    return out
KSUM = gpured.ScanKernel("T x", "T y", "x", "a + b", "0", "ksum")
n = 70000
keys = runs(n).astype(np.int32)
x = RNG.integers(-3, 4, n).astype(np.int32)
want = ref(keys, x)
for kn in [{}, {"variant": "decoupled_lookback", "wg_size": 32}, {"variant": "decoupled_lookback", "wg_size": 16},
           {"variant": "decoupled_lookback", "wg_size": 256, "items": 1}, {"variant": "decoupled_lookback", "wg_size": 64, "items": 2},
           {"variant": "reduce_then_scan"}, {"variant": "blelloch"}, {"variant": "naive"}]:
    try:
        g = KSUM.by_key(keys, x, **kn)
        bad = np.nonzero(g.astype(np.int64) != want)[0]
        print(kn, "bad", len(bad), bad[:3], flush=True)
    except Exception as e:
        print(kn, "ERR", repr(e)[:200], flush=True)
    try:
        p = KSUM.explain_by_key(keys, x, **kn); print("   ", p.get("combine"), p.get("wg_size"), p.get("items"), p.get("kernel"))
    except Exception as e:
        print("   explain ERR", repr(e)[:100])
# plain user scan, non-commutative with the same tile geometry: affine maps packed? use KLAST on data
