"""Plots of bench/side_by_side.py's results: for each kernel, GB/s (kernel
time) against the row length or element count, one line per provider, as
the Triton tutorials plot theirs. Needs matplotlib.

    python3 bench/plot_side_by_side.py side_by_side.json OUT_DIR
Writes OUT_DIR/side_by_side_KERNEL.png."""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"blk": ("tab:red", "-"), "blk lock": ("tab:red", ":"), "triton": ("tab:blue", "-"),
         "torch": ("tab:green", "-")}


def x_of(size):
    """The size the plot runs along: N of "MxN dtype", n of "n=... dtype"."""
    m = re.match(r"(\d+)x(\d+)", size) or re.match(r"n=(\d+)", size)
    return int(m.groups()[-1])


def plot(rows, out_dir, gpu=""):
    for kernel in dict.fromkeys(r["kernel"] for r in rows if r["kernel"] != "copy"):
        mine = [r for r in rows if r["kernel"] == kernel]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for provider in dict.fromkeys(r["provider"] for r in mine):
            pts = sorted((x_of(r["size"]), r["bytes"] / r["kernel_us"] / 1e3) for r in mine if r["provider"] == provider)
            color, line = STYLE.get(provider, ("black", "--"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], line, color=color, marker="o", markersize=3,
                    label=provider)
        copy = [r["bytes"] / r["kernel_us"] / 1e3 for r in rows if r["kernel"] == "copy"]
        if copy:
            ax.axhline(max(copy), color="gray", linewidth=0.8, label="copy ceiling")
        if kernel in ("add", "dropout"):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n (elements)")
        else:
            ax.set_xlabel("N (row length; M = 4096)")
        ax.set_ylabel("GB/s (kernel time)")
        ax.set_title(f"{kernel}{', ' + gpu if gpu else ''}")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"side_by_side_{kernel}.png"), dpi=90)
        plt.close(fig)


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "."
    plot(data["rows"], out_dir, data.get("gpu", ""))


if __name__ == "__main__":
    main()
