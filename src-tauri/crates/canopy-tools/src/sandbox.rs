//! The OS sandbox Bash runs in, and the environment its commands get.
//!
//! On Linux every command runs under bubblewrap (`bwrap`): the project is writable, `/tmp` is a
//! private tmpfs, the rest of the file system is read-only, credential folders (`~/.ssh`, `~/.gnupg`,
//! `~/.aws`, the keyring, browser profiles, …) are hidden, the command gets its own PID namespace (no
//! other process's `/proc` is visible, and everything it started dies with it, `setsid` included),
//! and it has no network unless the person allowed it for that call. The environment is an allowlist.
//! Where bubblewrap cannot run, Bash is refused with a message saying how to enable it, unless the
//! person chose [`SandboxMode::Off`] in Settings. See `docs/security.md`.

use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub use canopy_protocol::SandboxMode;

use crate::ToolError;

/// Variables passed from the host environment to every command (when set), besides `LC_*` and what
/// the person adds in Settings. Everything else (API keys, `SSH_AUTH_SOCK`, cloud credentials,
/// `DBUS_SESSION_BUS_ADDRESS`, …) stays out. The toolchain homes are here because a toolchain
/// installed outside the default place (rustup with `RUSTUP_HOME`, a pyenv, a JDK) cannot even
/// start without them, and ordinary builds must work.
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "NVM_DIR",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
];

/// Paths under the home folder hidden from sandboxed commands: keys, cloud and registry
/// credentials, the keyring, password stores, browser profiles and shell histories.
pub const HIDDEN_IN_HOME: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
];

/// Absolute paths hidden from sandboxed commands: the per-user runtime folder (session bus, keyring
/// and agent sockets) and container-engine sockets, each a way out of any sandbox.
pub const HIDDEN_ABSOLUTE: &[&str] = &[
    "/run/user",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
    "/run/containerd",
];

/// How Bash commands are run: in the sandbox or not, with which extra variables.
#[derive(Debug)]
pub struct Sandbox {
    /// Whether the OS sandbox is required (the default) or was turned off in Settings.
    pub mode: SandboxMode,
    /// The bubblewrap program (`bwrap`, looked up on `PATH`).
    pub bwrap: PathBuf,
    /// Variable names the person added in Settings, passed on top of [`BASE_ENV`].
    pub extra_env: Vec<String>,
    /// The home folder whose credential folders are hidden ([`HIDDEN_IN_HOME`]).
    pub home: Option<PathBuf>,
    /// More folders hidden from commands (Canopy's own settings and traces).
    pub extra_hidden: Vec<PathBuf>,
    /// Set once bubblewrap was seen to work, so it is probed once per runtime, not per call; a
    /// failed probe is retried at the next call (the person may have just installed it).
    probed: AtomicBool,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new(SandboxMode::Required, Vec::new())
    }
}

impl Sandbox {
    /// A sandbox in `mode` passing `extra_env` on top of the base allowlist, hiding the credentials
    /// under `$HOME`.
    pub fn new(mode: SandboxMode, extra_env: Vec<String>) -> Self {
        Sandbox {
            mode,
            bwrap: PathBuf::from("bwrap"),
            extra_env,
            home: std::env::var_os("HOME").map(PathBuf::from),
            extra_hidden: Vec::new(),
            probed: AtomicBool::new(false),
        }
    }

    /// The same, with another bubblewrap program and home (tests: a missing or failing `bwrap`, a
    /// fake home with a fake key).
    pub fn with_paths(mut self, bwrap: impl Into<PathBuf>, home: Option<PathBuf>) -> Self {
        self.bwrap = bwrap.into();
        self.home = home;
        self
    }

    /// The same, also hiding `paths` (missing ones are skipped when the sandbox is built).
    pub fn with_hidden(mut self, paths: Vec<PathBuf>) -> Self {
        self.extra_hidden = paths;
        self
    }

