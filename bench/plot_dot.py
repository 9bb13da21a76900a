"""Plots of bench/dot_bench.py's results (its --out markdown): TFLOP/s (kernel
time) against the size, one line per provider, as the Triton tutorials plot
theirs. Needs matplotlib.

    python3 bench/plot_dot.py dot_bench.md OUT_DIR [SUFFIX]
Writes OUT_DIR/dot_matmul{SUFFIX}.png and OUT_DIR/dot_attention{SUFFIX}.png."""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"cuBLAS": "tab:green", "SDPA": "tab:green", "Triton": "tab:blue", "blkc": "tab:red"}


def tables(path):
    """Each markdown table of the file: (the heading above it, its rows as dicts)."""
    out, heading, header = [], "", None
    for line in open(path):
        line = line.strip()
        if line.startswith("## "):
            heading, header = line[3:], None
        elif line.startswith("|") and "---" not in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                header = cells
                out.append((heading, []))
            else:
                out[-1][1].append(dict(zip(header, cells)))
        elif not line.startswith("|"):
            header = None
    return out


def lines_of(ax, rows, x, providers, style="-", label=""):
    for p in providers:
        pts = [(float(r[x]), float(r[f"{p} TFLOP/s"])) for r in rows if r.get(f"{p} TFLOP/s", "nan") != "nan"]
        if pts:
            ax.plot(*zip(*sorted(pts)), style, marker="o", color=COLORS[p], label=f"{p}{label}")


def main():
    src, out_dir = sys.argv[1], sys.argv[2]
    suffix = sys.argv[3] if len(sys.argv) > 3 else ""
    gpu = open(src).readline().strip().lstrip("# ")
    for heading, rows in tables(src):
        if heading.startswith("matmul"):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            squares = [r for r in rows if r["M"] == r["N"] == r["K"] and int(r["M"]) >= 1024]
            for dtype, style in (("float16", "-"), ("bfloat16", "--")):
                lines_of(ax, [r for r in squares if r["dtype"] == dtype], "M", ("cuBLAS", "Triton", "blkc"), style,
                         f" {dtype}")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("M = N = K")
            ax.set_title("matmul, f32 accumulation")
            name = "dot_matmul"
        elif heading.startswith("attention forward"):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            labels = [f"D={r['D']}{' causal' if r['causal'] == 'yes' else ''}\nS={r['S']}" for r in rows]
            for p in ("SDPA", "Triton", "blkc"):
                ax.plot(range(len(rows)), [float(r[f"{p} TFLOP/s"]) for r in rows], marker="o", color=COLORS[p],
                        label=p)
            ax.set_xticks(range(len(rows)), labels, fontsize=7)
            ax.set_title("attention forward, f16, batch 4")
            name = "dot_attention"
        else:
            continue
        ax.set_ylabel("TFLOP/s (kernel time)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.text(0.01, 0.01, gpu[:110], fontsize=6)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"{name}{suffix}.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
