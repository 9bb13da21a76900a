"""Registers an in-flight HGMMA reads (its register-form a) or writes (its
accumulators) that another instruction writes before a WARPGROUP.DEPBAR
waits for it, following the SASS's branches (a back edge too): what ptxas
must never do, and what blkc's p V, left in flight into the next iteration,
would suffer if ptxas reused p's registers early. Conservative: an
instruction's destination is its first operand, 1, 2 or 4 registers wide
by its suffix. Exit status 1 when any file has one.
  python3 bench/wgmma_hazards.py FILE.sass...   (nvdisasm -c output of a cubin)"""
import re, sys

INSN = re.compile(r"/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)\s*(.*?)\s*;")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")

def parse(path):
    insns, labels = [], {}
    for line in open(path):
        m = LABEL.match(line)
        if m:
            labels[m.group(1)] = len(insns)
            continue
        m = INSN.search(line)
        if m:
            insns.append((int(m.group(1), 16), bool(m.group(2)), m.group(3), m.group(4)))
    return insns, labels

def width(op, dest_index=0):
    if op.startswith("HGMMA"): return 0
    if re.search(r"\.(128|4)\b", op) or op.startswith("LDSM") and op.endswith(".4"): return 4
    if re.search(r"\.(64|WIDE|2)\b", op) or "M88.2" in op: return 2
    return 1

NO_DEST = ("ST", "STS", "STG", "STL", "BAR", "BRA", "EXIT", "RED", "LDGSTS", "MEMBAR", "FENCE", "WARPGROUP", "DEPBAR",
           "NOP", "BSYNC", "BSSY", "WARPSYNC", "SYNCS", "UTMALDG", "UTMASTG", "UBLKCP", "ERRBAR", "CCTL", "RET", "CALL",
           "LDGDEPBAR", "ARRIVES", "YIELD", "BPT", "HGMMA")

def writes(op, args):
    """The R registers an instruction writes."""
    base = op.split(".")[0]
    if base in NO_DEST or base.startswith("UTMA"): return set()
    first = args.split(",")[0].strip()
    m = re.fullmatch(r"R(\d+)", first)
    if not m: return set()
    r = int(m.group(1))
    return set(range(r, r + width(op)))

def successors(insns, labels, i):
    _, pred, op, args = insns[i]
    out = []
    if op.startswith("BRA"):
        t = re.search(r"\((\.L_x_\d+)\)", args)
        if t: out.append(labels[t.group(1)])
        if pred: out.append(i + 1)
    elif op.startswith("EXIT") or op.startswith("RET"):
        if pred: out.append(i + 1)
    else:
        out.append(i + 1)
    return [s for s in out if s < len(insns)]

def check(path):
    insns, labels = parse(path)
    found = []
    for i, (addr, pred, op, args) in enumerate(insns):
        if not op.startswith("HGMMA"): continue
        parts = [a.strip() for a in args.split(",")]
        acc = int(parts[0][1:])
        shape = re.match(r"HGMMA\.64x(\d+)x", op)
        live = set(range(acc, acc + int(shape.group(1)) // 2))
        chain = set(live)
        if re.fullmatch(r"R\d+", parts[1]):
            a = int(parts[1][1:])
            live |= set(range(a, a + 4))
        seen, stack = set(), successors(insns, labels, i)
        while stack:
            j = stack.pop()
            if j in seen: continue
            seen.add(j)
            _, _, op2, args2 = insns[j]
            if op2.startswith("WARPGROUP.DEPBAR") and args2.replace(" ", "").endswith("0x0"): continue
            if op2.startswith("HGMMA") and int(args2.split(",")[0].strip()[1:]) in chain: pass  # the same chain of accumulations
            else:
                hit = writes(op2, args2) & live
                if hit: found.append((addr, insns[j][0], op2, sorted(hit)))
            stack += successors(insns, labels, j)
    return found

bad = 0
for path in sys.argv[1:]:
    f = check(path)
    bad += bool(f)
    print(f"{path}: {'%d hazards' % len(f) if f else 'clean'}")
    for addr, at, op, regs in f[:8]:
        print(f"  HGMMA at {addr:#06x}: {op} at {at:#06x} writes R{regs}")
sys.exit(1 if bad else 0)
