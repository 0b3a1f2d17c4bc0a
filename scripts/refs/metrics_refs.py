# Reference values for engine::metrics (issue 9), computed once:
#   python3 -m venv v && v/bin/pip install scikit-learn==1.9.1 numpy sacrebleu==2.5.1 rouge-score==0.1.2
#   v/bin/python scripts/refs/metrics_refs.py
# The Rust tests hold these numbers; rerun after changing an input.
import numpy as np
from sklearn.metrics import average_precision_score, ndcg_score, normalized_mutual_info_score
import sacrebleu
from rouge_score import rouge_scorer

# Retrieval: a ranking of 12 chunk ids, relevant {3, 7, 11, 40}; every
# relevant id is ranked (so trec_eval's AP = sklearn's).
ranked = [7, 2, 3, 9, 5, 11, 1, 8, 6, 4, 40, 12]
relevant = {3, 7, 11, 40}
y_true = [1 if d in relevant else 0 for d in ranked]
y_score = [len(ranked) - i for i in range(len(ranked))]
print("ap", repr(average_precision_score(y_true, y_score)))
print("ndcg10", repr(ndcg_score([y_true], [y_score], k=10)))

# NMI between categories and quantile bins of scores.
scores = np.array([0.61, 0.72, 0.55, 0.80, 0.66, 0.59, 0.91, 0.47, 0.70, 0.73, 0.52, 0.88])
cats = ["a", "a", "a", "b", "b", "b", "c", "c", "c", "d", "d", "d"]
bins = np.searchsorted(np.quantile(scores, np.arange(1, 4) / 4), scores, side="right")
print("bins", list(map(int, bins)))
print("nmi", repr(normalized_mutual_info_score(cats, bins)))

pairs = [
    ("The Salt Guild fixed prices for the whole coast.", "The Salt Guild once fixed salt prices for the whole coast."),
    ("In 1849, the railway reached Hollin Cross -- but never Saltmere!", "The railway reached Hollin Cross in 1849 but not Saltmere."),
    ("Price: 3.5 shillings, 1,000 barrels; R&amp;D costs (est.) rose.", "It cost 3.5 shillings for 1,000 barrels and R&D rose."),
    ("Yes.", "The answer is yes, the wardens met every September."),
    ("Café owners in Zürich aren't sure", "cafe owners in zurich are not sure"),
]
scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
for i, (hyp, ref) in enumerate(pairs):
    r = scorer.score(ref, hyp)["rouge1"]
    print(f"rouge1_{i}", repr(r.precision), repr(r.recall), repr(r.fmeasure))
    print(f"bleu_{i}", repr(sacrebleu.sentence_bleu(hyp, [ref]).score))
print("corpus_bleu", repr(sacrebleu.corpus_bleu([h for h, _ in pairs], [[r for _, r in pairs]]).score))
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
print("tok13a", Tokenizer13a()(pairs[2][0]))