    /// The environment a command gets: the allowlist, minus `denylist` (the model keys) whatever
    /// the person added. A credential-looking name among the base variables is dropped too; one the
    /// person named in Settings is passed, as they asked.
    pub fn child_env(&self, denylist: &[String]) -> Vec<(OsString, OsString)> {
        std::env::vars_os()
            .filter(|(name, _)| match name.to_str() {
                Some(name) => self.passes(name, denylist),
                // A name that is not UTF-8 cannot be checked against the lists; leave it out.
                None => false,
            })
            .collect()
    }

    fn passes(&self, name: &str, denylist: &[String]) -> bool {
        if denylist.iter().any(|d| d == name) {
            return false;
        }
        let base = BASE_ENV.contains(&name) || name.starts_with("LC_");
        (base && !is_secret_env(name, denylist)) || self.extra_env.iter().any(|e| e == name)
    }

    /// Checks that bubblewrap can build a sandbox here; the error says why not and how to fix it.
    pub(crate) async fn ensure_available(&self, root: &Path) -> Result<(), ToolError> {
        if self.probed.load(Ordering::Relaxed) {
            return Ok(());
        }
        if !cfg!(target_os = "linux") {
            return Err(ToolError::Refused(format!(
                "Bash was not run: Canopy's sandbox for shell commands is only available on Linux so far, \
                 so commands are refused on this system. {ALTERNATIVE}"
            )));
        }
        let mut cmd = tokio::process::Command::new(&self.bwrap);
        cmd.args(self.bwrap_args(root, false))
            .arg("true")
            .env_clear()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let out = cmd.output().await.map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ToolError::Refused(format!(
                    "Bash was not run: shell commands run inside a bubblewrap sandbox, and `{}` was not found. \
                     Install it (Debian/Ubuntu: `sudo apt install bubblewrap`; Fedora: `sudo dnf install bubblewrap`; \
                     Arch: `sudo pacman -S bubblewrap`) and try again. {ALTERNATIVE}",
                    self.bwrap.display()
                ))
            } else {
                ToolError::Refused(format!(
                    "Bash was not run: the bubblewrap sandbox `{}` could not be started ({e}). {ALTERNATIVE}",
                    self.bwrap.display()
                ))
            }
        })?;
        if out.status.success() {
            self.probed.store(true, Ordering::Relaxed);
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr.lines().next().unwrap_or("").trim();
        Err(ToolError::Refused(format!(
            "Bash was not run: bubblewrap could not create its sandbox ({}). This usually means \
             unprivileged user namespaces are disabled on this system: enable them \
             (Debian: `sudo sysctl -w kernel.unprivileged_userns_clone=1`; Ubuntu 24.04 and later: \
             allow bwrap in AppArmor or `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`) \
             and try again. {ALTERNATIVE}",
            if why.is_empty() { "no reason given" } else { why }
        )))
    }

    /// bubblewrap's arguments up to (not including) the program to run.
    fn bwrap_args(&self, root: &Path, network: bool) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push =
            |parts: &[&std::ffi::OsStr]| a.extend(parts.iter().map(|p| p.to_os_string()));
        push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
        push(&["--dev".as_ref(), "/dev".as_ref()]);
        push(&["--proc".as_ref(), "/proc".as_ref()]);
        push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
        push(&["--bind".as_ref(), root.as_os_str(), root.as_os_str()]);
        // After the project's bind, so a credential folder inside the project is hidden too. A
        // hidden folder that holds the project (the person opened a folder inside it) is left alone,
        // or the project itself would vanish.
        for hidden in self.hidden_paths().iter().filter(|h| !root.starts_with(h)) {
            if hidden.is_dir() {
                push(&["--tmpfs".as_ref(), hidden.as_os_str()]);
                push(&["--remount-ro".as_ref(), hidden.as_os_str()]);
            } else {
                push(&[
                    "--ro-bind".as_ref(),
                    "/dev/null".as_ref(),
                    hidden.as_os_str(),
                ]);
            }
        }
        push(&[
            "--unshare-pid".as_ref(),
            "--unshare-ipc".as_ref(),
            "--unshare-uts".as_ref(),
            "--unshare-cgroup-try".as_ref(),
        ]);
        if !network {
            push(&["--unshare-net".as_ref()]);
        }
        push(&[
            "--die-with-parent".as_ref(),
            "--new-session".as_ref(),
            "--chdir".as_ref(),
            root.as_os_str(),
            "--".as_ref(),
        ]);
        a
    }

    /// Existing credential paths, resolved (a symlinked `~/.ssh` hides its target).
    fn hidden_paths(&self) -> Vec<PathBuf> {
        let in_home = self
            .home
            .iter()
            .flat_map(|home| HIDDEN_IN_HOME.iter().map(move |rel| home.join(rel)));
        // Cargo keeps its registry tokens in CARGO_HOME, which need not be under the home folder.
        let cargo_home = std::env::var_os("CARGO_HOME").map(PathBuf::from);
        let cargo_credentials = cargo_home.iter().flat_map(|c| {
            ["credentials", "credentials.toml"]
                .into_iter()
                .map(move |f| c.join(f))
        });
        let mut out: Vec<PathBuf> = in_home
            .chain(cargo_credentials)
            .chain(HIDDEN_ABSOLUTE.iter().map(PathBuf::from))
            .chain(self.extra_hidden.iter().cloned())
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The command that runs `script` with `bash -c`: inside bubblewrap, or directly when the
    /// sandbox is off. Returns it with the marker the sandboxed wrapper prints (on stderr, last)
    /// when processes the command left behind were stopped.
    pub(crate) fn command(
        &self,
        root: &Path,
        script: &str,
        network: bool,
        denylist: &[String],
        call_id: &str,
    ) -> (tokio::process::Command, Option<String>) {
        let env = self.child_env(denylist);
        match self.mode {
            SandboxMode::Off => {
                let mut cmd = tokio::process::Command::new("bash");
                cmd.arg("-c")
                    .arg(script)
                    .current_dir(root)
                    .env_clear()
                    .envs(env);
                (cmd, None)
            }
            SandboxMode::Required => {
                let marker = leftover_marker(call_id);
                let mut cmd = tokio::process::Command::new(&self.bwrap);
                // bwrap's own environment is what its PID 1 shows in `/proc/1/environ`: only the
                // allowlist goes in, so there is nothing else to read there.
                cmd.args(self.bwrap_args(root, network))
                    .args(["bash", "-c", WRAPPER, "canopy-sandbox"])
                    .arg(script)
                    .arg(&marker)
                    .current_dir(root)
                    .env_clear()
                    .envs(env)
                    .env("TMPDIR", "/tmp");
                (cmd, Some(marker))
            }
        }
    }
}

