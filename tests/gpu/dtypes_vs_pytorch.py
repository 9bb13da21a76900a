"""The new dtypes against PyTorch on the GPU, through the blk Python package:
  - f32 -> f8e4m3 / f8e5m2 bit for bit with .to(torch.float8_e4m3fn /
    float8_e5m2), over every f16 value (as f32) and its two f32 neighbours,
    and 2^20 random f32 of exponents -30 .. 30; every fp8 code -> f32 bit for
    bit with .float() on the GPU (NaN bits included);
  - f64 -> f16 through f32, as .to(torch.float16) gives on the GPU;
  - int8 row quantization (dsl_examples/quantize.blk) against
    torch.round(x / scale).to(torch.int8), equal but for quotients within 3 ulp
    of a tie (blk's f32 division is div.full, 2 ulp), and dequantization
    bit for bit; cumsum (dsl_examples/cumsum.blk) within 1e-4 relative of
    torch.cumsum in f64.
    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 tests/gpu/dtypes_vs_pytorch.py
Exit status 0 when all agree."""
import os
import sys

import torch

import blk

HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(HERE, "..", "..", "dsl_examples")
conv = blk.compile("""
kernel to_fp8(x: *f32, e4: *f8e4m3, e5: *f8e5m2, n: i32) {
    let o = program_id(0) * 1024 + arange(0, 1024);
    let v = load(x + o, o < n, other = 0.0);
    store(e4 + o, v as f8e4m3, o < n); store(e5 + o, v as f8e5m2, o < n);
}
kernel from_fp8(e4: *f8e4m3, e5: *f8e5m2, a: *f32, b: *f32) {
    let o = arange(0, 256);
    store(a + o, load(e4 + o) as f32); store(b + o, load(e5 + o) as f32);
}
kernel narrow(x: *f64, h: *f16, n: i32) {
    let o = program_id(0) * 256 + arange(0, 256);
    store(h + o, load(x + o, o < n, other = 0.0) as f16, o < n);
}
""")
failures = 0


def report(name, ok, detail=""):
    global failures
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def fp8():
    f16 = torch.arange(0, 1 << 16, dtype=torch.int32, device="cuda").to(torch.int16).view(torch.float16).float()
    bits = f16.view(torch.int32)
    rnd = torch.randn(1 << 20, device="cuda") * torch.exp2(torch.randint(-30, 31, (1 << 20,), device="cuda").float())
    x = torch.cat([f16, (bits + 1).view(torch.float32), (bits - 1).view(torch.float32), rnd]).contiguous()
    e4 = torch.empty(x.numel(), dtype=torch.float8_e4m3fn, device="cuda")
    e5 = torch.empty(x.numel(), dtype=torch.float8_e5m2, device="cuda")
    conv.to_fp8[(blk.cdiv(x.numel(), 1024),)](x, e4, e5, x.numel())
    for name, got, dt in (("e4m3", e4, torch.float8_e4m3fn), ("e5m2", e5, torch.float8_e5m2)):
        want = x.to(dt)
        diff = (got.view(torch.uint8) != want.view(torch.uint8)).nonzero()
        detail = "" if not diff.numel() else (f"{diff.numel()} differ, first x = {x[diff[0, 0]].item()!r}: "
                                               f"blk {got.view(torch.uint8)[diff[0, 0]].item():#x}, "
                                               f"PyTorch {want.view(torch.uint8)[diff[0, 0]].item():#x}")
        report(f"f32 -> f8{name}: {x.numel()} values bit for bit with PyTorch", not diff.numel(), detail)
    codes = torch.arange(256, dtype=torch.int32, device="cuda").to(torch.uint8)
    a, b = torch.empty(256, device="cuda"), torch.empty(256, device="cuda")
    conv.from_fp8[(1,)](codes.view(torch.float8_e4m3fn), codes.view(torch.float8_e5m2), a, b)
    for name, got, dt in (("e4m3", a, torch.float8_e4m3fn), ("e5m2", b, torch.float8_e5m2)):
        want = codes.view(dt).float()
        ndiff = (got.view(torch.int32) != want.view(torch.int32)).sum().item()
        report(f"f8{name} -> f32: all 256 codes bit for bit (NaN bits too)", ndiff == 0, f"{ndiff} differ")


