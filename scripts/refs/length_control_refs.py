# Reference values for engine::judge::length_control (issue #43): the
# length-controlled win rate as alpaca_eval's own code fits it
# (alpaca_eval.metrics.glm_winrate: make_dmatrix_for_model and
# fit_LogisticRegressionCV — the L1 logistic regression, its C chosen by
# 5-fold GroupKFold cross-validation on the log loss), and the
# maximum-likelihood fit of the same model (scikit-learn, no penalty).
# The features are built as _get_featurized_data builds them (its step 2)
# without its instruction-difficulty column, which needs a download from
# the Hugging Face hub: tanh of the length difference over its sample sd,
# Assay's position term, and the constant (the "length_controlled_minimal"
# formula plus the position).
# python3 -m venv v && v/bin/pip install alpaca-eval==0.6.6 scikit-learn==1.9.1 numpy==2.4.6 pandas==3.1.1 patsy==1.0.3
# v/bin/python scripts/refs/length_control_refs.py > engine/tests/fixtures/length_control_refs.json
import json
import warnings

import numpy as np
import pandas as pd
from importlib.metadata import version
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from alpaca_eval.metrics.glm_winrate import _logistic, fit_LogisticRegressionCV, make_dmatrix_for_model

warnings.filterwarnings("ignore")


def case(name, rng, questions, per_question, a_first_only=False, skill=0.3, length_bias=1.2, first_bias=0.5):
    rows = []
    for q in range(questions):
        delta = float(rng.integers(-120, 121))
        for k in range(per_question):
            a_first = True if a_first_only else (k % 2 == 0)
            z = skill + length_bias * np.tanh(delta / 60) + first_bias * (1 if a_first else -1)
            u = rng.random()
            p = 1 / (1 + np.exp(-z))
            tie = 0.15
            pref = 0.5 if u < tie else (1.0 if u < tie + (1 - tie) * p else 0.0)
            rows.append({"question": q, "preference": pref, "delta_words": delta, "a_first": a_first})
    return name, rows


def fit(rows):
    df = pd.DataFrame(rows)
    position = df["a_first"].nunique() > 1
    d = pd.DataFrame({"preference": df["preference"].astype(float)})
    d["std_delta_len"] = df["delta_words"] / df["delta_words"].std()
    d["position"] = np.where(df["a_first"], 1.0, -1.0)
    d["not_gamed_baseline"] = True
    formula = "np.tanh(std_delta_len) + " + ("position + " if position else "") + "not_gamed_baseline.astype(float) - 1"
    test = d[["not_gamed_baseline"]].copy()
    test["std_delta_len"] = 0.0
    test["position"] = 0.0
    train, x_test = make_dmatrix_for_model(d, test, formula=formula)
    names = list(x_test.columns)

    def weights(coef):
        w = dict(zip(names, coef))
        return [w["np.tanh(std_delta_len)"], w.get("position", 0.0), w["not_gamed_baseline.astype(float)"]]

    out = {}
    for label, kwargs in [("default_tol", {}), ("tight_tol", {"tol": 1e-12, "max_iter": 100000})]:
        model = fit_LogisticRegressionCV(train, "preference", is_ytrue_proba=True, **kwargs)
        pred = model.predict_proba(x_test)[:, 1]
        out[label] = {
            "weights": weights(model.coef_[0]),
            "c": float(model.C_[0]),
            "scores": model.scores_[1].sum(axis=0).tolist(),
            "win_rate": float(pred.mean()),
        }
    # The unpenalised maximum-likelihood fit of the same design.
    x = train.drop(columns=["preference"]).to_numpy()
    y = train["preference"].to_numpy()
    xx = np.vstack([x, x])
    yy = np.concatenate([np.ones(len(y)), np.zeros(len(y))])
    ww = np.concatenate([y, 1 - y])
    mle = LogisticRegression(penalty=None, fit_intercept=False, solver="newton-cg", tol=1e-14, max_iter=10000)
    mle.fit(xx, yy, sample_weight=ww)
    w = weights(mle.coef_[0])
    out["maximum_likelihood"] = {"weights": w, "win_rate": float(_logistic(w[2]))}
    # The folds GroupKFold made, to check Assay's assignment is the same.
    groups = np.concatenate([np.arange(len(y)), np.arange(len(y))])
    fold = np.zeros(len(y), dtype=int)
    for k, (_, te) in enumerate(GroupKFold(n_splits=5).split(xx, groups=groups)):
        fold[groups[te]] = k
    out["folds"] = fold.tolist()
    out["raw_win_rate"] = float(y.mean())
    return out


rng = np.random.default_rng(43)
cases = [
    case("60 questions x 4 judgments, both orders", rng, 60, 4),
    case("500 questions x 10 judgments, a strong length bias", rng, 500, 10, skill=0.1, length_bias=2.0),
    case("12 judgments: the penalty shrinks", rng, 6, 2, skill=1.5),
    case("200 questions, A always first (no position term)", rng, 200, 3, a_first_only=True, skill=-0.4),
]
out = []
for name, rows in cases:
    r = fit(rows)
    r["name"] = name
    r["observations"] = [[o["question"], o["preference"], o["delta_words"], o["a_first"]] for o in rows]
    out.append(r)
print(json.dumps({"alpaca_eval": version("alpaca-eval"), "scikit-learn": version("scikit-learn"), "cases": out}))
