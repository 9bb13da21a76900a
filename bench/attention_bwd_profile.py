"""One attention backward at a benchmark shape, for ncu: the five-product kernels (fused) or the
seven-product ones (seven), each launched twice (the second is the one to profile); or the
forward (forward: its configuration BLOCK_MxBLOCK_NxWARPS). On the GPU machine, e.g.
    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python ncu --kernel-name regex:dkdvdq \\
        --launch-skip 1 --launch-count 1 --section SpeedOfLight python3 bench/attention_bwd_profile.py 64 4096 64x32x4 fused
Arguments: D, S (16k tokens a batch, 2048/D heads, as attention_bench.py), the configuration
BLOCK_NxBLOCK_MxWARPS, fused or seven (whose dQ kernel takes the same configuration), or forward;
then, optionally, compile flags to build with (NAME[,NAME...], blk.FLAGS)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_bench as ab  # noqa: E402

D, S, cfg = int(sys.argv[1]), int(sys.argv[2]), tuple(int(x) for x in sys.argv[3].split("x"))
mode = sys.argv[4]
B, H = 16384 // S, 2048 // D
q, k, v, do = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(4))
flags = sys.argv[5].split(",") if len(sys.argv) > 5 else []
ba = ab.BlkAttention(**{f: True for f in flags})
o, lse, delta, dq_acc, dq, dk, dv = ab.forward_for_backward(ba, q, k, v, False)
if mode == "forward":
    runs = [ba.forward(q, k, v, o, lse, False, cfg)]
elif mode == "fused":
    runs = ba.fused_kernels(q, k, v, o, do, lse, delta, dq_acc, dq, dk, dv, False, cfg)
else:
    runs = ba.backward_kernels(q, k, v, o, do, lse, delta, dq, dk, dv, False, cfg, cfg)
for _ in range(2):
    for run in runs:
        run()
torch.cuda.synchronize()
