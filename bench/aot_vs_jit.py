"""Ahead of time against the JIT, on a GPU: every example compiled by the CLI
alone and launched through the C launcher blkc generated for it
(--emit=c, built here with the system compiler against cuda.h and libcuda)
gives the same results, bit for bit, and the same speed as the same kernel
launched through blk's runtime (the Python package's JIT), in one process
with one timer (triton.testing.do_bench). Also: a PTX file launched by hand
(cuModuleLoadData, cuLaunchKernel through ctypes) following only the launch
contract at its top.

    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python \\
        python3 bench/aot_vs_jit.py --blkc build-static/compiler/blkc [--out FILE]

Each case's launcher is built for sm_90a with `--variant div16` (matmul: the
contiguous variant, its unit strides and multiples of 16, and for the ragged
shape the variant the runtime builds for it), as the runtime specializes for
the same arguments. --only NAME runs the cases whose name starts so."""
import argparse
import ast
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

import torch
import triton.testing

import blk

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EX = os.path.join(ROOT, "dsl_examples")
CUDA_INCLUDE = "/usr/local/cuda/include"
MATMUL_TIDY = "stride_ak=1,stride_bn=1,stride_cn=1,M%16,N%16,K%16,stride_am%16,stride_bk%16,stride_cm%16"
# what the runtime specializes a contiguous matmul on when only K is a multiple of 16: a variant to add for such shapes
MATMUL_K16 = "stride_ak=1,stride_bn=1,stride_cn=1,K%16,stride_am%16"



def c_type(blk_type):
    if blk_type.startswith("*"):
        return ctypes.c_uint64
    return {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "u8": ctypes.c_uint8, "i16": ctypes.c_int16,
            "u16": ctypes.c_uint16, "i32": ctypes.c_int32, "u32": ctypes.c_uint32, "i64": ctypes.c_int64,
            "u64": ctypes.c_uint64, "f16": ctypes.c_float, "bf16": ctypes.c_float, "f32": ctypes.c_float,
            "f64": ctypes.c_double}[blk_type]


def rnd(*shape, dtype=torch.float16, scale=1.0):
    return (torch.randn(*shape, device="cuda", dtype=torch.float32) * scale).to(dtype)


def cdiv(a, b):
    return (a + b - 1) // b


