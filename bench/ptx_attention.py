"""Runs attention PTX files as they are (ptxas -> cubin -> CuPy, no blkc) and
checks them against SDPA: for PTX from another build, or edited by hand, to
tell a miscompile from a wrong PTX. Each file: attn_fwd(Q, K, V, Out, LSE,
sm_scale, N_CTX), f16, [4, H, S, D] contiguous, one program per BLOCK_M rows
of one (batch, head), dynamic shared memory SMEM bytes.
  python3 bench/ptx_attention.py S D CAUSAL(0|1) BLOCK_M SMEM FILE.ptx...   (on the GPU machine)"""
import math, os, subprocess, sys, tempfile
import torch, cupy

S, D, causal, BM, smem = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5])
Z, H = 4, 32 if D == 64 else 16
torch.manual_seed(0)
q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
for path in sys.argv[6:]:
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as cubin:
        r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", path, "-o", cubin.name], capture_output=True, text=True)
    if r.returncode:
        print(f"{path}: ptxas failed: {r.stderr[:300]}")
        continue
    regs = " ".join(l.split("info    : ")[-1] for l in r.stderr.splitlines() if "registers" in l)
    threads = int(open(path).read().split(".maxntid ")[1].split(",")[0])
    fn = cupy.RawModule(path=cubin.name).get_function("attn_fwd")
    os.unlink(cubin.name)
    fn.max_dynamic_shared_size_bytes = smem
    o = torch.zeros_like(q)
    lse = torch.empty(Z, H, S, device="cuda", dtype=torch.float32)
    args = tuple(cupy.uint64(t.data_ptr()) for t in (q, k, v, o, lse)) + (cupy.float32(1 / math.sqrt(D)), cupy.int32(S))
    fn(((S + BM - 1) // BM, Z * H, 1), (threads, 1, 1), args, shared_mem=smem)
    torch.cuda.synchronize()
    print(f"{path}: max error {(o.float() - ref.float()).abs().max().item():.3g} ({regs})", flush=True)
