-- Chunk embeddings for dense retrieval (NaiveRAG), computed once per chunk
-- and model and reused by every answer set. Little-endian f32s.
CREATE TABLE chunk_vectors (
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    model    TEXT    NOT NULL,
    vector   BLOB    NOT NULL,
    PRIMARY KEY (chunk_id, model)
);
