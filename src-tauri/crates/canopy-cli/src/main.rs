//! `canopy-cli`: the headless host of the Canopy runtime. `run` drives the main agent in a project
//! (progress on stderr, the answer on stdout), `trace show` prints a recorded session tree, and
//! `models check` calls each configured model slot once.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use canopy_host::connection::SlotCheck;
use canopy_host::profiles::RunProfilesDecision;
use canopy_host::{history, Host, SessionStart, StartedSession};
use canopy_protocol::{TerminalReason, TraceRecord};
use canopy_runtime::{registry, FlagApprover, Runtime};
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

mod evidence;
mod render;

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
    Run {
        /// The project folder.
        #[arg(long)]
        project: PathBuf,
        /// Where trace files go (default: the app's data dir, per project).
        #[arg(long)]
        trace_dir: Option<PathBuf>,
        /// Tools allowed without asking, comma-separated: edit, write, bash, task, and `network` to let
        /// Bash calls that ask for the network have it (others that need approval are denied).
        #[arg(long, value_delimiter = ',')]
        allow: Vec<String>,
        /// Print a JSON summary instead of the answer.
        #[arg(long)]
        json: bool,
        /// Use the project's own subagent profiles (`.canopy/agents/*.md`) as they are now, and
        /// remember that until they change. Without it they are used only if trusted before (here
        /// or in the app); read them first: their text goes to the model.
        #[arg(long)]
        trust_project_profiles: bool,
        /// The prompt.
        prompt: String,
    },
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
            Command::Run {
                project,
                trace_dir,
                allow,
                json,
                trust_project_profiles,
                prompt,
            } => {
                run(
                    project,
                    trace_dir,
                    allow,
                    json,
                    trust_project_profiles,
                    prompt,
                )
                .await
            }
            Command::Trace {
                command: TraceCommand::Show { path },
            } => trace_show(&path),
            Command::Models {
                command: ModelsCommand::Check,
            } => models_check().await,
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

/// The tool names `--allow` lets through: the registry's approvable tools by name in any case (which
/// tools the gate asks about is their kind's business, not this list's), and `network`.
fn allowed_tools(allow: &[String]) -> Result<Vec<String>, String> {
    allow
        .iter()
        .map(|a| {
            let word = a.trim();
            if word.eq_ignore_ascii_case(canopy_runtime::gate::NETWORK) {
                return Ok(canopy_runtime::gate::NETWORK.to_string());
            }
            registry::approvable_tool(word)
                .map(|t| t.name)
                .ok_or_else(|| {
                    let known: Vec<String> = registry::approvable_tools()
                        .into_iter()
                        .map(|t| t.name.to_ascii_lowercase())
                        .chain([canopy_runtime::gate::NETWORK.to_string()])
                        .collect();
                    format!(
                        "--allow: unknown tool `{}` (use {})",
                        word.to_ascii_lowercase(),
                        known.join(", ")
                    )
                })
        })
        .collect()
}

/// Whether the project's own profiles may be used in this run, saying on stderr what was found
/// and what becomes of it; the digest to put in the runtime settings when they may.
fn project_profiles_trust(
    host: &Host,
    root: &Path,
    trust_flag: bool,
) -> Result<Option<String>, String> {
    let found = host
        .profiles_for_run(root, trust_flag)
        .map_err(|e| e.to_string())?;
    for e in &found.errors {
        let rel = Path::new(&e.path)
            .strip_prefix(root)
            .unwrap_or(Path::new(&e.path));
        eprintln!(
            "note: project profile {}: {}",
            render::one_line(&rel.display().to_string()),
            render::one_line(&e.reason)
        );
    }
    let names: Vec<String> = found.names.iter().map(|n| render::one_line(n)).collect();
    let names = if names.is_empty() {
        "none valid".to_string()
    } else {
        names.join(", ")
    };
    match &found.decision {
        RunProfilesDecision::NoProfiles => {}
        RunProfilesDecision::TrustedNow(_) => eprintln!("note: project profiles loaded from .canopy/agents (trusted with --trust-project-profiles): {names}"),
        RunProfilesDecision::TrustedBefore(_) => {
            eprintln!("note: project profiles loaded from .canopy/agents (trusted before): {names}")
        }
        RunProfilesDecision::NotTrusted => eprintln!(
            "note: project profiles in .canopy/agents are NOT used: {names}. Their text would go to the model; read them, then run with --trust-project-profiles to use them (remembered until they change)."
        ),
    }
    Ok(found.trusted_digest())
}

