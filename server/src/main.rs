//! `assay`: the web server and the headless CLI, one binary.

fn main() -> std::process::ExitCode {
    server::cli::main()
}
