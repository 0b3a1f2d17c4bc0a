"""Full-precision reference values of the HieraRAG authors' human-judging
scripts, for engine/tests/it/hierarag_human.rs.

Runs `9_plot_cr_human_correlation.py` from their repository verbatim except
that the statistic is written with full precision instead of 3 decimals
(their `correlation_stat.txt` keeps `r=0.236, p=0.210`), and reports how
many points it correlates. Usage (pandas, openpyxl, scipy, seaborn,
matplotlib installed):

    python scripts/refs/hierarag_human_refs.py <repo>/rag_system/human_judging \
        > engine/tests/fixtures/hierarag_human_refs.json
"""
import contextlib, io, json, os, re, shutil, sys, tempfile

src_dir = os.path.abspath(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    for sub in ("completed_human", "annotate_files"):
        shutil.copytree(os.path.join(src_dir, sub), os.path.join(tmp, sub))
    shutil.copy(os.path.join(src_dir, "complete_analysis_results.json"), tmp)
    code = open(os.path.join(src_dir, "9_plot_cr_human_correlation.py")).read()
    code = code.replace('f.write(f"r={r:.3f}, p={p:.3f}")', 'f.write(f"r={float(r)!r}, p={float(p)!r}")')
    os.chdir(tmp)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "9_plot_cr_human_correlation.py", "exec"), {"__name__": "__main__"})
    r, p = re.match(r"r=(.*), p=(.*)", open("correlation_stat.txt").read()).groups()
    n = int(re.search(r"Data points for correlation: (\d+)", out.getvalue()).group(1))
print(json.dumps({"script9": {"r": float(r), "p": float(p), "n": n}}, indent=2))
