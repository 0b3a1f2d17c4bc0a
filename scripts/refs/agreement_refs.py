# Reference values for engine::stats agreement measures (issue 8).
# python3 -m venv v && v/bin/pip install krippendorff==0.9.0 scikit-learn==1.9.1 statsmodels==0.15.0 scipy==1.17.1
import numpy as np
from statsmodels.stats.inter_rater import fleiss_kappa
import krippendorff
from sklearn.metrics import cohen_kappa_score
from scipy.stats import spearmanr

wiki = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
print("fleiss_wikipedia", repr(fleiss_kappa(wiki)))

# Likert 1-5: 4 raters (rows) x 8 items (columns), nan = not rated.
nan = np.nan
likert = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1],
    [1, 2, 3, 3, 2, 2, 4, 1],
    [nan, 3, 3, 3, 2, 3, 4, 2],
    [1, 2, 3, 4, 2, 1, 5, nan]])
print("alpha_ordinal", repr(krippendorff.alpha(reliability_data=likert, level_of_measurement="ordinal", value_domain=[1,2,3,4,5])))
print("alpha_nominal", repr(krippendorff.alpha(reliability_data=likert, level_of_measurement="nominal")))
print("alpha_interval", repr(krippendorff.alpha(reliability_data=likert, level_of_measurement="interval")))

a = [1, 2, 3, 3, 2, 1, 4, 1, 5, 5, 3, 2]
b = [1, 2, 3, 4, 2, 2, 4, 1, 4, 5, 2, 2]
print("cohen", repr(cohen_kappa_score(a, b)))
print("cohen_linear", repr(cohen_kappa_score(a, b, weights="linear")))
print("cohen_quadratic", repr(cohen_kappa_score(a, b, weights="quadratic")))
r = spearmanr(a, b)
print("spearman", repr(r.statistic), repr(r.pvalue))

# engine::study::llm_agreement: an LLM rater beside two humans on a 0-3 scale
# (five items): Spearman of the LLM against the humans' mean per item, and
# the mean of the quadratic-weighted Cohen's kappa of the LLM with each human.
L = [3, 2, 1, 1, 2]; A = [3, 2, 0, 1, 3]; B = [3, 1, 0, 2, 2]
print("llm_spearman", repr(spearmanr(L, [(x + y) / 2 for x, y in zip(A, B)])[0]))
print("llm_kappa", repr((cohen_kappa_score(L, A, weights="quadratic") + cohen_kappa_score(L, B, weights="quadratic")) / 2))
