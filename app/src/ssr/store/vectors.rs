//! Chunk embeddings (NaiveRAG), stored once per chunk and model; and the
//! embeddings of scored texts (metrics), once per text and model.

use super::{on_db, Db};

use crate::error::AppResult;

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The project's chunks that have no vector for `model` yet, in corpus order.
pub async fn missing(pool: &Db, project_id: i64, model: &str) -> AppResult<Vec<(i64, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT c.id, c.body FROM chunks c
         WHERE c.project_id = $1 AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = $2)
         ORDER BY c.document_id, c.idx",
        )
        .bind(project_id)
        .bind(model)
        .fetch_all(db)
        .await?)
    })
}

/// Every chunk's vector for `model`, in corpus order.
pub async fn load(pool: &Db, project_id: i64, model: &str) -> AppResult<Vec<(i64, Vec<f32>)>> {
    on_db!(pool, |db| {
        let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
            "SELECT c.id, v.vector FROM chunks c JOIN chunk_vectors v ON v.chunk_id = c.id AND v.model = $1
         WHERE c.project_id = $2 ORDER BY c.document_id, c.idx",
        )
        .bind(model)
        .bind(project_id)
        .fetch_all(db)
        .await?;
        Ok(rows.into_iter().map(|(id, b)| (id, from_blob(&b))).collect())
    })
}

/// Stores vectors (replacing any for the same chunk and model), in one transaction.
pub async fn save(pool: &Db, model: &str, vectors: &[(i64, Vec<f32>)]) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        for (chunk, v) in vectors {
            sqlx::query(
                "INSERT INTO chunk_vectors (chunk_id, model, vector) VALUES ($1, $2, $3)
             ON CONFLICT (chunk_id, model) DO UPDATE SET vector = excluded.vector",
            )
            .bind(chunk)
            .bind(model)
            .bind(to_blob(v))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    })
}

/// The stored vectors of those `texts` that have one for `model`, by text.
pub async fn texts(pool: &Db, model: &str, texts: &[&str]) -> AppResult<std::collections::HashMap<String, Vec<f32>>> {
    on_db!(pool, |db| {
        let mut out = std::collections::HashMap::new();
        for t in texts {
            let v: Option<Vec<u8>> =
                sqlx::query_scalar("SELECT vector FROM text_vectors WHERE model = $1 AND hash = $2")
                    .bind(model)
                    .bind(crate::ssr::tokens::hash(t))
                    .fetch_optional(db)
                    .await?;
            if let Some(v) = v {
                out.insert(t.to_string(), from_blob(&v));
            }
        }
        Ok(out)
    })
}

/// Stores texts' vectors for `model`, in one transaction.
pub async fn save_texts(pool: &Db, model: &str, vectors: &[(&str, &[f32])]) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        for (text, v) in vectors {
            sqlx::query(
                "INSERT INTO text_vectors (model, hash, vector) VALUES ($1, $2, $3)
             ON CONFLICT (model, hash) DO UPDATE SET vector = excluded.vector",
            )
            .bind(model)
            .bind(crate::ssr::tokens::hash(text))
            .bind(to_blob(v))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn vectors_survive_the_blob_exactly() {
        let v = vec![0.1f32, -2.5e-8, 3.4e38, f32::MIN_POSITIVE];
        assert_eq!(super::from_blob(&super::to_blob(&v)), v);
    }
}
