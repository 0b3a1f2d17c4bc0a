# The reference for engine/benches/minilm.rs: Python sentence-transformers
# on the same passages and model files, batch 32, CPU, all cores (torch's
# own threading). Prints its rate ("passages/s N", which the bench reads)
# and, given the Rust vectors, the least cosine between the two.
#   python st_throughput.py MODEL_DIR passages.json [vectors.json]
import json, sys, time
import numpy as np
from sentence_transformers import SentenceTransformer
import torch
model_dir, passages_file = sys.argv[1], sys.argv[2]
m = SentenceTransformer(model_dir, device="cpu")
m.max_seq_length = 256
passages = json.load(open(passages_file))
m.encode(passages[:32], batch_size=32)  # warm up
t = time.perf_counter()
vectors = m.encode(passages, batch_size=32, normalize_embeddings=True)
rate = len(passages) / (time.perf_counter() - t)
print(f"MiniLM (Python sentence-transformers {__import__('sentence_transformers').__version__}, torch {torch.__version__}, {torch.get_num_threads()} threads): {len(passages)} passages, batch 32: {rate:.1f} passages/s")
print(f"passages/s {rate:.3f}")
if len(sys.argv) > 3:
    ours = np.array(json.load(open(sys.argv[3])), dtype=np.float64)
    theirs = np.array(vectors, dtype=np.float64)
    cos = (ours * theirs).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    print(f"  vectors: least cosine between Assay's and sentence-transformers' {cos.min():.7f} (mean {cos.mean():.7f})")
