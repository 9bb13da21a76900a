# One matmul kernel, N^3 f16 with 128x256x64 tiles and 8 warps, run 4 times, for ncu: blkc's build
# or Triton's tutorial kernel at that configuration (3 stages, its best at 2048^3 on the H100).
#   ncu -k regex:matmul --launch-skip 2 --launch-count 1 --section ... python3 bench/profile_matmul.py LIBBLK blkc|triton [N]
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import dot_bench as db
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
c = torch.empty_like(a)
if sys.argv[2] == "blkc":
    fn = db.blk_matmul(db.Blk(sys.argv[1]), a, b, c, 128, 256, 64, 8)
else:
    fn = lambda: db.tl_matmul_kernel.fn[(n // 128 * (n // 256),)](a, b, c, n, n, n, n, 1, n, 1, n, 1, BM=128, BN=256,
                                                                   BK=64, GM=8, num_warps=8, num_stages=3)
for _ in range(4):
    fn()
torch.cuda.synchronize()
