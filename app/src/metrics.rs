//! Reference-based metrics of answer sets over a question set with
//! reference answers (seed 004 §2.3–2.4), for the CLI and (later) the
//! Metrics page: per answer set and question, retrieval against the
//! question's source chunks (AP, nDCG@k, Recall@k — for methods that
//! record the chunks they retrieved) and the answer against the reference
//! (cosine similarity of all-MiniLM-L6-v2 embeddings, ROUGE-1 F1, sentence
//! BLEU), their means overall and per category, corpus BLEU, the
//! granularity analysis of the cosine similarities, and seed 004's LV × QC
//! factorial table. Each text is embedded once per run.

use std::collections::{BTreeMap, HashMap, HashSet};

use engine::metrics::granularity::{self, DimensionAnalysis, Scored};
use engine::metrics::{self as m, text};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::store;

/// One question's metrics for one answer set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionMetrics {
    pub question_id: i64,
    pub category: Option<String>,
    /// `None` when the method recorded no retrieved chunks.
    pub ap: Option<f64>,
    pub ndcg: Option<f64>,
    pub recall: Option<f64>,
    pub cs: f64,
    pub rouge1: f64,
    pub bleu: f64,
}

/// Means of a group of questions (the page's own type: nothing to convert).
pub type Means = crate::model::MetricsMeansView;

/// One cell of the LV × QC table: (LV, QC, means).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub lv: String,
    pub qc: String,
    pub means: Means,
}

/// One answer set's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetMetrics {
    pub answer_set_id: i64,
    pub name: String,
    pub method: String,
    pub overall: Means,
    pub corpus_bleu: f64,
    pub per_category: Vec<Means>,
    pub granularity: Vec<DimensionAnalysis>,
    pub factorial: Vec<Cell>,
    pub questions: Vec<QuestionMetrics>,
}

/// The report of a metrics run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub question_set_id: i64,
    pub k: usize,
    pub bins: usize,
    pub embedding_model: String,
    pub sets: Vec<SetMetrics>,
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn mean_opt(v: &[Option<f64>]) -> Option<f64> {
    let known: Vec<f64> = v.iter().flatten().copied().collect();
    (!known.is_empty()).then(|| mean(known.into_iter()))
}

fn means(group: &str, qs: &[&QuestionMetrics]) -> Means {
    Means {
        group: group.to_string(),
        n: qs.len(),
        map: mean_opt(&qs.iter().map(|q| q.ap).collect::<Vec<_>>()),
        ndcg: mean_opt(&qs.iter().map(|q| q.ndcg).collect::<Vec<_>>()),
        recall: mean_opt(&qs.iter().map(|q| q.recall).collect::<Vec<_>>()),
        cs: mean(qs.iter().map(|q| q.cs)),
        rouge1: mean(qs.iter().map(|q| q.rouge1)),
        bleu: mean(qs.iter().map(|q| q.bleu)),
    }
}

