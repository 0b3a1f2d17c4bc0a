# Python sentence-transformers' throughput on the passages the Rust MiniLM
# bench embedded (scripts/bench runs it when ASSAY_ST_PYTHON names a Python
# with sentence-transformers): same model files, batch 32, CPU.
import json, sys, time
from sentence_transformers import SentenceTransformer
model_dir, passages_file = sys.argv[1], sys.argv[2]
m = SentenceTransformer(model_dir, device="cpu")
passages = json.load(open(passages_file))
questions = ["What did Sherlock Holmes deduce about Irene Adler?", "How is the red-headed league connected to the pawnbroker's shop?",
             "Why does Holmes distrust the official police?", "What role does Dr. Watson play in the adventures?"] * 32
m.encode(passages[:32], batch_size=32)  # warm up
for name, texts in (("passages", passages), ("questions", questions)):
    t = time.perf_counter()
    m.encode(texts, batch_size=32)
    print(f"MiniLM (Python sentence-transformers): {len(texts)} {name}, batch 32: {len(texts) / (time.perf_counter() - t):.1f}/s")
