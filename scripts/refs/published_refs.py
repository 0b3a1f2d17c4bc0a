# Reference values for engine::metrics::published (issue #42): the HieraRAG
# authors' own functions, copied verbatim from
# fensorechase/rag-diverse-benchmarks-synthetic-qa (commit c92311f),
# rag_system/generate/complete_analysis.py, run on the tests' inputs.
# python3 -m venv v && v/bin/pip install numpy==2.4.6 pandas==3.1.1 scikit-learn==1.9.1 scipy==1.17.1
import json
from typing import Any, Dict, List

import numpy as np
import pandas as pd
from scipy.stats import entropy
from sklearn.metrics import mutual_info_score


# --- verbatim: complete_analysis.py, compute_retrieval_metrics ---
def compute_retrieval_metrics(results: List[Dict[str, Any]]) -> Dict[str, float]:
    """Compute retrieval metrics"""
    map_scores = []
    ndcg_scores = []
    recall_at_10 = []
    
    for item in results:
        gold_docs = set(item.get('document_ids', []))
        if not gold_docs:
            continue
        
        retrieved = item.get('retrieved_document_ids', [])[:10]
        
        if not retrieved:
            map_scores.append(0.0)
            ndcg_scores.append(0.0)
            recall_at_10.append(0.0)
            continue
        
        # MAP
        relevant_retrieved = []
        for i, doc in enumerate(retrieved):
            if doc in gold_docs:
                relevant_retrieved.append(i + 1)
        
        if relevant_retrieved:
            precisions = [len([r for r in relevant_retrieved if r <= pos]) / pos 
                         for pos in relevant_retrieved]
            avg_precision = sum(precisions) / len(gold_docs)
            map_scores.append(avg_precision)
        else:
            map_scores.append(0.0)
        
        # nDCG@10
        dcg = 0.0
        idcg = sum([1.0 / np.log2(i + 2) for i in range(min(len(gold_docs), 10))])
        for i, doc in enumerate(retrieved):
            if doc in gold_docs:
                dcg += 1.0 / np.log2(i + 2)
        ndcg = dcg / idcg if idcg > 0 else 0.0
        ndcg_scores.append(ndcg)
        
        # Recall@10
        found = sum(1 for doc in retrieved if doc in gold_docs)
        recall = found / len(gold_docs) if gold_docs else 0.0
        recall_at_10.append(recall)
    
    return {
        'map': np.mean(map_scores) if map_scores else 0.0,
        'ndcg@10': np.mean(ndcg_scores) if ndcg_scores else 0.0,
        'recall@10': np.mean(recall_at_10) if recall_at_10 else 0.0,
        'n_samples': len(map_scores)
    }
# --- end verbatim ---

retrieval_cases = [
    (["a", "a", "b", "c", "a"], ["a"]),
    (["c", "a", "d", "b", "a", "e", "f", "g", "h", "i", "b", "a"], ["a", "b"]),
    ([], ["x"]),
    (["c"], ["a", "b", "c"]),
    (["z", "y"], ["a"]),
    (["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"], list("abcdefghijkl")),
]
out = {"retrieval": []}
for retrieved, gold in retrieval_cases:
    r = compute_retrieval_metrics([{"document_ids": gold, "retrieved_document_ids": retrieved}])
    out["retrieval"].append([r["map"], r["ndcg@10"], r["recall@10"]])

# --- the MI analysis (mutual_information_analysis), its data frame built from inputs ---
rng = np.random.default_rng(42)
n = 60
cos = np.round(rng.uniform(0.1, 0.95, n), 6).tolist()
cats = [["simple", "complex"][i % 2] if i < 30 else ["a", "b", "c", "d"][i % 4] for i in range(n)]
cats[0] = "simple"; cos[0] = 0.95; cos[1] = 0.1  # the extremes land on the edges
df = pd.DataFrame({"cosine_sim": cos, "group": ["coarse"] * 30 + ["medium"] * 30, "category": cats})
df['perf_bin'] = pd.cut(df['cosine_sim'], bins=5, labels=False)
out["cos"] = cos
out["cats"] = cats
out["bins"] = [int(b) for b in df['perf_bin']]
out["nmi"] = {}
for gran in ["coarse", "medium"]:
    gran_df = df[df['group'] == gran]
    mi = mutual_info_score(gran_df['category'], gran_df['perf_bin'])
    cat_entropy = entropy(gran_df['category'].value_counts(normalize=True))
    out["nmi"][gran] = mi / cat_entropy if cat_entropy > 0 else 0
# Equal values: pandas widens a zero range.
out["flat_bins"] = [int(b) for b in pd.cut(pd.Series([0.5, 0.5, 0.5]), bins=5, labels=False)]
print(json.dumps(out))