# name, file, kernel, consts, variant, make() -> (args, grid, indices of the outputs among args)
def cases():
    n = 1 << 24

    def elementwise(dtype, extra=()):
        def make():
            x, y, out = rnd(n, dtype=dtype), rnd(n, dtype=dtype), torch.empty(n, device="cuda", dtype=dtype)
            return (x, y, out, n) + extra, (cdiv(n, 1024),), (2,)
        return make

    def gelu():
        x, out = rnd(n, dtype=torch.float32), torch.empty(n, device="cuda")
        return (x, out, n), (cdiv(n, 1024),), (1,)

    def dropout():
        x, out = rnd(n, dtype=torch.float32), torch.empty(n, device="cuda")
        return (x, out, n, 0.5, 1234), (cdiv(n, 1024),), (1,)

    def rows(M, N, dtype):
        def make():
            x, y = rnd(M, N, dtype=dtype), torch.empty(M, N, device="cuda", dtype=dtype)
            return (y, x, N, N, N), (M,), (0,)
        return make

    def layer_norm():
        M, N = 4096, 4096
        x, w, b = rnd(M, N), rnd(N), rnd(N)
        y, mean, rstd = torch.empty_like(x), torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
        return (x, y, w, b, mean, rstd, N, N, 1e-5), (M,), (1, 4, 5)

    def rms_norm():
        M, N = 4096, 4096
        x, w = rnd(M, N), rnd(N)
        y, rstd = torch.empty_like(x), torch.empty(M, device="cuda")
        return (x, y, w, rstd, N, N, 1e-6), (M,), (1, 3)

    def group_norm():
        B, C, HW, G = 16, 256, 1024, 32
        x, w, b = rnd(B, C, HW, dtype=torch.float32), rnd(C, dtype=torch.float32), rnd(C, dtype=torch.float32)
        y, mean, rstd = torch.empty_like(x), torch.empty(B * G, device="cuda"), torch.empty(B * G, device="cuda")
        return (x, y, w, b, mean, rstd, C, HW, G, 1e-5), (B * G,), (1, 4, 5)

    def cross_entropy():
        M, V = 4096, 8192
        logits = rnd(M, V, dtype=torch.float32)
        targets = torch.randint(0, V, (M,), device="cuda", dtype=torch.int32)
        loss, lse = torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
        return (logits, targets, loss, lse, V, V), (M,), (2, 3)

    def cumsum():
        M, N = 4096, 1000
        x, y = rnd(M, N, dtype=torch.float32), torch.empty(M, N, device="cuda")
        return (x, y, N, N), (M,), (1,)

    def quantize():
        M, N = 4096, 4096
        x, q, s = rnd(M, N), torch.empty(M, N, device="cuda", dtype=torch.int8), torch.empty(M, device="cuda")
        return (x, q, s, N, N), (M,), (1, 2)

    def matmul(M, N, K):
        def make():
            a, b, c = rnd(M, K), rnd(K, N), torch.empty(M, N, device="cuda", dtype=torch.float16)
            return (a, b, c, M, N, K, K, 1, N, 1, N, 1), (cdiv(M, 128) * cdiv(N, 128),), (2,)
        return make

    def attention(D):
        def make():
            Z, H, S = 4, 2048 // D, 4096
            q, k, v = (rnd(Z, H, S, D, scale=0.5) for _ in range(3))
            o, lse = torch.empty_like(q), torch.empty(Z, H, S, device="cuda")
            return (q, k, v, o, lse, D ** -0.5, S), (S // 128, Z * H), (3, 4)
        return make

    def attention_bwd_dkdv():
        Z, H, S, D = 4, 32, 4096, 64
        q, k, v, do = (rnd(Z, H, S, D, scale=0.5) for _ in range(4))
        lse, delta = rnd(Z, H, S, dtype=torch.float32), rnd(Z, H, S, dtype=torch.float32, scale=0.1)
        dk, dv = torch.empty_like(k), torch.empty_like(v)
        return (q, k, v, do, lse, delta, dk, dv, 0.125, S), (S // 64, Z * H), (6, 7)

    return [
        ("add f32 2^24", "add.blk", "add", {"T": "f32"}, "div16", elementwise(torch.float32)),
        ("gelu f32 2^24", "activations.blk", "gelu", {"T": "f32"}, "div16", gelu),
        ("dropout f32 2^24", "dropout.blk", "dropout", {"T": "f32"}, "div16", dropout),
        ("softmax f32 4096x1024", "softmax.blk", "softmax", {"T": "f32", "BLOCK": 1024}, "div16",
         rows(4096, 1024, torch.float32)),
        ("softmax f32 4096x1000", "softmax.blk", "softmax", {"T": "f32", "BLOCK": 1024}, "div16",
         rows(4096, 1000, torch.float32)),
        ("softmax_online f16 4096x4096", "softmax_online.blk", "softmax_online", {"T": "f16", "BLOCK": 1024},
         "div16", rows(4096, 4096, torch.float16)),
        ("layer_norm_fwd f16 4096x4096", "layernorm.blk", "layer_norm_fwd", {"T": "f16", "BLOCK_SIZE": 4096},
         "div16", layer_norm),
        ("rms_norm_fwd f16 4096x4096", "rmsnorm.blk", "rms_norm_fwd", {"T": "f16", "BLOCK": 4096}, "div16", rms_norm),
        ("group_norm_fwd f32 16x256x1024/32", "groupnorm.blk", "group_norm_fwd", {"T": "f32", "BLOCK": 8192},
         "div16", group_norm),
        ("cross_entropy_fwd f32 4096x8192", "cross_entropy.blk", "cross_entropy_fwd", {"T": "f32", "BLOCK": 1024},
         "div16", cross_entropy),
        ("cumsum_rows f32 4096x1000", "cumsum.blk", "cumsum_rows", {"T": "f32", "BLOCK": 1024}, "div16", cumsum),
        ("quantize_rows f16 4096x4096", "quantize.blk", "quantize_rows", {"T": "f16", "BLOCK": 4096}, "div16",
         quantize),
        ("matmul f16 4096^3", "matmul.blk", "matmul", {}, MATMUL_TIDY, matmul(4096, 4096, 4096)),
        ("matmul f16 3000x5000x4000", "matmul.blk", "matmul", {}, [MATMUL_TIDY, MATMUL_K16],
         matmul(3000, 5000, 4000)),
        ("attn_fwd f16 D=64 S=4096", "attention.blk", "attn_fwd", {"HEAD_DIM": 64}, "div16", attention(64)),
        ("attn_fwd f16 D=128 S=4096", "attention.blk", "attn_fwd", {"HEAD_DIM": 128}, "div16", attention(128)),
        ("attn_bwd_dkdv f16 D=64 S=4096", "attention_bwd.blk", "attn_bwd_dkdv", {"HEAD_DIM": 64}, "div16",
         attention_bwd_dkdv),
    ]


def build_launcher(blkc, workdir, name, file, kernel, consts, variant):
    """The case's C launcher, compiled into a shared library; its launch function and parameter types."""
    base = os.path.join(workdir, re.sub(r"[^A-Za-z0-9_]", "_", name))
    defs = [x for k, v in consts.items() for x in ("-D", f"{k}={v}")]
    common = [blkc, os.path.join(EX, file), *defs, "--arch", "sm_90a", "--kernel", kernel, "--no-hints"]
    variants = [x for v in ([variant] if isinstance(variant, str) else variant) for x in ("--variant", v)]
    subprocess.run(common + variants + ["--emit=c", "-o", base + ".c"], check=True)
    contract = json.loads(subprocess.run(common + ["--emit=launch"], check=True, capture_output=True,
                                         text=True).stdout)
    subprocess.run(["cc", "-O2", "-std=c11", "-shared", "-fPIC", f"-I{CUDA_INCLUDE}", base + ".c", "-o", base + ".so",
                    "-lcuda", "-lpthread"], check=True)
    lib = ctypes.CDLL(base + ".so")
    fn = getattr(lib, f"{kernel}_launch")
    params = contract["kernels"][0]["params"]
    fn.argtypes = [ctypes.c_void_p] + [c_type(p["type"]) for p in params] + [ctypes.c_uint] * 3
    fn.restype = ctypes.c_int
    err = getattr(lib, f"{kernel}_last_error")
    err.restype = ctypes.c_char_p
    return fn, err, params, embedded_ptx(base + ".c", kernel)


def embedded_ptx(c_file, kernel):
    """Each variant's PTX as the generated launcher embeds it (C string literals)."""
    text = open(c_file).read()
    out = []
    for m in re.finditer(r"static const char blk_%s_ptx_\d+\[\] =\n(.*?);\n" % kernel, text, re.S):
        pieces = re.findall(r'"(?:[^"\\]|\\.)*"', m.group(1))
        out.append("".join(ast.literal_eval(p) for p in pieces))
    return out


def code_of(ptx):
    """The PTX below the contract's comment lines."""
    lines = ptx.split("\n")
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "\n".join(lines)


def c_value(arg):
    return arg.data_ptr() if isinstance(arg, torch.Tensor) else arg


def run_case(blkc, workdir, case, log):
    name, file, kernel, consts, variant, make = case
    torch.manual_seed(0)
    args, grid, outs = make()
    jit = getattr(blk.compile(os.path.join(EX, file), device="cuda"), kernel)
    fn, err, params, variants = build_launcher(blkc, workdir, name, file, kernel, consts, variant)
    g3 = tuple(grid) + (1,) * (3 - len(grid))
    cargs = [c_value(a) for a in args]

    def run_jit():
        jit[grid](*args, **consts)

    def run_aot():
        r = fn(torch.cuda.current_stream().cuda_stream, *cargs, *g3)
        if r:
            raise RuntimeError(f"{name}: launcher error {r}: {err().decode()}")

    run_jit()
    torch.cuda.synchronize()
    expect = [args[i].clone() for i in outs]
    for i in outs:
        args[i].zero_()
    run_aot()
    torch.cuda.synchronize()
    same = all(torch.equal(e, args[i]) for e, i in zip(expect, outs))
    # the PTX the JIT's launch ran (after the occupancy target the driver's registers gave) against the launcher's
    ran = code_of(jit.ptx(*args, **consts))
    which = [i for i, v in enumerate(variants) if code_of(v) == ran]
    ptx_note = f"ptx = launcher variant {which[0]}" if which else "ptx differs from every launcher variant"
    t_jit = triton.testing.do_bench(run_jit, warmup=25, rep=200)
    t_aot = triton.testing.do_bench(run_aot, warmup=25, rep=200)
    t_jit2 = triton.testing.do_bench(run_jit, warmup=25, rep=200)  # again, for the spread
    line = (f"{name:36s} results {'equal' if same else 'DIFFER'}   jit {t_jit * 1e3:9.1f} us ({t_jit2 * 1e3:9.1f})"
            f"   aot {t_aot * 1e3:9.1f} us   aot/jit {t_aot / min(t_jit, t_jit2):5.3f}   {ptx_note}")
    log(line)
    return same


def launch_by_hand(blkc, workdir, log):
    """softmax's PTX loaded and launched through the driver API, knowing only its contract comment."""
    ptx_path = os.path.join(workdir, "softmax.ptx")
    subprocess.run([blkc, os.path.join(EX, "softmax.blk"), "-D", "T=f32", "-D", "BLOCK=1024", "--arch", "sm_90a",
                    "--no-hints", "-o", ptx_path], check=True)
    text = open(ptx_path).read()
    threads = int(re.search(r"//   block: (\d+) threads", text).group(1))
    shared = int(re.search(r"//   dynamic shared memory: (\d+) bytes", text).group(1))
    params = re.findall(r"^//\s+(\d+) (\w+)\s+(\S+)\s+(\.\w+)", text, re.M)
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.cuda.init()
    M, N = 4096, 1000
    x, y = rnd(M, N, dtype=torch.float32), torch.empty(M, N, device="cuda")
    values = {"out": y.data_ptr(), "input": x.data_ptr(), "in_stride": N, "out_stride": N, "n_cols": N}
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuModuleLoadData(ctypes.byref(mod), text.encode()) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"softmax") == 0
    holders = [(ctypes.c_uint64 if ptx == ".u64" else ctypes.c_int32)(values[pname]) for _, pname, _, ptx in params]
    arr = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
    r = cuda.cuLaunchKernel(fn, M, 1, 1, threads, 1, 1, shared, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                            arr, None)
    torch.cuda.synchronize()
    ok = r == 0 and torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    log(f"softmax PTX launched by hand from its contract ({threads} threads, {shared} bytes of dynamic shared "
        f"memory, {len(params)} parameters): {'right' if ok else 'WRONG'} (cuLaunchKernel {r})")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blkc", required=True)
    ap.add_argument("--out")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    lines = []

    def log(s):
        print(s, flush=True)
        lines.append(s)

    log(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
        "times: triton.testing.do_bench medians, JIT twice")
    ok = True
    with tempfile.TemporaryDirectory() as workdir:
        ok &= launch_by_hand(a.blkc, workdir, log)
        for case in [c for c in cases() if c[0].startswith(a.only)]:
            try:
                ok &= run_case(a.blkc, workdir, case, log)
            except Exception as e:  # one case's failure is reported, the others still run
                log(f"{case[0]:36s} FAILED: {e}")
                ok = False
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
