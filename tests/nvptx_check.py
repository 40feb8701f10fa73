"""Compile the NVIDIA-only kernel paths to PTX with clang (no GPU needed).

    python3 tests/nvptx_check.py                 # every config compiles
    python3 tests/nvptx_check.py --against REV   # ... and its PTX equals
                                                 # the PTX of kernels/ at
                                                 # git revision REV

NVIDIA's inline PTX (shfl.sync, vote.sync, bar.warp.sync, ld/st.relaxed,
nanosleep) sits under macros that PoCL and Oclgrind never define, so
neither compiles it.  clang's nvptx64 target parses and compiles those
paths as NVIDIA's OpenCL compiler would (it is LLVM-based too), checks the
asm operand constraints, and prints PTX: a pure move of kernel code gives
the same PTX before and after.  What it does not check: the asm text itself
(only ptxas would) and anything NVIDIA's driver does differently.

The define blocks mirror what csrc/reduce.c, scan.c and bykey.c generate for
an NVIDIA device (d->nvidia_ptx = 1); keep them in step when those change.
Needs clang with the NVPTX target (Debian: clang-15 or clang-14).
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Types of the define blocks: (GR_T, GR_A, GR_R, GR_AM, A size, min, max, float)
TYPES = {
    "bool": ("uchar", "uchar", "long", "char", 1, "0", "1", 0),
    "int32": ("int", "int", "int", "int", 4, "INT_MIN", "INT_MAX", 0),
    "float32": ("float", "float", "float", "int", 4, "(-INFINITY)", "INFINITY", 1),
    "float64": ("double", "double", "double", "long", 8, "(-INFINITY)", "INFINITY", 1),
}
OP = {"add": 0, "mul": 1, "min": 2, "max": 3, "argmin": 4, "argmax": 5,
      "all": 6, "any": 7}


def common_defs(t, op, wg, vw=1, ilp=1, comp=0, cvt=0, a=None, r=None):
    T, A, R, AM, asz, mn, mx, fl = TYPES[t]
    A = a or A
    R = r or R
    if a is not None:
        asz = 8 if A in ("double", "long", "ulong") else 4
        AM = "long" if asz == 8 else "int"
    xsz = 8 if op in ("argmin", "argmax") else asz
    if op in ("argmin", "argmax"):
        R = "long"
    fp64 = int("double" in (T, A, R))
    return ("#define GR_NEED_FP64 %d\n#define GR_T %s\n#define GR_A %s\n"
            "#define GR_R %s\n#define GR_AM %s\n#define GR_A_SIZE %d\n"
            "#define GR_X_SIZE %d\n#define GR_A_FLOAT %d\n#define GR_OP %d\n"
            "#define GR_CVT %d\n#define GR_COMP %d\n#define GR_A_MINV %s\n"
            "#define GR_A_MAXV %s\n#define GR_VW %d\n#define GR_WG %d\n"
            "#define GR_ILP %d\n"
            % (fp64, T, A, R, AM, asz, xsz, int(A in ("float", "double")),
               OP[op], cvt, comp, mn, mx, vw, wg, ilp))


def reduce_defs(t, op, combine, wg=256, vw=4, ilp=2, **kw):
    return common_defs(t, op, wg, vw, ilp, **kw) + (
        "#define GR_LOAD 0\n#define GR_COMBINE %d\n#define GR_SG 1\n"
        "#define GR_SG_NATIVE 0\n#define GR_ATOMIC 0\n"
        "#define GR_IN_PARTIAL 0\n#define GR_FINAL 0\n" % combine)


def scan_defs(t, op, local, lookback, items, wg=256, sg=1, **kw):
    T, A, R = TYPES[t][0], kw.get("a") or TYPES[t][1], kw.get("r") or TYPES[t][2]
    size = {"uchar": 1, "int": 4, "float": 4, "double": 8, "long": 8}
    mv = max(1, min(items, 16 // size[T]))
    mvr = max(1, min(items, 16 // size[R]))
    tsum = int(op == "add" and T == "float" and R == "float" and A == "double"
               and 1 < items <= 32)
    return common_defs(t, op, wg, 1, 1, **kw) + (
        "#define GR_COMBINE 1\n#define GR_SG %d\n#define GR_SG_NATIVE 0\n"
        "#define GR_ATOMIC 0\n#define GR_ITEMS %d\n#define GR_LOCAL %d\n"
        "#define GR_MV %d\n#define GR_MVR %d\n#define GR_IN_ALIGNED 1\n"
        "#define GR_OUT_ALIGNED 1\n#define GR_LOOKBACK %d\n#define GR_SPIN 4096\n"
        "#define GR_CPU_TILE 0\n#define GR_NVIDIA 1\n#define GR_T_SIZE %d\n"
        "#define GR_R_SIZE %d\n#define GR_TSUM %d\n"
        % (sg, items, local, mv, mvr, lookback, size[T], size[R], tsum))


def bykey_defs(t, op, key="int", ksize=4, lookback=0, items=0, atomics=1,
               wg=256, **kw):
    return common_defs(t, op, wg, **kw) + (
        "#define GR_SG 0\n#define GR_ATOMIC %d\n#define GR_K %s\n"
        "#define GR_K_SIZE %d\n#define GR_BK_COUNT 0\n#define GR_BK_PTX 1\n"
        "#define GR_BK_MATCH 1\n#define GR_BK_H 1024\n#define GR_BK_ATOMICS %d\n"
        "#define GR_BK_CHECK %d\n#define GR_BK_CHUNKS 0\n"
        "#define GR_BK_LOOKBACK %d\n#define GR_BK_ITEMS %d\n"
        % (atomics, key, ksize, atomics, atomics, lookback, items))


def custom_defs(a, x, vw=4, combine=4, two=0, elem_x="0", merge=None,
                post="y = a"):
    """csrc/custom.c's block and gpured/_kernels.py's GR_USER_* text for a
    one-input map x -> (GR_A)x (kernels/custom.cl), sub-group combine."""
    asz = 8 if a == "double" else 4
    merge = merge or ("do { gr_state *gr_p_ = (gr_pa); const gr_state gr_q_ "
                      "= (gr_pb); { const GR_A a = gr_p_->v; const GR_A b = "
                      "gr_q_.v; gr_p_->v = (GR_A)(a + b); } } while (0)")
    return ("#define GR_NEED_FP64 %d\n#define GR_T %s\n#define GR_A %s\n"
            "#define GR_R float\n#define GR_AM %s\n#define GR_A_SIZE %d\n"
            "#define GR_X_SIZE %d\n#define GR_A_FLOAT 1\n#define GR_OP 8\n"
            "#define GR_A_MINV 0\n#define GR_A_MAXV 0\n#define GR_VW %d\n"
            "#define GR_WG 256\n#define GR_ILP 2\n#define GR_LOAD 0\n"
            "#define GR_COMBINE %d\n#define GR_SG 1\n#define GR_SG_NATIVE 0\n"
            "#define GR_IN_PARTIAL 0\n#define GR_FINAL %d\n"
            "#define GR_USER_PARAMS __global const float *restrict gr_in0, "
            "ulong gr_o0,\n#define GR_USER_ARGS gr_in0, gr_o0,\n"
            "#define GR_USER_LOADS(gr_i_) const float x = gr_in0[gr_o0 + (gr_i_)];\n"
            "#define GR_USER_VLOADS(gr_i_) float gr_l0[GR_VW]; GR_CAT(vstore, "
            "GR_VW)(GR_VLOAD(gr_in0 + gr_o0 + (gr_i_)), 0, gr_l0);\n"
            "#define GR_USER_LANE(gr_l_) const float x = gr_l0[gr_l_];\n"
            "#define GR_USER_MAP (x)\n#define GR_USER_OUT y\n"
            "#define GR_USER_X %d\n#define GR_USER_IDENT (0)\n"
            "#define GR_USER_IDENT_X 0\n#define GR_USER_ELEM_X %s\n"
            "#define GR_USER_MERGE(gr_pa, gr_pb) %s\n"
            "#define GR_USER_POST { const GR_A a = gr_s.v; %s; }\n"
            % (int(a == "double"), "float", a, "long" if asz == 8 else "int",
               asz, asz, vw, combine, 1 - two, x, elem_x, merge, post))


LSE_MERGE = ("do { gr_state *p_ = (gr_pa); const gr_state q_ = (gr_pb); "
             "const GR_A m1_ = p_->v, m2_ = q_.v; const int f_ = m1_ >= m2_; "
             "const GR_A hi_ = f_ ? m1_ : m2_; const GR_A lo_ = f_ ? m2_ : m1_; "
             "const GR_A e_ = m1_ == m2_ ? (GR_A)1 : exp(lo_ - hi_); "
             "p_->x = f_ ? p_->x + q_.x * e_ : p_->x * e_ + q_.x; "
             "p_->v = GR_ISNAN(m1_) ? m1_ : hi_; } while (0)")

CMUL = ("do { gr_state *gr_p_ = (gr_pa); const gr_state gr_q_ = (gr_pb); "
        "{ const GR_A a = gr_p_->v; const GR_A b = gr_q_.v; gr_p_->v = "
        "(GR_A)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); } } while (0)")


def cx_custom_defs():
    """A complex128 product's reduction (gpured/_kernels.py cx_prod): a
    double2 state through the sub-group combine's 16-byte shuffles."""
    d = custom_defs("double", 0, merge=CMUL)
    for old, new in (("#define GR_A double\n", "#define GR_A double2\n"),
                     ("#define GR_R float\n", "#define GR_R double2\n"),
                     ("#define GR_A_SIZE 8\n", "#define GR_A_SIZE 16\n"),
                     ("#define GR_X_SIZE 8\n", "#define GR_X_SIZE 16\n"),
                     ("#define GR_USER_MAP (x)", "#define GR_USER_MAP ((GR_A)(x, 0))"),
                     ("#define GR_USER_IDENT (0)", "#define GR_USER_IDENT ((GR_A)(1, 0))")):
        assert old in d, old
        d = d.replace(old, new)
    return d


