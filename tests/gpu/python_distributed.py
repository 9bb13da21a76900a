"""A blk kernel inside a torch.distributed program, one process per GPU (run
on a machine with two or more GPUs: BLK_LIBRARY=libblk.so.0 PYTHONPATH=python
python3 tests/gpu/python_distributed.py). Each rank runs blk's layer norm and
softmax on its own GPU, in the primary context PyTorch uses there, between
NCCL collectives; rank 0 checks the gathered results against PyTorch.
Exit status 0 when every check holds; 77 (skipped) with fewer than 2 GPUs."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "dsl_examples", "python"))


def inputs(rank):
    torch.manual_seed(100 + rank)
    return torch.randn(512, 1024, device="cuda")


def rank_main(rank, world, port, results):
    import blk
    import layer_norm
    from softmax import softmax
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    x = inputs(rank).requires_grad_()
    w = torch.ones(1024, device="cuda", requires_grad=True)
    b = torch.zeros(1024, device="cuda", requires_grad=True)
    y = layer_norm.layer_norm(x, (1024,), w, b)
    y.sum().backward()
    dist.all_reduce(w.grad)  # a collective over what blk's backward produced
    s = softmax(y.detach())
    gathered = [torch.empty_like(s) for _ in range(world)]
    dist.all_gather(gathered, s)
    ok = True
    if rank == 0:
        for r, got in enumerate(gathered):
            ref = torch.softmax(F.layer_norm(inputs(r), (1024,)), -1)
            ok &= (got - ref).abs().max().item() < 1e-5
        # y.sum() makes dy all ones, so dW is the sum of xhat over rows and ranks
        ref_wgrad = sum(F.layer_norm(inputs(r), (1024,)).sum(0) for r in range(world))
        ok &= (w.grad - ref_wgrad).abs().max().item() < 1e-2
        results.put((ok, blk.device_name("cuda", rank)))
    dist.barrier()
    dist.destroy_process_group()


def main():
    world = torch.cuda.device_count()
    if world < 2:
        print("skip: fewer than 2 GPUs")
        sys.exit(77)
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(rank_main, args=(world, 29517, results), nprocs=world, join=True)
    ok, dev = results.get()
    print(f"{'ok' if ok else 'FAIL':4} {world} ranks (rank 0 on {dev}): blk layer norm forward and backward and "
          "softmax between NCCL all_reduce / all_gather, gathered results equal PyTorch's (1e-5; dW 1e-2)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
