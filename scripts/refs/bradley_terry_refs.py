# Reference values for engine::judge::ranking (Bradley–Terry, issue #43):
# choix's maximum-likelihood fit of pairwise win counts, a tie counted as
# half a win for each side (FastChat's compute_mle_elo weighting).
# python3 -m venv v && v/bin/pip install choix==0.4.1 numpy==2.4.6 scipy==1.17.1
# v/bin/python scripts/refs/bradley_terry_refs.py > engine/tests/fixtures/bradley_terry_refs.json
import json
import numpy as np
import choix


def tally(n, battles):
    """battles: (a, b, outcome) with outcome 'A', 'B' or 'T'."""
    w = np.zeros((n, n))
    for a, b, o in battles:
        if o == "A":
            w[a, b] += 1
        elif o == "B":
            w[b, a] += 1
        else:
            w[a, b] += 0.5
            w[b, a] += 0.5
    return w


cases = []
# Four methods, every pair, with ties.
four = [(0, 1, "A")] * 14 + [(0, 1, "T")] * 6 + [(0, 1, "B")] * 5 \
    + [(0, 2, "A")] * 9 + [(0, 2, "B")] * 11 + [(0, 3, "A")] * 17 + [(0, 3, "T")] * 3 \
    + [(1, 2, "A")] * 7 + [(1, 2, "T")] * 7 + [(1, 2, "B")] * 6 + [(1, 3, "A")] * 12 + [(1, 3, "B")] * 8 \
    + [(2, 3, "A")] * 10 + [(2, 3, "T")] * 2 + [(2, 3, "B")] * 8
cases.append(("four methods, every pair, ties", 4, four))
# Six methods, a chain of pairs only (not every pair compared).
rng = np.random.default_rng(7)
six = []
for a, b in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5), (1, 4)]:
    for _ in range(40):
        six.append((a, b, "ABT"[rng.integers(0, 3)]))
cases.append(("six methods, seven of fifteen pairs", 6, six))
# Eight methods of unequal strength, 5,000 questions' worth of random verdicts.
strength = np.array([0.0, 0.3, -0.2, 1.1, 0.5, -0.8, 0.05, 0.7])
eight = []
for _ in range(5000):
    a, b = rng.choice(8, size=2, replace=False)
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    u = rng.random()
    eight.append((int(a), int(b), "T" if u < 0.15 else ("A" if u < 0.15 + 0.85 * p else "B")))
cases.append(("eight methods, 5,000 random verdicts", 8, eight))

out = []
for name, n, battles in cases:
    w = tally(n, battles)
    theta = choix.ilsr_pairwise_dense(w, alpha=0.0, max_iter=100000, tol=1e-14)
    theta = theta - theta.mean()
    out.append({"name": name, "n": n, "w": w.tolist(), "theta": theta.tolist()})
print(json.dumps({"choix": "0.4.1", "cases": out}, indent=1))