def f64_to_f16():
    x = torch.tensor([1 + 2 ** -11 + 2 ** -40, 1 - 2 ** -12 - 2 ** -45, 65519.99999, 2 ** -25 + 2 ** -60],
                     dtype=torch.float64, device="cuda")
    x = torch.cat([x, torch.randn(1 << 16, dtype=torch.float64, device="cuda")])
    h = torch.empty(x.numel(), dtype=torch.float16, device="cuda")
    conv.narrow[(blk.cdiv(x.numel(), 256),)](x, h, x.numel())
    want = x.to(torch.float16)
    ndiff = (h.view(torch.int16) != want.view(torch.int16)).sum().item()
    report("f64 -> f16 (through f32) as PyTorch's .to(float16) on the GPU", ndiff == 0,
           f"{ndiff} differ, first four: blk {h[:4].tolist()}, PyTorch {want[:4].tolist()}")


def quantize():
    q_mod = blk.compile(os.path.join(EX, "quantize.blk"))
    for m, n, dtype, t in ((4096, 4096, torch.float16, "f16"), (1024, 8192, torch.bfloat16, "bf16"),
                           (300, 1000, torch.float32, "f32")):
        x = torch.randn(m, n, device="cuda", dtype=dtype) * 4
        x[1] = 0
        q = torch.empty(m, n, dtype=torch.int8, device="cuda")
        scale, y = torch.empty(m, device="cuda"), torch.empty_like(x)
        q_mod.quantize_rows[(m,)](x, q, scale, n, n, T=t, BLOCK=1024)
        q_mod.dequantize_rows[(m,)](q, scale, y, n, n, T=t, BLOCK=1024)
        ref_scale = x.float().abs().amax(1) / 127
        s_err = ((scale - ref_scale).abs() / ref_scale.clamp_min(1e-30)).max().item()
        quot = x.float() / torch.where(scale > 0, scale, 1.0)[:, None]
        ref_q = torch.round(quot).to(torch.int8)
        frac = (quot - quot.trunc()).abs()
        near_tie = ((frac - 0.5).abs() <= 3 * 2 ** -24 * quot.abs())
        bad = (q != ref_q) & ~(near_tie & ((q.int() - ref_q.int()).abs() == 1))
        ref_y = (q.float() * scale[:, None]).to(dtype)
        report(f"quantize {m}x{n} {t}: scale within 2.5e-7 ({s_err:.2g}), q as torch.round (ties: {(q != ref_q).sum().item()})",
               s_err <= 2.5e-7 and not bad.any().item(), f"{bad.sum().item()} q differ")
        report(f"dequantize {m}x{n} {t}: bit for bit with q.float() * scale", torch.equal(y, ref_y))


def cumsum():
    c_mod = blk.compile(os.path.join(EX, "cumsum.blk"))
    for m, n, dtype, t in ((4096, 4096, torch.float32, "f32"), (64, 100000, torch.float32, "f32"),
                           (1024, 8192, torch.float16, "f16")):
        x = torch.randn(m, n, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        c_mod.cumsum_rows[(m,)](x, y, n, n, T=t, BLOCK=1024)
        ref = torch.cumsum(x.double(), 1)
        scale = torch.cumsum(x.double().abs(), 1)
        err = ((y.double() - ref).abs() / scale).max().item()
        bound = 1e-4 if t == "f32" else 2e-3
        report(f"cumsum {m}x{n} {t}: error / cumsum|x| {err:.2g} <= {bound}", err <= bound)


if __name__ == "__main__":
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    fp8()
    f64_to_f16()
    quantize()
    cumsum()
    sys.exit(1 if failures else 0)
