"""Builds a real index folder with another GraphRAG system against Assay's
mock OpenAI server (`mockllm ADDR 0 0 peers`), for the import fixtures
(issue #41). Run by `scripts/peers --fixtures`; not by the tests.

    python build_index.py lightrag|nano-graphrag|graphrag OUT_DIR BASE_URL TEXT_FILE...

Each TEXT_FILE is one document (its first CHARS characters after the
Project Gutenberg header). The LLM and embedding calls go to BASE_URL; the
tokenizer files come from TIKTOKEN_CACHE_DIR (filled from the tiktoken-rs
crate by scripts/peers), so nothing reaches the internet.
"""

import asyncio
import json
import os
import shutil
import sys
import urllib.request

import numpy as np

CHARS = int(os.environ.get("ASSAY_PEERS_CHARS", "20000"))
CHUNK_TOKENS = int(os.environ.get("ASSAY_PEERS_CHUNK_TOKENS", "400"))
OVERLAP_TOKENS = 40


def text_of(path):
    raw = open(path, encoding="utf-8").read()
    marker = "*** START OF"
    if marker in raw:
        raw = raw.split(marker, 1)[1].split("\n", 1)[1]
    return raw.strip()[:CHARS]


def embed_sync(base_url, texts):
    req = urllib.request.Request(
        base_url.rstrip("/") + "/embeddings",
        data=json.dumps({"model": "mock-embed", "input": list(texts)}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer mock"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        data = json.load(r)["data"]
    return np.array([d["embedding"] for d in sorted(data, key=lambda d: d["index"])], dtype=np.float32)


async def lightrag(out, base_url, docs):
    from lightrag import LightRAG
    from lightrag.kg.shared_storage import initialize_pipeline_status
    from lightrag.llm.openai import openai_complete_if_cache
    from lightrag.utils import EmbeddingFunc

    async def llm(prompt, system_prompt=None, history_messages=None, **kw):
        kw.pop("hashing_kv", None)
        return await openai_complete_if_cache(
            "mock-model", prompt, system_prompt=system_prompt, history_messages=history_messages or [],
            base_url=base_url, api_key="mock", **kw)

    async def embed(texts, **_):
        return embed_sync(base_url, texts)

    rag = LightRAG(
        working_dir=out,
        llm_model_func=llm,
        embedding_func=EmbeddingFunc(embedding_dim=8, max_token_size=8192, func=embed),
        tiktoken_model_name="gpt-4o-mini",
        chunk_token_size=CHUNK_TOKENS,
        chunk_overlap_token_size=OVERLAP_TOKENS,
    )
    await rag.initialize_storages()
    await initialize_pipeline_status()
    await rag.ainsert([t for _, t in docs], file_paths=[p for p, _ in docs])
    await rag.finalize_storages()


def nano(out, base_url, docs):
    from nano_graphrag import GraphRAG
    from nano_graphrag._utils import wrap_embedding_func_with_attrs
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="mock")

    async def llm(prompt, system_prompt=None, history_messages=None, **kw):
        kw.pop("hashing_kv", None)
        messages = ([{"role": "system", "content": system_prompt}] if system_prompt else []) + (history_messages or [])
        messages.append({"role": "user", "content": prompt})
        r = await client.chat.completions.create(model="mock-model", messages=messages, **kw)
        return r.choices[0].message.content

    @wrap_embedding_func_with_attrs(embedding_dim=8, max_token_size=8192)
    async def embed(texts):
        return embed_sync(base_url, texts)

    rag = GraphRAG(
        working_dir=out,
        best_model_func=llm,
        cheap_model_func=llm,
        embedding_func=embed,
        chunk_token_size=CHUNK_TOKENS,
        chunk_overlap_token_size=OVERLAP_TOKENS,
        enable_llm_cache=False,
    )
    rag.insert([t for _, t in docs])


def graphrag(out, base_url, docs):
    """Microsoft GraphRAG's own CLI (`graphrag init`, `graphrag index`) in
    its own virtualenv (ASSAY_GRAPHRAG_BIN), its settings pointed at the mock."""
    import subprocess

    exe = os.environ["ASSAY_GRAPHRAG_BIN"]
    root = out + ".root"
    if os.path.exists(root):
        shutil.rmtree(root)
    subprocess.run([exe, "init", "--root", root, "-m", "gpt-4.1", "-e", "text-embedding-3-large", "--force"], check=True)
    path = os.path.join(root, "settings.yaml")
    s = open(path).read()
    for model in ("gpt-4.1", "text-embedding-3-large"):
        s = s.replace(f"    model: {model}\n", f"    model: {model}\n    api_base: {base_url}\n", 1)
    s = s.replace("  size: 1200\n  overlap: 100", f"  size: {CHUNK_TOKENS}\n  overlap: {OVERLAP_TOKENS}")
    open(path, "w").write(s)
    open(os.path.join(root, ".env"), "w").write("GRAPHRAG_API_KEY=mock\n")
    for name, text in docs:
        open(os.path.join(root, "input", name), "w").write(text)
    subprocess.run([exe, "index", "--root", root], check=True)
    for f in os.listdir(os.path.join(root, "output")):
        if f.endswith(".parquet") or f == "stats.json":
            shutil.copy(os.path.join(root, "output", f), out)


def main():
    program, out, base_url, *files = sys.argv[1:]
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    docs = [(os.path.basename(f), text_of(f)) for f in files]
    if program == "lightrag":
        asyncio.run(lightrag(out, base_url, docs))
    elif program == "nano-graphrag":
        nano(out, base_url, docs)
    elif program == "graphrag":
        graphrag(out, base_url, docs)
    else:
        sys.exit(f"unknown program {program}")


if __name__ == "__main__":
    main()
