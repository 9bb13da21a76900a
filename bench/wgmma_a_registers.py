"""Which registers each register-form wgmma reads its a from, after ptxas:
assembles a PTX file with each ptxas given and lists the HGMMAs' a
registers in order, flagging a register-form HGMMA whose a reuses the
registers an earlier HGMMA of another chain read (attention's q K^T and
p V: q's registers, kept through the loop, given to p). Needs nvdisasm on
PATH (pip's nvidia-cuda-nvdisasm has one); ptxas from any CUDA toolkit
(pip's nvidia-cuda-nvcc and nvidia-cuda-nvcc-cu12 wheels hold several).
  python3 bench/wgmma_a_registers.py FILE.ptx PTXAS... """
import re, subprocess, sys, tempfile

ptx, assemblers = sys.argv[1], sys.argv[2:]
for ptxas in assemblers:
    version = re.search(r"release ([0-9.]+)", subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
        subprocess.run([ptxas, "-arch=sm_90a", ptx, "-o", cubin.name], check=True, capture_output=True)
        sass = subprocess.run(["nvdisasm", "-c", cubin.name], check=True, capture_output=True, text=True).stdout
    chains = []  # (accumulator, a) of each HGMMA, in program order
    for m in re.finditer(r"HGMMA\.\S+ (R\d+), (\S+?),", sass):
        chains.append((m.group(1), m.group(2)))
    seen, reused = {}, []
    for acc, a in chains:
        if a.startswith("R"):
            if a in seen and seen[a] != acc:
                reused.append(f"{a} (read for {seen[a]}, then for {acc})")
            seen.setdefault(a, acc)
    regs = " ".join(a for _, a in chains)
    print(f"ptxas {version.group(1) if version else '?'}: {'REUSED ' + ', '.join(reused) if reused else 'no reuse'}; a: {regs}")