def cx_scan_defs(lookback):
    """A complex128 cumprod (gpured/_kernels.py cx_cumprod, ScanKernel's
    text): double2 elements and states, the warp's shuffles and the
    look-back's 16-byte status words."""
    d = scan_defs("float64", "add", 4, lookback, 8)
    for old, new in (("#define GR_OP 0\n", "#define GR_OP 8\n"),
                     ("#define GR_A double\n", "#define GR_A double2\n"),
                     ("#define GR_A_SIZE 8\n", "#define GR_A_SIZE 16\n"),
                     ("#define GR_X_SIZE 8\n", "#define GR_X_SIZE 16\n")):
        assert old in d, old
        d = d.replace(old, new)
    d = d.replace("#define GR_CVT 0\n", "#define GR_CVT 6\n")
    return d + (
        "inline double2 gr_user_map1(double2 x) { return (double2)(x); }\n"
        "#define GR_USER_X 0\n#define GR_USER_IDENT ((double2)(1, 0))\n"
        "#define GR_USER_IDENT_X 0\n#define GR_USER_MERGE(gr_pa, gr_pb) %s\n"
        "#undef GR_T\n#undef GR_T_SIZE\n#undef GR_MV\n#define GR_T double2\n"
        "#define GR_T_SIZE 16\n#define GR_MV 1\n#undef GR_R\n#undef GR_R_SIZE\n"
        "#undef GR_MVR\n#define GR_R double2\n#define GR_R_SIZE 16\n"
        "#define GR_MVR 1\n" % CMUL)


