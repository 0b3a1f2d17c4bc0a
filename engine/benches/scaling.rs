//! How the graph stages grow with the corpus: generated corpora of 0.5, 1,
//! 2, 4 and 8 MB (the real novels and the UltraDomain slice, each further
//! copy with its names changed — "Holmes" → "Holmesb" — so the graph grows
//! with the text rather than repeating it), timed stage by stage, offline:
//! chunking, extraction, merging, alias resolution, communities, the
//! explorer's layout, 150 graph questions (plan and items) and FastGraphRAG
//! retrieval (seeds and PPR) for 50 questions.
//!
//! Prints a table (seconds per stage and size) and each stage's growth
//! against linear: (time at 8 MB ÷ time at 0.5 MB) ÷ 16, 1.0 for linear;
//! draws the times on log-log axes (`scaling.svg` in `ASSAY_BENCH_OUT`, else
//! the target directory).
//!
//! `cargo bench -p engine --bench scaling` (`ASSAY_SCALING_MB=0.5,1,2`
//! chooses the sizes).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use engine::chunk::{chunk_text, ChunkSettings};
use engine::graph::KnowledgeGraph;
use engine::questions::graph::GraphQuestionSettings;
use engine::rag::fastgraphrag::{FastGraphRag, FastGraphRagSettings};
use engine::rag::Corpus;
use plotters::prelude::*;

const STAGES: [&str; 8] = [
    "chunking",
    "extraction (offline)",
    "merging",
    "alias resolution",
    "communities (Leiden)",
    "explorer layout",
    "graph questions: 150 items",
    "fastgraphrag: 50 retrievals",
];

fn corpora_dir() -> String {
    std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into())
}

/// The real texts: three novels and the UltraDomain slice's documents.
fn base_texts() -> Vec<String> {
    let dir = corpora_dir();
    let mut texts: Vec<String> = ["sherlock_holmes.txt", "alice_in_wonderland.txt", "christmas_carol_stave1.txt"]
        .iter()
        .map(|n| std::fs::read_to_string(format!("{dir}/{n}")).unwrap().replace("\r\n", "\n"))
        .collect();
    for line in std::fs::read_to_string(format!("{dir}/ultradomain_mix_slice5.jsonl")).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        texts.push(v["context"].as_str().unwrap().to_string());
    }
    texts
}

/// Words that stay as they are in every copy: titles and sentence openers.
const KEEP: &[&str] = &[
    "The", "And", "But", "Mr", "Mrs", "Miss", "Dr", "Sir", "Lady", "Lord", "He", "She", "It", "They", "We", "You",
    "His", "Her", "This", "That", "There", "What", "When", "Then", "In", "On", "At", "Of", "As", "If", "So", "No",
];

/// Copy `n` of `text` (0: as it is): every capitalised word of three or more
/// letters outside [`KEEP`] gets the suffix of copy `n` ("b", "c", …, "ab").
fn copy(text: &str, n: usize) -> String {
    if n == 0 {
        return text.to_string();
    }
    let mut suffix = String::new();
    let mut k = n;
    while k > 0 {
        suffix.insert(0, (b'a' + (k % 26) as u8) as char);
        k /= 26;
    }
    let keep: HashSet<&str> = KEEP.iter().copied().collect();
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(word);
        let mut chars = word.chars();
        let capital = chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase);
        if capital && word.chars().count() >= 3 && !keep.contains(word.as_str()) {
            out.push_str(&suffix);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphabetic() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A corpus of about `mb` megabytes with the same mix of texts at every
/// size: the base texts cut into sections of about 64 KB (at a paragraph),
/// taken in turn from each text (first sections first), then copies.
fn generated(mb: f64, base: &[String]) -> Vec<String> {
    const SECTION: usize = 64 * 1024;
    let sections: Vec<Vec<&str>> = base
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            let mut rest = t.as_str();
            while rest.len() > SECTION {
                let cut = rest[SECTION..].find("\n\n").map_or(rest.len(), |i| SECTION + i);
                out.push(&rest[..cut]);
                rest = &rest[cut..];
            }
            if !rest.trim().is_empty() {
                out.push(rest);
            }
            out
        })
        .collect();
    let longest = sections.iter().map(Vec::len).max().unwrap_or(0);
    let order: Vec<&str> = (0..longest).flat_map(|i| sections.iter().filter_map(move |s| s.get(i).copied())).collect();
    let want = (mb * 1024.0 * 1024.0) as usize;
    let (mut docs, mut size) = (Vec::new(), 0);
    'fill: for n in 0.. {
        for section in &order {
            if size >= want {
                break 'fill;
            }
            let doc = copy(section, n);
            size += doc.len();
            docs.push(doc);
        }
    }
    docs
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let out = f();
    (out, started.elapsed().as_secs_f64())
}

