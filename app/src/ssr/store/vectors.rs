//! Chunk embeddings (NaiveRAG), stored once per chunk and model; and the
//! embeddings of scored texts (metrics), once per text and model.

use sqlx::SqlitePool;

use crate::error::AppResult;

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The project's chunks that have no vector for `model` yet, in corpus order.
pub async fn missing(pool: &SqlitePool, project_id: i64, model: &str) -> AppResult<Vec<(i64, String)>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.body FROM chunks c
         WHERE c.project_id = ? AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = ?)
         ORDER BY c.document_id, c.idx",
    )
    .bind(project_id)
    .bind(model)
    .fetch_all(pool)
    .await?)
}

/// Every chunk's vector for `model`, in corpus order.
pub async fn load(pool: &SqlitePool, project_id: i64, model: &str) -> AppResult<Vec<(i64, Vec<f32>)>> {
    let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT c.id, v.vector FROM chunks c JOIN chunk_vectors v ON v.chunk_id = c.id AND v.model = ?
         WHERE c.project_id = ? ORDER BY c.document_id, c.idx",
    )
    .bind(model)
    .bind(project_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(id, b)| (id, from_blob(&b))).collect())
}

/// Stores vectors (replacing any for the same chunk and model), in one transaction.
pub async fn save(pool: &SqlitePool, model: &str, vectors: &[(i64, Vec<f32>)]) -> AppResult<()> {
    let mut tx = super::begin(pool).await?;
    for (chunk, v) in vectors {
        sqlx::query("INSERT OR REPLACE INTO chunk_vectors (chunk_id, model, vector) VALUES (?, ?, ?)")
            .bind(chunk)
            .bind(model)
            .bind(to_blob(v))
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The stored vectors of those `texts` that have one for `model`, by text.
pub async fn texts(
    pool: &SqlitePool,
    model: &str,
    texts: &[&str],
) -> AppResult<std::collections::HashMap<String, Vec<f32>>> {
    let mut out = std::collections::HashMap::new();
    for t in texts {
        let v: Option<Vec<u8>> = sqlx::query_scalar("SELECT vector FROM text_vectors WHERE model = ? AND hash = ?")
            .bind(model)
            .bind(crate::ssr::tokens::hash(t))
            .fetch_optional(pool)
            .await?;
        if let Some(v) = v {
            out.insert(t.to_string(), from_blob(&v));
        }
    }
    Ok(out)
}

/// Stores texts' vectors for `model`, in one transaction.
pub async fn save_texts(pool: &SqlitePool, model: &str, vectors: &[(&str, &[f32])]) -> AppResult<()> {
    let mut tx = super::begin(pool).await?;
    for (text, v) in vectors {
        sqlx::query("INSERT OR REPLACE INTO text_vectors (model, hash, vector) VALUES (?, ?, ?)")
            .bind(model)
            .bind(crate::ssr::tokens::hash(text))
            .bind(to_blob(v))
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn vectors_survive_the_blob_exactly() {
        let v = vec![0.1f32, -2.5e-8, 3.4e38, f32::MIN_POSITIVE];
        assert_eq!(super::from_blob(&super::to_blob(&v)), v);
    }
}