# name -> (family, defines): the NVIDIA-only paths of every family.
CONFIGS = {
    "reduce-subgroup-argmax-bool": ("reduce", reduce_defs("bool", "argmax", 4, vw=16)),
    "reduce-subgroup-sum-f64-comp": ("reduce", reduce_defs("float64", "add", 4, comp=1)),
    "reduce-subgroup-sum-f32-in-f64": ("reduce", reduce_defs("float32", "add", 4, a="double", cvt=1)),
    "reduce-subgroup-min-i32-wg1024": ("reduce", reduce_defs("int32", "min", 4, wg=1024)),
    "reduce-unroll-last-argmin-f32": ("reduce", reduce_defs("float32", "argmin", 3, vw=1, ilp=1)),
    "scan-subgroup-sum-f32": ("scan", scan_defs("float32", "add", 4, 0, 8, a="double", cvt=1)),
    "scan-subgroup-max-i32": ("scan", scan_defs("int32", "max", 4, 0, 4)),
    "scan-subgroup-sum-f64-comp": ("scan", scan_defs("float64", "add", 4, 0, 4, comp=1)),
    "scan-subgroup-argmin-bool": ("scan", scan_defs("bool", "min", 4, 0, 16)),
    "scan-lookback-sum-f32": ("scan", scan_defs("float32", "add", 4, 1, 16, a="double", cvt=1)),
    "scan-lookback-sum-f64-comp": ("scan", scan_defs("float64", "add", 4, 1, 8, comp=1)),
    "scan-lookback-blelloch-i32": ("scan", scan_defs("int32", "add", 2, 1, 8, sg=0)),
    "custom-subgroup-sum-f32": ("custom", custom_defs("float", 0)),
    "custom-subgroup-sum-f64acc-2pass": ("custom", custom_defs("double", 0, two=1)),
    "custom-unroll-last-logsumexp-f32": ("custom", custom_defs(
        "float", 1, vw=1, combine=3, elem_x="1", merge=LSE_MERGE,
        post="y = (GR_R)(gr_s.v + log(gr_s.x))")),
    "custom-subgroup-cprod-c128": ("custom", cx_custom_defs()),
    "scan-subgroup-cumprod-c128": ("scan", cx_scan_defs(0)),
    "scan-lookback-cumprod-c128": ("scan", cx_scan_defs(1)),
    "bykey-atomics-sum-f32": ("bykey", bykey_defs("float32", "add")),
    "bykey-atomics-sum-f64-long": ("bykey", bykey_defs("float64", "add", key="long", ksize=8)),
    "bykey-lookback-sum-f32": ("bykey", bykey_defs("float32", "add", lookback=1, items=8, atomics=0)),
    "bykey-lookback-max-f64-long": ("bykey", bykey_defs("float64", "max", key="long", ksize=8, lookback=1, items=4, atomics=0)),
}


