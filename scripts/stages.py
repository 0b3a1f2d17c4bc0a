"""Prints an `assay run --json` summary's stages: time, new and cached calls."""
import json
import sys

d = json.load(open(sys.argv[1]))
for s in d["stages"]:
    print("  {:<44} {:7.1f} s {:>8} new {:>8} cached".format(s["label"], s["seconds"], s["new_calls"], s["cached_calls"]))
print("  total: {} new, {} cached calls".format(d["new_calls"], d["cached_calls"]))