async fn run(
    project: PathBuf,
    trace_dir: Option<PathBuf>,
    allow: Vec<String>,
    json: bool,
    trust_project_profiles: bool,
    prompt: String,
) -> Result<ExitCode, String> {
    let allowed = allowed_tools(&allow)?;
    let host = host()?;
    let effective = host.effective_settings().map_err(|e| e.to_string())?;
    if effective.sandbox.mode == canopy_protocol::SandboxMode::Off {
        eprintln!("note: Bash runs WITHOUT a sandbox (sandbox.mode is \"off\" in settings.json): commands have your full rights");
    }
    let root = project
        .canonicalize()
        .map_err(|e| format!("project folder {}: {e}", project.display()))?;
    let trusted_profiles = project_profiles_trust(&host, &root, trust_project_profiles)?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<TraceRecord>();
    let StartedSession {
        runtime,
        session,
        trace_dir,
    } = host
        .start_session(
            &root,
            SessionStart {
                trace_dir,
                trusted_profiles,
                approver: Some(Arc::new(FlagApprover::new(allowed))),
                events: tx,
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    for n in session.notices() {
        eprintln!("note: {}", render::one_line(n));
    }
    let root_id = session.session_id().to_string();
    let printer = tokio::spawn(async move {
        let mut p = render::Progress::new(root_id);
        while let Some(r) = rx.recv().await {
            p.print(&r);
        }
    });
    // Holding the session here would keep the event stream open after the run; the runtime and an
    // id are enough to cancel it.
    let run_over = CancellationToken::new();
    let signals = StopSignals::install();
    let interrupts = tokio::spawn(handle_interrupts(
        runtime.clone(),
        session.session_id().to_string(),
        run_over.clone(),
        signals,
    ));
    let outcome = session.run(prompt).await;
    run_over.cancel();
    let outcome = outcome.map_err(|e| e.to_string())?;
    let trace_path = session.trace_path();
    drop(session);
    drop(runtime);
    let _ = printer.await;
    if json {
        let summary = serde_json::json!({
            "session_id": trace_path.file_stem().and_then(|s| s.to_str()),
            "run_id": outcome.run_id,
            "terminal_reason": outcome.terminal_reason,
            "final_text": outcome.final_text,
            "error": outcome.error,
            "usage": outcome.usage,
            "trace_file": trace_path,
            "trace_dir": trace_dir,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?
        );
    } else {
        if let Some(text) = &outcome.final_text {
            println!("{}", render::text(text));
        }
        if let Some(err) = &outcome.error {
            eprintln!("error: {}", render::text(err));
        }
        eprintln!(
            "trace: {}",
            render::one_line(&trace_path.display().to_string())
        );
    }
    interrupts.abort();
    Ok(if outcome.terminal_reason == TerminalReason::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Exit status after a second Ctrl-C, as a shell reports a SIGINT death (128 + 2).
const ABORT_EXIT_CODE: i32 = 130;

/// The signals that stop a run: Ctrl-C, and on Unix SIGTERM (`kill`, a CI job's timeout, systemd)
/// and SIGHUP (the terminal closed). All three are handled alike, because a signal left to its
/// default action kills the process before the run can stop its Bash process groups or write
/// `run_ended`.
struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Installs the handlers at once, so a signal that arrives before the first wait is not lost
    /// (and does not kill the process by its default action).
    fn install() -> StopSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            StopSignals {}
        }
    }

    /// The next stop signal's name; `None` when no signal can be received any more.
    async fn next(&mut self) -> Option<&'static str> {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
                match s {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.ok().map(|_| "Ctrl-C"),
                r = recv(&mut self.term) => r.map(|_| "SIGTERM"),
                r = recv(&mut self.hup) => r.map(|_| "SIGHUP"),
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.ok().map(|_| "Ctrl-C")
        }
    }
}

/// Ctrl-C (or SIGTERM, SIGHUP) while the run is going cancels it gracefully (the trace gets its
/// `run_ended`, Bash process groups are stopped); another one, or one after the run is over (still
/// printing, or stuck), exits at once with 130. Once tokio has installed its handlers the default
/// "die on the signal" is gone, so without the second stage a run that does not stop (a tool stuck
/// in the kernel, a blocked pipe) could only be killed.
async fn handle_interrupts(
    runtime: Arc<Runtime>,
    session_id: String,
    run_over: CancellationToken,
    mut signals: StopSignals,
) {
    // Dropped when the run ends: holding the runtime would keep the event stream open.
    let mut runtime = Some(runtime);
    loop {
        tokio::select! {
            biased;
            _ = run_over.cancelled(), if runtime.is_some() => runtime = None,
            signal = signals.next() => {
                let Some(name) = signal else {
                    return;
                };
                match runtime.take() {
                    Some(rt) => {
                        if name == "Ctrl-C" {
                            eprintln!("canopy-cli: cancelling (press Ctrl-C again to abort at once)");
                        } else {
                            eprintln!("canopy-cli: cancelling on {name} (send it again or press Ctrl-C to abort at once)");
                        }
                        rt.cancel(&session_id, &format!("user ({name})"));
                    }
                    None => {
                        eprintln!("canopy-cli: aborting ({name})");
                        std::process::exit(ABORT_EXIT_CODE);
                    }
                }
            }
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

async fn models_check() -> Result<ExitCode, String> {
    let checks = host()?.check_models().await.map_err(|e| e.to_string())?;
    let mut all_ok = true;
    for SlotCheck { slot, outcome } in checks {
        let label = slot.as_str();
        // The reported model id, the error and even the configured ids come from outside
        // (a server, a settings file): escaped like everything else printed.
        let (ok, line) = match outcome {
            Err(e) => (false, format!("{label}: NOT USABLE — {e}")),
            Ok((info, ping)) => {
                let fallback = if info.fallback {
                    " (light not configured: uses main)"
                } else {
                    ""
                };
                let model = format!(
                    "{} {} at {}",
                    info.provider.as_str(),
                    info.model_id,
                    info.base_url
                );
                match ping.answer {
                    Ok(reported) => (true, format!(
                        "{label}: OK — {model} answered in {} ms (reported model: {reported}){fallback}",
                        ping.latency_ms
                    )),
                    Err(e) => (false, format!("{label}: FAILED — {model}: {e}{fallback}")),
                }
            }
        };
        all_ok &= ok;
        println!("{}", render::one_line(&line));
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn allow_names_the_tools_the_gate_asks_about_and_network() {
        assert_eq!(
            allowed_tools(&words(&["edit", " Write", "BASH", "task", "Network"])),
            Ok(words(&["Edit", "Write", "Bash", "Task", "network"]))
        );
    }

    #[test]
    fn allow_refuses_a_read_tool_since_its_kind_is_never_asked_about() {
        let err = allowed_tools(&words(&["bash", "Read"])).unwrap_err();
        assert_eq!(
            err,
            "--allow: unknown tool `read` (use edit, write, bash, task, network)"
        );
        assert!(allowed_tools(&words(&["grep"])).is_err());
    }
}