def clang():
    for c in ("clang-15", "clang-14", "clang"):
        if shutil.which(c):
            return c
    return None


def kernel_text(name, rev):
    if rev is None:
        with open(os.path.join(ROOT, "kernels", name + ".cl")) as f:
            return f.read()
    return subprocess.run(["git", "-C", ROOT, "show", "%s:kernels/%s.cl" % (rev, name)],
                          check=True, capture_output=True, text=True).stdout


def compile_ptx(cc, defs, family, rev, tmp):
    src = "%s\n%s\n%s" % (defs, kernel_text("common", rev), kernel_text(family, rev))
    path = os.path.join(tmp, "k.cl")
    with open(path, "w") as f:
        f.write(src)
    p = subprocess.run([cc, "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl",
                        "-Xclang", "-finclude-default-header", "-O2", "-S",
                        "-Xclang", "-cl-ext=+cl_khr_fp64,+cl_khr_int64_base_atomics",
                        "-Wno-unused-value", "-o", "-", path],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def normalise(ptx):
    """PTX lines without register numbers, label numbers, declarations and
    comments: what is left are the instructions and their operand kinds."""
    out = []
    for line in ptx.splitlines():
        line = line.split("//")[0].strip()
        if not line or line.startswith(".reg") or line.startswith("$L__"):
            continue
        line = re.sub(r"%(rd|r|fd|f|p|rs|hh|h)\d+", r"%\1", line)
        line = re.sub(r"\$L__BB\d+_\d+", "$L", line)
        # a vote's predicate: any name, and "!= 0" as s32 or u32 is one test
        line = re.sub(r"\.reg \.pred (\w+); setp\.ne\.[su]32 \1, (%r), 0; "
                      r"vote\.sync\.ballot\.b32 (%r), \1,",
                      r".reg .pred P; setp.ne.b32 P, \2, 0; vote.sync.ballot.b32 \3, P,",
                      line)
        out.append(line)
    return out


def compare(ptx0, ptx):
    """'same PTX', 'same up to register numbers', 'same instructions,
    reordered' or None (they differ)."""
    if ptx0 == ptx:
        return "same PTX"
    a, b = normalise(ptx0), normalise(ptx)
    if a == b:
        return "same PTX up to register numbers"
    if sorted(a) == sorted(b):
        order = "same" if [x for x in a if _effect(x)] == [x for x in b if _effect(x)] \
            else "ANOTHER"
        return ("same instructions up to register numbers, in another order "
                "(inline asm, memory and control instructions: %s order)" % order)
    return None


def _effect(line):
    """Instructions whose order matters beyond data flow."""
    return line.startswith("{") or re.match(
        r"(@%p!?\s+)?(bra|ret|call|bar|membar|fence|ld\.|st\.|atom|red\.|shfl|vote|"
        r"nanosleep)", line) is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", help="git revision whose kernels must give the same PTX")
    ap.add_argument("--keep", help="folder to write the PTX files into")
    args = ap.parse_args()
    cc = clang()
    if cc is None:
        print("clang is not installed: nothing checked")
        return 0
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (family, defs) in CONFIGS.items():
            rc, ptx, err = compile_ptx(cc, defs, family, None, tmp)
            if rc != 0:
                failed += 1
                print("FAILED %s\n%s" % (name, err[-3000:]))
                continue
            status = "ok"
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                with open(os.path.join(args.keep, name + ".ptx"), "w") as f:
                    f.write(ptx)
            if args.against:
                rc0, ptx0, err0 = compile_ptx(cc, defs, family, args.against, tmp)
                if rc0 != 0:
                    status = "ok (%s does not compile)" % args.against
                elif compare(ptx0, ptx) is None:
                    failed += 1
                    diff = list(difflib.unified_diff(normalise(ptx0), normalise(ptx),
                                                     args.against, "work tree", lineterm="", n=1))
                    status = "PTX DIFFERS (%d diff lines, registers renamed)\n%s" % (
                        len(diff), "\n".join(diff[:80]))
                else:
                    status = "ok, %s as %s" % (compare(ptx0, ptx), args.against)
            print("%-34s %s (%d PTX lines)" % (name, status, ptx.count("\n")))
    print("nvptx check: %d configs, %d failed" % (len(CONFIGS), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