/// Metrics of `answer_sets` over their question set's reference answers.
pub async fn run(pool: &SqlitePool, set_id: i64, answer_sets: &[i64], k: usize, bins: usize) -> AppResult<Report> {
    if answer_sets.is_empty() {
        return Err(AppError::Invalid("choose at least one answer set".into()));
    }
    if k == 0 || bins < 2 {
        return Err(AppError::Invalid("k must be at least 1 and bins at least 2".into()));
    }
    let questions = store::questions::list_questions(pool, set_id).await?;
    let with_reference: Vec<_> =
        questions.iter().filter(|q| q.reference_answer.as_deref().is_some_and(|r| !r.trim().is_empty())).collect();
    if with_reference.is_empty() {
        return Err(AppError::Invalid(format!(
            "question set {set_id} has no reference answers: generate hierarchical questions, or import a set with them"
        )));
    }
    let model = crate::answers::minilm().map_err(AppError::Invalid)?;
    let mut vectors: HashMap<String, Vec<f32>> = HashMap::new();
    let mut sets = Vec::new();
    for &a in answer_sets {
        let aset = store::answers::get_set(pool, a).await?;
        if aset.question_set_id != set_id {
            return Err(AppError::Invalid(format!(
                "answer set {a} answers question set {}, not {set_id}",
                aset.question_set_id
            )));
        }
        let answers: HashMap<i64, crate::model::AnswerView> =
            store::answers::list_answers(pool, a, None).await?.into_iter().map(|x| (x.question_id, x)).collect();
        // Embed each text not seen yet in this run, in batches.
        let texts: Vec<&str> = with_reference
            .iter()
            .filter_map(|q| answers.get(&q.id).map(|x| (q, x)))
            .flat_map(|(q, x)| [q.reference_answer.as_deref().unwrap_or(""), x.answer.as_str()])
            .filter(|t| !vectors.contains_key(*t))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        for batch in texts.chunks(32) {
            let out = model.embed(batch).map_err(|e| AppError::Invalid(e.to_string()))?;
            for (t, v) in batch.iter().zip(out) {
                vectors.insert(t.to_string(), v);
            }
        }
        let mut per_question = Vec::new();
        for q in &with_reference {
            let Some(x) = answers.get(&q.id) else { continue };
            let reference = q.reference_answer.as_deref().unwrap_or("");
            let ranked: Vec<i64> =
                x.contexts.iter().filter(|c| c.kind == "chunk").filter_map(|c| c.id.parse().ok()).collect();
            let relevant: HashSet<i64> = q.source_chunk_ids.iter().copied().collect();
            let retrieval = !ranked.is_empty() && !relevant.is_empty();
            per_question.push(QuestionMetrics {
                question_id: q.id,
                category: q.category.clone(),
                ap: retrieval.then(|| m::average_precision(&ranked, &relevant)),
                ndcg: retrieval.then(|| m::ndcg_at(&ranked, &relevant, k)),
                recall: retrieval.then(|| m::recall_at(&ranked, &relevant, k)),
                cs: m::cosine(&vectors[reference], &vectors[x.answer.as_str()]),
                rouge1: text::rouge1(reference, &x.answer).f1,
                bleu: text::sentence_bleu(&x.answer, reference),
            });
        }
        if per_question.is_empty() {
            return Err(AppError::Invalid(format!("answer set {a} answers none of the questions with a reference")));
        }
        let all: Vec<&QuestionMetrics> = per_question.iter().collect();
        let mut by_category: BTreeMap<String, Vec<&QuestionMetrics>> = BTreeMap::new();
        for q in &per_question {
            by_category.entry(q.category.clone().unwrap_or_else(|| "(none)".into())).or_default().push(q);
        }
        let scored: Vec<Scored> =
            per_question.iter().filter_map(|q| Some(Scored { category: q.category.clone()?, score: q.cs })).collect();
        // LV × QC cells: questions whose category names one of each.
        let mut cells: BTreeMap<(String, String), Vec<&QuestionMetrics>> = BTreeMap::new();
        for q in &per_question {
            let Some(c) = q.category.as_deref().filter(|c| c.contains(" × ")) else { continue };
            let parts: Vec<&str> = c.split(" × ").collect();
            let find = |d: &str| parts.iter().find(|p| p.starts_with(&format!("{d}/"))).map(|p| p.to_string());
            if let (Some(lv), Some(qc)) = (find("LV"), find("QC")) {
                cells.entry((lv, qc)).or_default().push(q);
            }
        }
        sets.push(SetMetrics {
            answer_set_id: a,
            name: aset.name.clone(),
            method: aset.method.clone(),
            overall: means("all", &all),
            corpus_bleu: text::corpus_bleu(with_reference.iter().filter_map(|q| {
                answers.get(&q.id).map(|x| (x.answer.as_str(), q.reference_answer.as_deref().unwrap_or("")))
            })),
            per_category: by_category.iter().map(|(c, qs)| means(c, qs)).collect(),
            granularity: granularity::analyse(&scored, bins),
            factorial: cells
                .into_iter()
                .map(|((lv, qc), qs)| Cell { means: means(&format!("{lv} × {qc}"), &qs), lv, qc })
                .collect(),
            questions: per_question,
        });
    }
    Ok(Report { question_set_id: set_id, k, bins, embedding_model: "all-MiniLM-L6-v2 (in process)".into(), sets })
}

/// The report as the Metrics page shows it, with its charts.
pub fn view(r: &Report) -> crate::model::MetricsView {
    use crate::model::{GranularityRow, SetMetricsView, SplitRow};
    crate::model::MetricsView {
        question_set_id: r.question_set_id,
        k: r.k,
        bins: r.bins,
        embedding_model: r.embedding_model.clone(),
        sets: r
            .sets
            .iter()
            .map(|s| SetMetricsView {
                answer_set_id: s.answer_set_id,
                name: s.name.clone(),
                method: s.method.clone(),
                overall: s.overall.clone(),
                corpus_bleu: s.corpus_bleu,
                per_category: s.per_category.clone(),
                granularity: s
                    .granularity
                    .iter()
                    .flat_map(|d| {
                        d.levels.iter().map(|l| GranularityRow {
                            dimension: d.dimension.clone(),
                            categories: l.categories,
                            questions: l.questions,
                            power: l.discriminative_power,
                            change: l.change,
                            nmi: l.nmi,
                            optimal: d.optimal == Some(l.categories),
                        })
                    })
                    .collect(),
                splits: s
                    .granularity
                    .iter()
                    .flat_map(|d| {
                        d.splits.iter().map(|x| SplitRow {
                            dimension: d.dimension.clone(),
                            parent: x.parent.clone(),
                            children: x.children.clone(),
                            sigma_sib: x.sigma_sib,
                            delta_vert: x.delta_vert,
                            rho: x.rho,
                            verdict: x.verdict().into(),
                        })
                    })
                    .collect(),
                factorial: s.factorial.iter().map(|c| (c.lv.clone(), c.qc.clone(), c.means.clone())).collect(),
                power_svg: granularity::power_chart_svg(
                    &format!("{} — discriminative power by level", s.name),
                    &s.granularity,
                ),
                trees: s.granularity.iter().map(|d| (d.dimension.clone(), granularity::tree_svg(d))).collect(),
            })
            .collect(),
    }
}

/// Every question's metrics as CSV: answer set, question, category, AP,
/// nDCG, recall, CS, ROUGE-1, BLEU.
pub fn questions_csv(r: &Report) -> String {
    let mut out = String::from("answer_set,question_id,category,ap,ndcg,recall,cs,rouge1,bleu\n");
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    for s in &r.sets {
        for q in &s.questions {
            let category = q.category.clone().unwrap_or_default().replace('"', "\"\"");
            out += &format!(
                "{},{},\"{category}\",{},{},{},{},{},{}\n",
                s.answer_set_id,
                q.question_id,
                num(q.ap),
                num(q.ndcg),
                num(q.recall),
                q.cs,
                q.rouge1,
                q.bleu
            );
        }
    }
    out
}
