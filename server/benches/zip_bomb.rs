//! The zip bomb of issue 20 against the real `assay serve` process: a
//! 42 KB archive whose 220 central-directory entries all point at one
//! deflated 10 MB member (2.3 GB if unpacked). Measures the server's
//! resident memory (VmRSS before, VmHWM after, from /proc) and how long
//! the refusal takes, for the bomb and, for scale, a plain 10 MB text file.
//!
//!     cargo bench -p server --bench zip_bomb            (release)
//!     cargo bench -p server --bench zip_bomb --profile dev

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn status_kb(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

fn multipart(name: &str, data: &[u8]) -> Vec<u8> {
    let mut body = format!(
        "--b0und\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(data);
    body.extend_from_slice(b"\r\n--b0und--\r\n");
    body
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bomb.db");
    let assay = env!("CARGO_BIN_EXE_assay");
    let ok = Command::new(assay).args(["project", "create", "A", "--db"]).arg(&db).status().unwrap();
    assert!(ok.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let mut server = Command::new(assay)
        .args(["serve", "--no-login", "--addr", &addr, "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let base = format!("http://{addr}");
    for _ in 0..200 {
        if client.get(format!("{base}/favicon.svg")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = server.id();
    let bomb = engine::corpus::fixtures::overlapping_bomb(10 << 20, 220);
    let text: Vec<u8> = (0..10 << 20).map(|i| b"abcdefghij klmnopqrstuvwxyz\n"[i % 28]).collect();
    println!("zip bomb: {} bytes packed, {} entries × 10 MB = 2.2 GB if unpacked", bomb.len(), 220);
    for (what, name, data) in
        [("zip bomb", "bomb.zip", &bomb), ("zip bomb again", "bomb.zip", &bomb), ("10 MB text", "big.txt", &text)]
    {
        let before = status_kb(pid, "VmRSS:");
        let started = Instant::now();
        let resp = client
            .post(format!("{base}/api/projects/1/upload"))
            .header("content-type", "multipart/form-data; boundary=b0und")
            .body(multipart(name, data))
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let body = resp.text().await.unwrap();
        let took = started.elapsed();
        let peak = status_kb(pid, "VmHWM:");
        let reason: String = body.chars().take(160).collect();
        println!(
            "{what}: {status} in {:.0} ms; RSS before {:.1} MB, peak since start {:.1} MB (growth ≤ {:.1} MB); {reason}",
            took.as_secs_f64() * 1000.0,
            before as f64 / 1024.0,
            peak as f64 / 1024.0,
            peak.saturating_sub(before) as f64 / 1024.0
        );
    }
    server.kill().ok();
    server.wait().ok();
}