/// What every refusal offers besides fixing the sandbox.
const ALTERNATIVE: &str = "Or, accepting that commands then run with your full rights (your files, \
    keys and network), choose \"Run Bash without a sandbox\" in Settings → Sandbox. Until then, use \
    Read, Grep, Glob, Edit and Write, which do not need it.";

/// Runs the command as a child, then counts the processes still alive in the sandbox (PID 1 and the
/// wrapper aside): they die when the wrapper exits, and the model is told so. `$1` is the command,
/// `$2` the marker. The glob and `case` are shell builtins, so counting starts no process.
const WRAPPER: &str = r#"bash -c "$1"; rc=$?; n=0; for p in /proc/[0-9]*; do case "${p#/proc/}" in 1|"$$") ;; *) n=$((n+1)) ;; esac; done; if [ "$n" -gt 0 ]; then printf '%s%d\n' "$2" "$n" >&2; fi; exit "$rc""#;

/// A marker the command cannot predict (so it cannot forge the note): a random value per call.
fn leftover_marker(call_id: &str) -> String {
    let mut h = RandomState::new().build_hasher();
    h.write(call_id.as_bytes());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    format!("\u{1e}canopy-left-{:016x}:", h.finish())
}

/// Whether a variable must not reach the child: named in the denylist, or named like a credential.
pub(crate) fn is_secret_env(name: &str, denylist: &[String]) -> bool {
    let upper = name.to_ascii_uppercase();
    denylist.iter().any(|d| d == name)
        || upper.ends_with("_API_KEY")
        || upper.ends_with("_TOKEN")
        || upper.contains("SECRET")
}

