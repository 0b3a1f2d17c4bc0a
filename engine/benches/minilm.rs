//! all-MiniLM-L6-v2 throughput beside its reference: passages of
//! a novel (`sherlock_holmes.txt` cut into 512-token chunks, as NaiveRAG
//! embeds them; the model truncates at 256) embedded in calls of 32, as the
//! metrics and NaiveRAG make them. Prints passages per second, CPU time,
//! system time and minor page faults; with `ASSAY_ST_PYTHON` (a Python
//! with sentence-transformers), runs `scripts/st_throughput.py` on the same
//! passages and model files in the same run, and prints its rate, the ratio,
//! and the least cosine between the two implementations' vectors.
//! Three rounds, alternating (BENCH_ROUNDS), and the medians.
//! `cargo bench -p engine --bench minilm` (BENCH_PASSAGES: how many, 256).

use std::time::Instant;

use engine::chunk::{chunk_text, ChunkSettings};
use engine::embed::minilm::MiniLm;

fn usage() -> (f64, f64, i64) {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (s(u.ru_utime), s(u.ru_stime), u.ru_minflt)
}

fn main() {
    let n: usize = std::env::var("BENCH_PASSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    let corpora = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    let text = std::fs::read_to_string(format!("{corpora}/sherlock_holmes.txt")).unwrap().replace("\r\n", "\n");
    let settings = ChunkSettings { chunk_tokens: 512, chunk_overlap: 50, ..Default::default() };
    let passages: Vec<String> =
        chunk_text(&text, &settings).unwrap().iter().take(n).map(|c| text[c.start..c.end].to_string()).collect();
    let dir = std::env::var_os("ASSAY_MINILM_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../data/models/all-MiniLM-L6-v2"))
    });
    let model = MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    model.embed(&refs[..32.min(refs.len())]).unwrap(); // warm up
    let python = std::env::var("ASSAY_ST_PYTHON").ok();
    // Rounds alternate Assay and the reference: this machine's speed drifts
    // by ±15 % from one run to the next, so one run of each decides nothing.
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    let tmp = std::env::temp_dir().join(format!("assay-minilm-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("passages.json"), serde_json::to_string(&passages).unwrap()).unwrap();
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (u0, s0, f0) = usage();
        let started = Instant::now();
        let vectors: Vec<Vec<f32>> = refs.chunks(32).flat_map(|b| model.embed(b).unwrap()).collect();
        let wall = started.elapsed().as_secs_f64();
        let (u1, s1, f1) = usage();
        let rate = passages.len() as f64 / wall;
        ours.push(rate);
        println!(
            "round {round}: MiniLM (Rust, Assay): {} passages of 512 cl100k tokens (truncated at 256), calls of 32: {rate:.1} passages/s",
            passages.len()
        );
        println!(
            "  wall {wall:.2} s · CPU {:.2} s (user {:.2}, system {:.2}) · {} minor page faults · {} cores",
            (u1 - u0) + (s1 - s0),
            u1 - u0,
            s1 - s0,
            f1 - f0,
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        let Some(python) = &python else {
            continue;
        };
        std::fs::write(tmp.join("vectors.json"), serde_json::to_string(&vectors).unwrap()).unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/st_throughput.py");
        let out = std::process::Command::new(python)
            .arg(script)
            .arg(&dir)
            .arg(tmp.join("passages.json"))
            .arg(tmp.join("vectors.json"))
            .output()
            .expect("running the reference");
        let said = String::from_utf8_lossy(&out.stdout);
        print!("{said}");
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
            break;
        }
        if let Some(rate_st) =
            said.lines().find_map(|l| l.strip_prefix("passages/s ").and_then(|v| v.trim().parse::<f64>().ok()))
        {
            theirs.push(rate_st);
            ratios.push(rate / rate_st);
            println!("  ratio this round: {:.2}×", rate / rate_st);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!("Assay: median {:.1} passages/s over {} rounds", median(&mut ours), ours.len());
    if python.is_none() {
        println!("  (set ASSAY_ST_PYTHON to a Python with sentence-transformers for the reference beside it)");
    } else if !ratios.is_empty() {
        println!("sentence-transformers: median {:.1} passages/s", median(&mut theirs));
        println!(
            "  ratio: Assay / sentence-transformers = {:.2}× (median of {} alternating rounds)",
            median(&mut ratios),
            ratios.len()
        );
    }
}
