# Reference values for engine::metrics::porter and the as-published text
# metrics (issue #42): NLTK's PorterStemmer() on every distinct ASCII word of
# two novels, and the HieraRAG authors' compute_rouge / compute_bleu (copied
# verbatim from complete_analysis.py) on sentence pairs of those novels.
# python3 -m venv v && v/bin/pip install nltk==3.9.2 rouge-score==0.1.2 numpy==2.4.6
#   v/bin/python scripts/refs/published_text_refs.py ../shared/corpora > engine/tests/fixtures/published_text_refs.json
import json
import re
import sys
from typing import Dict

from nltk.stem.porter import PorterStemmer
from nltk.translate.bleu_score import sentence_bleu, SmoothingFunction
from rouge_score import rouge_scorer


# --- verbatim: complete_analysis.py ---
def compute_rouge(reference: str, generated: str) -> Dict[str, float]:
    """Compute ROUGE scores"""
    scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'], use_stemmer=True)
    scores = scorer.score(reference, generated)
    return {
        'rouge1': scores['rouge1'].fmeasure,
        'rougeL': scores['rougeL'].fmeasure
    }

def compute_bleu(reference: str, generated: str) -> float:
    """Compute BLEU score"""
    reference_tokens = reference.lower().split()
    generated_tokens = generated.lower().split()
    smoothie = SmoothingFunction().method4
    return sentence_bleu([reference_tokens], generated_tokens, smoothing_function=smoothie)
# --- end verbatim ---


def body(path):
    raw = open(path, encoding="utf-8").read()
    if "*** START OF" in raw:
        raw = raw.split("*** START OF", 1)[1].split("\n", 1)[1]
    return raw


corpora = sys.argv[1]
texts = [body(f"{corpora}/{n}") for n in ("alice_in_wonderland.txt", "christmas_carol_stave1.txt")]
stemmer = PorterStemmer()
words = sorted({w for t in texts for w in re.findall(r"[a-z0-9]+", t.lower())})
stems = [stemmer.stem(w) for w in words]

sentences = [s.strip().replace("\n", " ") for t in texts for s in re.split(r"(?<=[.!?])\s+", t) if len(s.split()) >= 3]
pairs = []
for i in range(0, min(len(sentences) - 2, 600), 3):
    ref = sentences[i]
    # A generated answer: the reference with every third word dropped and the next sentence after it.
    gen = " ".join(w for j, w in enumerate(ref.split()) if j % 3 != 1) + " " + sentences[i + 1]
    pairs.append([ref, gen, compute_rouge(ref, gen)["rouge1"], compute_bleu(ref, gen)])
# Edge cases: one word, no overlap, empty generation, short hypotheses.
for ref, gen in [("The cat sat.", "cat"), ("The cat sat.", "dog ran"), ("Alice was beginning", "Alice was"),
                 ("running runners ran quickly", "runs running quickly"), ("generously generous", "generous")]:
    pairs.append([ref, gen, compute_rouge(ref, gen)["rouge1"], compute_bleu(ref, gen)])
print(json.dumps({"words": words, "stems": stems, "pairs": pairs}))