#[cfg(test)]
mod tests {
    //! What a hostile command tries, run through the real Bash tool in the real sandbox.
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::tools::bash::tests::{host_pids, wait_dead};
    use crate::tools::test_util::{project, run};
    use crate::{BashTool, Tool, ToolContext};

    async fn bash(ctx: &ToolContext, command: &str) -> String {
        match run(&BashTool, ctx, json!({ "command": command })).await {
            Ok(out) => out.content,
            Err(e) => panic!("`{command}` was not run: {e}"),
        }
    }

    /// A folder outside `/tmp` (which the sandbox replaces with its own), so what a command does to
    /// it is what it would do to the person's files.
    fn outside_dir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("canopy-sandbox-test-")
            .tempdir_in("/var/tmp")
            .unwrap()
    }

    #[tokio::test]
    async fn writes_outside_the_project_fail_while_the_project_and_a_private_tmp_work() {
        let (dir, ctx) = project();
        let outside = outside_dir();
        let victim = outside.path().join("planted.txt");
        let out = bash(
            &ctx,
            &format!(
                "echo built > out.txt && echo scratch > /tmp/scratch && cat /tmp/scratch; \
                 echo evil > '{}'; echo \"outside: $?\"; touch /etc/canopy-probe; echo \"etc: $?\"",
                victim.display()
            ),
        )
        .await;
        assert!(
            out.starts_with("exit code: 0\n--- stdout ---\nscratch\noutside: 1\netc: 1\n"),
            "{out}"
        );
        assert!(out.contains("Read-only file system"), "{out}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
            "built\n"
        );
        assert!(
            !victim.exists(),
            "a write outside the project reached the disk"
        );
        assert!(!std::path::Path::new("/etc/canopy-probe").exists());
        // The private /tmp is the command's own: nothing of it reaches the host's.
        assert!(!std::path::Path::new("/tmp/scratch").exists());
    }

    #[tokio::test]
    async fn an_ordinary_build_and_test_in_the_project_works() {
        let (dir, ctx) = project();
        std::fs::write(
            dir.path().join("hello.c"),
            "#include <stdio.h>\nint main(void) { puts(\"hello from the sandbox\"); return 0; }\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("Makefile"),
            "hello: hello.c\n\tcc -o hello hello.c\ntest: hello\n\t./hello | grep -q sandbox && echo PASS\n",
        )
        .unwrap();
        let out = bash(
            &ctx,
            "make -s test && cargo --version >/dev/null && echo cargo-ok",
        )
        .await;
        assert_eq!(out, "exit code: 0\n--- stdout ---\nPASS\ncargo-ok\n");
        assert!(dir.path().join("hello").is_file());
    }

    #[tokio::test]
    async fn there_is_no_network_unless_the_person_allowed_it_for_the_call() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
        let (_dir, mut ctx) = project();

        let out = bash(&ctx, &connect).await;
        assert!(!out.contains("connected\n"), "{out}");
        assert!(out.starts_with("exit code: 1\n"), "{out}");
        assert!(listener.accept().is_err(), "a connection got through");

        // Asking without the person's permission is refused before anything runs.
        let err = run(
            &BashTool,
            &ctx,
            json!({"command": connect, "network": true}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("network access was not allowed"), "{err}");

        // Allowed for this call: the same command connects.
        ctx.network_allowed = true;
        let out = run(
            &BashTool,
            &ctx,
            json!({"command": connect, "network": true}),
        )
        .await
        .unwrap()
        .content;
        assert_eq!(out, "exit code: 0\n--- stdout ---\nconnected\n");
        let mut accepted = false;
        for _ in 0..50 {
            if listener.accept().is_ok() {
                accepted = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(accepted);
        // Allowed, but the call did not ask: it still has none.
        let out = bash(&ctx, &connect).await;
        assert!(out.starts_with("exit code: 1\n"), "{out}");
    }

    #[tokio::test]
    async fn other_processes_and_their_environment_cannot_be_read() {
        let (_dir, ctx) = project();
        let me = std::process::id();
        let out = bash(
            &ctx,
            &format!(
                "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ; \
                 cat /proc/{me}/environ > /dev/null 2>&1 && echo SAW-HOST-PROCESS; \
                 ls /proc | grep -c '^[0-9]' >&2"
            ),
        )
        .await;
        assert!(!out.contains("SAW-HOST-PROCESS"), "{out}");
        let (stdout, stderr) = out.split_once("--- stderr ---\n").unwrap();
        // Only the sandbox's own processes exist: PID 1, the wrapper, the shell, and ls/grep.
        let visible: u32 = stderr.trim().parse().unwrap();
        assert!(visible <= 6, "{visible} processes visible: {out}");
        // Past the `exit code` and `--- stdout ---` lines; bash itself sets PWD, SHLVL and `_`.
        for line in stdout.lines().skip(2) {
            let name = line.split('=').next().unwrap();
            assert!(
                BASE_ENV.contains(&name)
                    || name.starts_with("LC_")
                    || ["TMPDIR", "PWD", "OLDPWD", "SHLVL", "_"].contains(&name),
                "`{name}` reached the sandbox: {out}"
            );
        }
        // The test process's own environment is there to be leaked, and none of it is.
        let host_only = std::env::vars()
            .filter(|(n, _)| !BASE_ENV.contains(&n.as_str()) && !n.starts_with("LC_"))
            .count();
        assert!(host_only > 0);
    }

    #[tokio::test]
    async fn credentials_in_the_home_folder_are_hidden_and_the_rest_stays_readable() {
        let home = outside_dir();
        let h = home.path();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
        std::fs::write(
            h.join(".ssh/id_ed25519"),
            "-----BEGIN OPENSSH PRIVATE KEY-----\nfake-key-material\n-----END OPENSSH PRIVATE KEY-----\n",
        )
        .unwrap();
        std::fs::create_dir_all(h.join(".aws")).unwrap();
        std::fs::write(h.join(".aws/credentials"), "aws_secret_access_key=fake\n").unwrap();
        std::fs::write(h.join(".netrc"), "machine x password fake\n").unwrap();
        std::fs::write(h.join("notes.txt"), "ordinary\n").unwrap();
        // Canopy's own data folder (traces of other projects) is hidden too.
        std::fs::create_dir_all(h.join(".local/share/canopy")).unwrap();
        std::fs::write(h.join(".local/share/canopy/trace.jsonl"), "fake trace\n").unwrap();
        let (_dir, mut ctx) = project();
        ctx.sandbox = Arc::new(
            Sandbox::default()
                .with_paths("bwrap", Some(h.to_path_buf()))
                .with_hidden(vec![h.join(".local/share/canopy")]),
        );
        let out = bash(
            &ctx,
            &format!(
                "cd '{}' && cat notes.txt; ls -A .ssh; cat .ssh/id_ed25519 .aws/credentials .netrc .local/share/canopy/trace.jsonl; echo rc=$?",
                h.display()
            ),
        )
        .await;
        assert!(out.contains("--- stdout ---\nordinary\nrc=1\n"), "{out}");
        assert!(!out.contains("fake"), "{out}");
    }

    #[tokio::test]
    async fn setsid_and_closed_pipe_background_processes_die_with_the_call() {
        let (_dir, ctx) = project();
        let started = std::time::Instant::now();
        let out = bash(
            &ctx,
            "setsid sleep 100.0201 >/dev/null 2>&1 </dev/null & \
             nohup sleep 100.0202 >/dev/null 2>&1 </dev/null & \
             (sleep 100.0203 >&- 2>&- &); \
             sleep 0.3; echo started",
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            out.starts_with("exit code: 0\n--- stdout ---\nstarted\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "background processes still running when the command exited were stopped: 3"
            ),
            "{out}"
        );
        for tag in ["100.0201", "100.0202", "100.0203"] {
            for _ in 0..50 {
                if host_pids(&["sleep", tag]).is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let left = host_pids(&["sleep", tag]);
            assert!(left.is_empty(), "`sleep {tag}` outlived the call: {left:?}");
        }
    }

    #[tokio::test]
    async fn a_background_process_stops_when_the_call_is_cancelled_even_after_setsid() {
        let (dir, ctx) = project();
        let cancel = ctx.cancel.clone();
        let task = tokio::spawn({
            let ctx = ctx.clone();
            async move {
                BashTool
                    .run(
                        json!({"command": "setsid sleep 100.0301 & touch up; sleep 100"}),
                        &ctx,
                    )
                    .await
            }
        });
        for _ in 0..200 {
            if dir.path().join("up").exists() && !host_pids(&["sleep", "100.0301"]).is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pids = host_pids(&["sleep", "100.0301"]);
        assert_eq!(pids.len(), 1, "{pids:?}");
        cancel.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap();
        assert!(wait_dead(pids[0]).await, "setsid sleep survived the cancel");
    }

    #[tokio::test]
    async fn without_bubblewrap_bash_is_refused_with_how_to_enable_it() {
        let (dir, mut ctx) = project();
        ctx.sandbox = Arc::new(Sandbox::default().with_paths("/nonexistent/bwrap", None));
        let err = run(&BashTool, &ctx, json!({"command": "touch ran"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("`/nonexistent/bwrap` was not found"), "{err}");
        assert!(err.contains("sudo apt install bubblewrap"), "{err}");
        assert!(
            err.contains("\"Run Bash without a sandbox\" in Settings"),
            "{err}"
        );
        assert!(!dir.path().join("ran").exists());

        // bubblewrap present but unable to create namespaces (user namespaces disabled).
        let fake = dir.path().join("fake-bwrap");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        ctx.sandbox = Arc::new(Sandbox::default().with_paths(&fake, None));
        let err = run(&BashTool, &ctx, json!({"command": "touch ran"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("setting up uid map: Permission denied"),
            "{err}"
        );
        assert!(err.contains("unprivileged user namespaces"), "{err}");
        assert!(err.contains("Settings → Sandbox"), "{err}");
        assert!(!dir.path().join("ran").exists());
    }

    #[tokio::test]
    async fn turned_off_in_settings_commands_run_without_the_sandbox() {
        let (_dir, mut ctx) = project();
        let outside = outside_dir();
        let target = outside.path().join("written.txt");
        ctx.sandbox = Arc::new(
            Sandbox::new(SandboxMode::Off, Vec::new()).with_paths("/nonexistent/bwrap", None),
        );
        let out = bash(
            &ctx,
            &format!("echo yes > '{}' && echo ok", target.display()),
        )
        .await;
        assert_eq!(out, "exit code: 0\n--- stdout ---\nok\n");
        assert!(target.exists());
    }

    #[tokio::test]
    async fn the_environment_is_the_allowlist_plus_what_the_person_added() {
        let (_dir, mut ctx) = project();
        // Some variable of the test process outside the allowlist (cargo sets several).
        let (name, value) = std::env::vars()
            .find(|(n, v)| {
                !BASE_ENV.contains(&n.as_str())
                    && !n.starts_with("LC_")
                    && !is_secret_env(n, &[])
                    && !v.is_empty()
                    && v.chars().all(|c| c.is_ascii_graphic())
            })
            .expect("the test process has some variable outside the allowlist");
        let show = format!("printf '%s\\n' \"${{{name}-unset}}\"");
        assert_eq!(
            bash(&ctx, &show).await,
            "exit code: 0\n--- stdout ---\nunset\n"
        );
        ctx.sandbox = Arc::new(Sandbox::new(SandboxMode::Required, vec![name.clone()]));
        assert_eq!(
            bash(&ctx, &show).await,
            format!("exit code: 0\n--- stdout ---\n{value}\n")
        );
        // The model's key variables never pass, even when added.
        ctx.env_denylist = Arc::new(vec![name]);
        assert_eq!(
            bash(&ctx, &show).await,
            "exit code: 0\n--- stdout ---\nunset\n"
        );
    }
}
