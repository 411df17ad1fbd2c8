//! `canopy-cli`: the headless host of the Canopy runtime. `run` drives the main agent in a project
//! (progress on stderr, the answer on stdout), `trace show` prints a recorded session tree, and
//! `models check` calls each configured model slot once.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use canopy_host::{history, Host};
use clap::{Parser, Subcommand};

mod evidence;
mod models;
mod render;
mod run;

#[derive(Parser)]
#[command(
    name = "canopy-cli",
    version,
    about = "Headless Canopy: a code agent whose subagents you can watch"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the main agent on a prompt in a project folder.
    Run(run::RunArgs),
    /// Inspect recorded traces.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// Check the configured model slots.
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print the session tree of a recorded run (a trace file, or a folder of them).
    Show {
        /// A `.jsonl` trace file or a trace folder.
        path: PathBuf,
    },
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Call each configured slot once and say what works.
    Check,
}

/// The host over the process environment, the default folders and the OS keychain, with what
/// stderr should say about the settings in force: problems with the file, and the `CANOPY_*`
/// overrides applied.
fn host() -> Result<Host, String> {
    let host = Host::from_environment().map_err(|e| e.to_string())?;
    for w in host.load_warnings() {
        eprintln!("note: {}", render::one_line(w));
    }
    let overridden = host.env_overrides().map_err(|e| e.to_string())?;
    if !overridden.is_empty() {
        eprintln!(
            "note: {}",
            render::one_line(&format!("environment overrides: {}", overridden.join(", ")))
        );
    }
    Ok(host)
}

/// How long the exit waits for blocking threads still running: a tool cancelled mid-call (a read
/// on a hung network mount) may never return, and the answer is out by then.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("canopy-cli: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = rt.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Trace {
                command: TraceCommand::Show { path },
            } => trace_show(&path),
            Command::Models {
                command: ModelsCommand::Check,
            } => models::check().await,
        }
    });
    rt.shutdown_timeout(SHUTDOWN_GRACE);
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("canopy-cli: {}", render::text(&message));
            ExitCode::from(2)
        }
    }
}

fn trace_show(path: &Path) -> Result<ExitCode, String> {
    let dir = if path.is_dir() {
        path
    } else {
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."))
    };
    for tree in history::trees_at(path).map_err(|e| e.to_string())? {
        let notes = evidence::notes(dir, &tree);
        print!("{}", render::tree(&tree, &notes));
    }
    Ok(ExitCode::SUCCESS)
}
