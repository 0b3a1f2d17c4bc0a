//! `assay serve`: the web server, with its limits.

use anyhow::Context;
use app::ssr::state::Config;
use app::ssr::store::Db;
use clap::Args;
use engine::llm::settings::LlmSettings;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::*;

#[derive(Args, Debug)]
pub(super) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ASSAY_ADDR", default_value = "127.0.0.1:3000")]
    addr: SocketAddr,
    /// Directory of the built site (holds pkg/ with the WASM, JS and CSS).
    #[arg(long, env = "ASSAY_SITE", value_name = "DIR")]
    site: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Serve without the owner login: anyone who reaches the address can
    /// change everything. Only for a machine no one else can reach.
    #[arg(long)]
    no_login: bool,
    /// Let the "HTTP endpoint" RAG method (whose URL project members set)
    /// call loopback, private and link-local addresses, e.g. a RAG
    /// service on this machine. Off by default; also a Settings option.
    #[arg(long, env = "ASSAY_ALLOW_PRIVATE_URLS")]
    allow_private_urls: bool,
    /// Mark cookies Secure on every response. Without it they are Secure
    /// when the request came over HTTPS (`X-Forwarded-Proto: https` from a
    /// reverse proxy counts).
    #[arg(long, env = "ASSAY_SECURE_COOKIES")]
    secure_cookies: bool,
    /// The address people reach Assay at (e.g. https://assay.lab.example,
    /// behind a proxy): share and study links are shown under it. Without
    /// it, under the scheme and host each request came to.
    #[arg(long, env = "ASSAY_BASE_URL", value_name = "URL")]
    base_url: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub(super) struct LimitArgs {
    /// Largest upload in MB (all files of one upload together), and largest single file.
    #[arg(long, env = "ASSAY_MAX_UPLOAD_MB", default_value_t = 200)]
    max_upload_mb: u64,
    /// Most documents one project may hold.
    #[arg(long, env = "ASSAY_MAX_DOCUMENTS", default_value_t = 100_000)]
    max_documents: usize,
}

impl LimitArgs {
    pub(super) fn config(&self) -> Config {
        let bytes = self.max_upload_mb * 1024 * 1024;
        Config {
            max_upload_bytes: bytes,
            import: engine::corpus::ImportLimits::new(bytes, self.max_documents),
            llm_base: LlmSettings::default(),
            require_login: true,
            secure_cookies: false,
            env: process_env,
            base_url: None,
        }
    }
}

pub(super) async fn serve(pool: Db, db: &str, llm: &LlmSettings, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let site = args.site.unwrap_or_else(crate::web::default_site_root);
    if !site.join("pkg").join("assay_bg.wasm").is_file() {
        tracing::warn!(site = %site.display(), "no built WASM under the site directory: pages will render but not hydrate (run scripts/build)");
    }
    let listener =
        tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("cannot listen on {}", args.addr))?;
    let addr = listener.local_addr()?;
    let options = crate::web::leptos_options(&site, addr);
    let orphans = app::ssr::store::jobs::interrupt_orphans(&pool).await?;
    if orphans > 0 {
        tracing::info!(orphans, "jobs left running by an earlier process are marked interrupted");
    }
    let mut config = args.limits.config();
    let mut llm = llm.clone();
    // The shell's other commands run as the operator, who may call any
    // address; the web server serves members, who may not unless allowed.
    llm.allow_private_urls = args.allow_private_urls;
    let llm = &llm;
    // A server's flags are its configuration, not a manifest's override:
    // a manifest uploaded in the browser says its own [llm].
    config.llm_base = LlmSettings { pinned: Vec::new(), ..llm.clone() };
    config.require_login = !args.no_login;
    config.secure_cookies = args.secure_cookies;
    if let Some(base) = &args.base_url {
        let ok = (base.starts_with("http://") || base.starts_with("https://")) && !base.contains(char::is_whitespace);
        anyhow::ensure!(ok, "--base-url {base}: expected an http:// or https:// address");
        config.base_url = Some(base.trim_end_matches('/').to_string());
    }
    if args.no_login {
        println!("Owner login is OFF (--no-login): anyone who reaches {addr} can change everything.");
    } else if !app::ssr::auth::has_owner(&pool).await? {
        println!(
            "No owner yet: open http://{addr}/setup to create the owner account (or run `assay user create NAME`)."
        );
    }
    let llm = &config.llm_base.clone();
    let in_force = match app::ssr::store::settings::load_llm(&pool).await? {
        Some(saved) => saved.apply(llm),
        None => llm.clone(),
    };
    println!("LLM provider: {}", in_force.describe());
    // cl100k's tables take ≈ 150 ms to load, on the first count: loaded
    // now, beside the server, not inside the first job's calls.
    tokio::task::spawn_blocking(|| engine::chunk::Bpe::count(engine::chunk::Tokenizer::Cl100kBase, "warm up"));
    let router = crate::web::router(pool, config, in_force, options);
    println!("Assay is running at http://{addr}  (database: {db})");
    crate::web::serve(listener, router).await?;
    Ok(ExitCode::SUCCESS)
}
