#!/usr/bin/env python3
"""5,000 question-answer pairs from a novel for the metrics benchmark
(scripts/bench, part 6): each reference two consecutive sentences, its
answer the three sentences from the second on (the same construction as
`cargo bench -p engine --bench metrics`), a question naming the pair's
index, and a category spread over a 2/4/8 QC hierarchy and the LV x QC
design. Writes questions.jsonl and answers.jsonl into OUT_DIR.

usage: metrics_pairs.py NOVEL OUT_DIR [PAIRS]
"""
import json
import re
import sys

novel, out = sys.argv[1], sys.argv[2]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
text = open(novel, encoding="utf-8").read().replace("\r\n", "\n")
sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.?!])", text)]
sentences = [s for s in sentences if len(s.split()) >= 4]
assert len(sentences) > pairs + 4, len(sentences)
with open(f"{out}/questions.jsonl", "w") as q, open(f"{out}/answers.jsonl", "w") as a:
    for i in range(pairs):
        coarse = ["simple", "complex"][i % 2]
        medium = ["m1", "m2"][i // 2 % 2]
        fine = "abcdefgh"[i % 8]
        category = [
            f"QC/{coarse}",
            f"QC/{coarse}/{medium}",
            f"QC/{coarse}/{medium}/{fine}",
            f"LV/{['similar', 'distant'][i % 2]} × QC/{['simple', 'complex'][i // 2 % 2]}",
        ][i % 4]
        question = f"Pair {i}: what follows \"{sentences[i][:60]}\"?"
        reference = f"{sentences[i]} {sentences[i + 1]}"
        answer = f"{sentences[i + 1]} {sentences[i + 2]} {sentences[i + 3]}"
        q.write(json.dumps({"question": question, "category": category, "reference_answer": reference}) + "\n")
        a.write(json.dumps({"question": question, "answer": answer}) + "\n")
