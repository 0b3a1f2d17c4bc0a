#!/usr/bin/env python3
"""Draws docs/bench/ingest.png from criterion's estimates of
`cargo bench -p engine --bench ingest`: time to count and chunk a text
against its size, per kind of text (issue #40)."""
import json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

target = os.environ.get("CARGO_TARGET_DIR", "target")
base = os.path.join(target, "criterion", "ingest")
out = sys.argv[1] if len(sys.argv) > 1 else "docs/bench/ingest.png"
fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
for kind in ["abab", "one word", "han", "prose"]:
    xs, ys = [], []
    for kb in [64, 256, 1024, 4096, 8192]:
        f = os.path.join(base, kind, str(kb), "new", "estimates.json")
        if os.path.exists(f):
            xs.append(kb / 1024)
            ys.append(json.load(open(f))["mean"]["point_estimate"] / 1e9)
    ax.plot(xs, ys, marker="o", label=kind + (" (text-splitter)" if kind == "prose" else " (packer)"))
ax.set_xlabel("text size (MiB)")
ax.set_ylabel("count + chunk, seconds (mean)")
ax.set_title("Ingestion time against size (release, 1200-token chunks)")
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(out)
print(out)
