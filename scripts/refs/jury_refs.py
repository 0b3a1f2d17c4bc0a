# Reference values for engine::judge::jury (issue #43): a jury of three
# judges with different position biases and noise over two pairs, their
# verdicts (seed 000's: aspect means over a judge's judgments, equal totals
# a tie; the median trial by relative win rate), the jury's by mean score
# and by majority, Fleiss' kappa on the winners (statsmodels), Krippendorff's
# alpha on the score differences (the krippendorff package, interval), and
# each judge's and the jury's agreement with people (scikit-learn's
# cohen_kappa_score, scipy's spearmanr).
# python3 -m venv v && v/bin/pip install krippendorff==0.9.0 scikit-learn==1.9.1 statsmodels==0.15.0 scipy==1.17.1
# v/bin/python scripts/refs/jury_refs.py > engine/tests/fixtures/jury_refs.json
import json

import krippendorff
import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

rng = np.random.default_rng(43)
JUDGES = [(0.3, 0.6), (1.2, 0.9), (-0.4, 1.4)]  # (position bias, noise sd)
PAIRS = [(1, 2), (1, 3)]
QUESTIONS = list(range(100, 140))
TRIALS = 3
quality = {(s, q): rng.uniform(1.0, 4.0) for s in (1, 2, 3) for q in QUESTIONS}


def score(true, first, bias, noise):
    return [int(min(5, max(0, round(true + (bias if first else 0.0) + rng.normal(0, noise) + rng.normal(0, 0.3))))) for _ in range(4)]


judgments = []
for a, b in PAIRS:
    for q in QUESTIONS:
        for t in range(TRIALS):
            for j, (bias, noise) in enumerate(JUDGES):
                # The third judge leaves some items unjudged (failed items).
                if j == 2 and (q + t) % 7 == 0:
                    continue
                for order in ("AFirst", "BFirst"):
                    judgments.append({
                        "a": a, "b": b, "question": q, "trial": t, "judge": j, "order": order, "repeat": 0,
                        "a_scores": score(quality[(a, q)], order == "AFirst", bias, noise),
                        "b_scores": score(quality[(b, q)], order == "BFirst", bias, noise),
                    })

human = []
for s in (1, 2, 3):
    for q in QUESTIONS:
        if s == 3 and q % 3 == 0:
            continue  # not every answer was rated
        ratings = [int(min(3, max(0, round(quality[(s, q)] - 1 + rng.normal(0, 0.7))))) for _ in range(3)]
        human.append([s, q, sum(ratings) / 3])
hmap = {(s, q): m for s, q, m in human}


def verdict(js):
    if not js:
        return None
    n = len(js)
    a = [0.0] * 4
    b = [0.0] * 4
    for j in js:
        for k in range(4):
            a[k] += j["a_scores"][k] / n
            b[k] += j["b_scores"][k] / n
    ta, tb = sum(a), sum(b)
    o = "Tie" if abs(ta - tb) < 1e-9 else ("A" if ta > tb else "B")
    return ta - tb, o


def items_of(a, b):
    out = {}
    for j in judgments:
        if (j["a"], j["b"]) == (a, b):
            out.setdefault((j["question"], j["trial"]), []).append(j)
    return out


def headline(per_item):
    # per_item: (question, trial) -> outcome
    trials = sorted({t for (_, t) in per_item})
    rows = []
    for t in trials:
        os_ = [o for (q, tt), o in per_item.items() if tt == t]
        n = len(os_)
        r = (os_.count("A") / n, os_.count("Tie") / n, os_.count("B") / n)
        rel = r[0] - r[2]
        rows.append((rel, t, r))
    rows.sort(key=lambda x: (x[0], x[1]))
    rel, t, r = rows[(len(rows) - 1) // 2]
    return {"median_trial": t, "a_win": r[0], "tie": r[1], "b_win": r[2]}


def majority(os_):
    for o in ("A", "B", "Tie"):
        if os_.count(o) * 2 > len(os_):
            return o
    return "Tie"


expected = {"judges": [], "mean": [], "majority": []}
counts = []
units = []
for j in range(len(JUDGES)):
    expected["judges"].append([])
for a, b in PAIRS:
    items = items_of(a, b)
    per_judge = [{} for _ in JUDGES]
    mean, maj = {}, {}
    for key, js in sorted(items.items()):
        vs = [verdict([x for x in js if x["judge"] == j]) for j in range(len(JUDGES))]
        for j, v in enumerate(vs):
            if v is not None:
                per_judge[j][key] = v[1]
        mean[key] = verdict(js)[1]
        maj[key] = majority([v[1] for v in vs if v is not None])
        units.append([v[0] if v is not None else np.nan for v in vs])
        if all(v is not None for v in vs):
            c = [0, 0, 0]
            for v in vs:
                c[{"A": 0, "Tie": 1, "B": 2}[v[1]]] += 1
            counts.append(c)
    for j in range(len(JUDGES)):
        expected["judges"][j].append(dict(a=a, b=b, items=len(per_judge[j]), **headline(per_judge[j])))
    expected["mean"].append(dict(a=a, b=b, items=len(mean), **headline(mean)))
    expected["majority"].append(dict(a=a, b=b, items=len(maj), **headline(maj)))

expected["items"] = len(counts)
expected["fleiss_kappa"] = float(fleiss_kappa(np.array(counts)))
expected["krippendorff_alpha"] = float(
    krippendorff.alpha(reliability_data=np.array(units).T, level_of_measurement="interval")
)


def lab(d):
    return 0 if abs(d) < 1e-9 else (1 if d > 0 else -1)


people = []
for who in list(range(len(JUDGES))) + ["jury"]:
    jd, pd_ = [], []
    for a, b in PAIRS:
        items = items_of(a, b)
        for q in QUESTIONS:
            if (a, q) not in hmap or (b, q) not in hmap:
                continue
            diffs = []
            for t in range(TRIALS):
                js = items.get((q, t), [])
                if who != "jury":
                    js = [x for x in js if x["judge"] == who]
                v = verdict(js)
                if v is not None:
                    diffs.append(v[0])
            if diffs:
                jd.append(sum(diffs) / len(diffs))
                pd_.append(hmap[(a, q)] - hmap[(b, q)])
    rho, p = spearmanr(jd, pd_)
    people.append({
        "n": len(jd),
        "cohen_kappa": float(cohen_kappa_score([lab(x) for x in jd], [lab(x) for x in pd_])),
        "spearman_rho": float(rho),
        "spearman_p": float(p),
    })
expected["people"] = people

print(json.dumps({"judges": len(JUDGES), "judgments": judgments, "human": human, "expected": expected}, separators=(",", ":")))