/// The median of `REPEATS` timings of `work` on a fresh `setup()` each
/// (the setup not timed): the short stages' milliseconds are noisy alone.
fn median<S, T>(setup: impl Fn() -> S, work: impl Fn(S) -> T) -> f64 {
    const REPEATS: usize = 5;
    let mut times: Vec<f64> = (0..REPEATS)
        .map(|_| {
            let input = setup();
            timed(|| std::hint::black_box(work(input))).1
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[REPEATS / 2]
}

/// Seconds per stage for one corpus, with the graph's size.
fn run(docs: &[String]) -> ([f64; 8], usize, usize) {
    let mut t = [0.0; 8];
    let settings = ChunkSettings::default();
    let (chunks, s) = timed(|| {
        let mut chunks: Vec<(i64, String)> = Vec::new();
        for d in docs {
            for c in chunk_text(d, &settings).unwrap() {
                chunks.push((chunks.len() as i64, d[c.start..c.end].to_string()));
            }
        }
        chunks
    });
    t[0] = s;
    let (extractions, s) =
        timed(|| chunks.iter().map(|(_, text)| engine::graph::offline::extract(text)).collect::<Vec<_>>());
    t[1] = s;
    let merge = || {
        let mut graph = KnowledgeGraph::default();
        for ((id, _), x) in chunks.iter().zip(&extractions) {
            graph.merge(*id, x);
        }
        graph
    };
    t[2] = median(|| (), |()| merge());
    let merged = merge();
    t[3] = median(|| merged.clone(), |mut g| engine::graph::offline::resolve_aliases(&mut g));
    let mut graph = merged;
    engine::graph::offline::resolve_aliases(&mut graph);
    t[4] = median(|| (), |()| graph.communities(7));
    let communities = graph.communities(7);
    t[5] = median(
        || (),
        |()| {
            let keys: HashMap<&str, usize> = graph.nodes.keys().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
            let edges: Vec<(usize, usize)> =
                graph.edges.keys().map(|(a, b)| (keys[a.as_str()], keys[b.as_str()])).collect();
            let n = graph.nodes.len();
            engine::graph::layout::layout(n, &edges, engine::graph::layout::default_iterations(n), 7).len()
        },
    );
    let texts: HashMap<i64, String> = chunks.iter().cloned().collect();
    t[6] = median(
        || (),
        |()| {
            let plans = engine::questions::graph::plan(&graph, &GraphQuestionSettings::default()).unwrap();
            engine::questions::graph::items(&graph, &plans, &texts).len()
        },
    );
    let (nodes, edges) = (graph.nodes.len(), graph.edges.len());
    // Questions naming the corpus's best-connected entities, as graph questions do.
    let named: Vec<String> =
        graph.by_degree().into_iter().take(50).map(|(k, _)| graph.nodes[&k].name.clone()).collect();
    let corpus = Arc::new(Corpus::new(chunks, graph, communities));
    t[7] = timed(|| {
        let fast = FastGraphRag::new(corpus.clone(), FastGraphRagSettings::default()).unwrap();
        named
            .iter()
            .map(|name| {
                let q = format!("What part does {name} play in the story?");
                fast.context(&fast.seeds(&engine::graph::offline::names_in(&q), &q)).len()
            })
            .sum::<usize>()
    })
    .1;
    (t, nodes, edges)
}

fn plot(path: &std::path::Path, sizes: &[f64], rows: &[[f64; 8]]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let lo = rows.iter().flatten().copied().filter(|v| *v > 0.0).fold(f64::MAX, f64::min).max(1e-4);
    let hi = rows.iter().flatten().copied().fold(0.0, f64::max) * 1.5;
    let mut chart = ChartBuilder::on(&root)
        .caption("Time per stage against corpus size (log-log; faint: linear from 0.5 MB)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((sizes[0] * 0.9..sizes[sizes.len() - 1] * 1.1).log_scale(), (lo * 0.8..hi).log_scale())?;
    chart.configure_mesh().light_line_style(WHITE).x_desc("corpus (MB)").y_desc("seconds").draw()?;
    for (i, stage) in STAGES.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64)> = sizes.iter().zip(rows).map(|(s, r)| (*s, r[i].max(lo))).collect();
        chart
            .draw_series(std::iter::once(PathElement::new(points.clone(), color.stroke_width(2))))?
            .label(*stage)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        // Linear from the smallest size's time.
        let linear: Vec<(f64, f64)> = sizes.iter().map(|s| (*s, points[0].1 * s / sizes[0])).collect();
        chart.draw_series(std::iter::once(PathElement::new(linear, color.mix(0.35).stroke_width(1))))?;
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperLeft).background_style(WHITE.mix(0.8)).draw()?;
    root.present()?;
    Ok(())
}

fn main() {
    let sizes: Vec<f64> = std::env::var("ASSAY_SCALING_MB")
        .unwrap_or_else(|_| "0.5,1,2,4,8".into())
        .split(',')
        .map(|s| s.trim().parse().expect("ASSAY_SCALING_MB: sizes in MB, comma-separated"))
        .collect();
    let base = base_texts();
    let mut rows = Vec::new();
    println!("{:>6} {:>6} {:>7} {:>8}  seconds per stage", "MB", "chunks", "nodes", "edges");
    for &mb in &sizes {
        let docs = generated(mb, &base);
        let chunks: usize = docs.iter().map(|d| chunk_text(d, &ChunkSettings::default()).unwrap().len()).sum();
        let (t, nodes, edges) = run(&docs);
        let cells: Vec<String> = STAGES.iter().zip(t).map(|(s, v)| format!("{s} {v:.3}")).collect();
        println!("{mb:>6} {chunks:>6} {nodes:>7} {edges:>8}  {}", cells.join(" · "));
        rows.push(t);
    }
    if sizes.len() > 1 {
        let span = sizes[sizes.len() - 1] / sizes[0];
        println!(
            "\ngrowth against linear: (t at {} MB ÷ t at {} MB) ÷ {span} (1.00: linear), and the log-log slope b of t ∝ size^b:",
            sizes[sizes.len() - 1],
            sizes[0]
        );
        for (i, stage) in STAGES.iter().enumerate() {
            let (first, last) = (rows[0][i], rows[rows.len() - 1][i]);
            let points: Vec<(f64, f64)> = sizes.iter().zip(&rows).map(|(s, r)| (s.ln(), r[i].max(1e-9).ln())).collect();
            let (mx, my) = (
                points.iter().map(|p| p.0).sum::<f64>() / points.len() as f64,
                points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64,
            );
            let slope = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
                / points.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
            println!("  {stage:30} {:>6.2}   b = {slope:.2}", last / first.max(1e-9) / span);
        }
    }
    let out = std::env::var("ASSAY_BENCH_OUT").map(std::path::PathBuf::from).unwrap_or_else(|_| {
        std::path::PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()))
    });
    let path = out.join("scaling.svg");
    match plot(&path, &sizes, &rows) {
        Ok(()) => println!("\nplot: {}", path.display()),
        Err(e) => println!("\nno plot: {e}"),
    }
}
