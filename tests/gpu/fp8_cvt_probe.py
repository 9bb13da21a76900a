#!/usr/bin/env python3
"""What the H100's cvt.rn.satfinite.{e4m3,e5m2}x2.f32 gives, raw (no fixup), for NaN, infinities,
overflow and the boundaries: the facts elementwise.c's hw_f32_to_fp8 builds its fixup on (it makes
overflow NaN or inf, as `as` defines, with the sign). Prints a table; needs a GPU, PyTorch and
libcuda.  python3 tests/gpu/fp8_cvt_probe.py"""
import ctypes, struct, torch
torch.cuda.init(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()
cu = ctypes.CDLL("libcuda.so.1")
PTX = r"""
.version 7.8
.target sm_90
.address_size 64
.visible .entry probe(.param .u64 x, .param .u64 e4, .param .u64 e5, .param .u32 n) {
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<4>; .reg .b16 %h<4>; .reg .pred %p;
  mov.u32 %r1, %tid.x; ld.param.u32 %r2, [n]; setp.ge.u32 %p, %r1, %r2; @%p ret;
  ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [e4]; ld.param.u64 %rd3, [e5];
  mul.wide.u32 %rd4, %r1, 4; add.s64 %rd5, %rd1, %rd4; ld.global.f32 %f1, [%rd5];
  mov.f32 %f2, 0f00000000;
  cvt.rn.satfinite.e4m3x2.f32 %h1, %f2, %f1;
  cvt.rn.satfinite.e5m2x2.f32 %h2, %f2, %f1;
  mul.wide.u32 %rd4, %r1, 2; add.s64 %rd6, %rd2, %rd4; st.global.b16 [%rd6], %h1;
  add.s64 %rd7, %rd3, %rd4; st.global.b16 [%rd7], %h2;
  ret;
}
"""
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
assert cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(PTX.encode())) == 0
assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"probe") == 0
bits = [0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0xffffffff, 0x7f800000, 0xff800000,
        0x7149f2ca, 0xf149f2ca]  # +-qNaN, +-sNaN, +-NaN all ones, +-inf, +-1e30
vals = [448.0, 464.0, 464.001, 480.0, -464.0, -480.0, 57344.0, 61440.0, 61441.0, 65536.0, -61440.0, -65536.0, 0.0, -0.0]
words = bits + [struct.unpack("<I", struct.pack("<f", v))[0] for v in vals]
x = torch.tensor([w if w < 2**31 else w - 2**32 for w in words], dtype=torch.int32, device="cuda").view(torch.float32)
n = len(words)
e4 = torch.zeros(n, dtype=torch.int16, device="cuda"); e5 = torch.zeros_like(e4)
args = [ctypes.c_uint64(x.data_ptr()), ctypes.c_uint64(e4.data_ptr()), ctypes.c_uint64(e5.data_ptr()), ctypes.c_uint32(n)]
ptrs = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
assert cu.cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, ptrs, None) == 0
torch.cuda.synchronize()
print(torch.cuda.get_device_name())
print("f32 bits    value        e4m3x2  e5m2x2  (low byte: the converted value; high: 0.0)")
for w, a, b in zip(words, e4.tolist(), e5.tolist()):
    f = struct.unpack("<f", struct.pack("<I", w))[0]
    print(f"0x{w:08x}  {f!s:12} 0x{a & 0xffff:04x}  0x{b & 0xffff:04x}")
