//! `canopy-mock-llm --script FILE [--port N]`: serves a script on loopback for the desktop app's
//! WebDriver tests and demos. Prints `listening on http://127.0.0.1:PORT`, then serves until killed.

use std::io::Write;
use std::path::PathBuf;

use canopy_test_support::{MockServer, Script};
use clap::Parser;

/// Scripted OpenAI/Anthropic-compatible model server on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "canopy-mock-llm", version)]
struct Args {
    /// JSON script file.
    #[arg(long)]
    script: PathBuf,
    /// Port to listen on (0 = any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let result = async {
        let script = Script::load(&args.script)?;
        MockServer::start_on(script, args.port).await
    }
    .await;
    let server = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!("canopy-mock-llm: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "listening on {}", server.url());
    let _ = out.flush();
    let _ = tokio::signal::ctrl_c().await;
    drop(server);
    std::process::ExitCode::SUCCESS
}
