//! Opening a project file in the person's editor at a line: which editors Canopy knows (desktop
//! ones, and terminal ones it must not start from a desktop app), how each takes a line, and the
//! fallback to the desktop's default application.

use std::ffi::OsString;
use std::path::Path;

use serde::Serialize;
use ts_rs::TS;

use crate::error::{HostError, HostResult};
use crate::files::confine;

/// What "Open in editor" did, for the UI to say in words ("Opened in VS Code at line 12").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct EditorOpened {
    /// The editor's name as people know it (`VS Code`); `null` when the desktop's default app opened it.
    pub editor: Option<String>,
    /// The line the editor was asked to show; `null` when none was passed.
    pub line: Option<u32>,
    /// Why the person's editor was not used (only with the default app), e.g. `$VISUAL is not set`.
    pub note: Option<String>,
}

/// How an editor is told which line to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineSyntax {
    /// `-g file:line` (VS Code and its forks).
    Goto,
    /// `file:line` (Zed, Sublime Text).
    Suffix,
    /// `+line file` (gedit, GNOME Text Editor, gVim, Emacs).
    Plus,
    /// `--line N file` (Kate, JetBrains IDEs).
    LineFlag,
}

/// Desktop editors known by program name (lower-cased, without `.sh`/`.exe`).
const GUI_EDITORS: &[(&str, &str, LineSyntax)] = &[
    ("code", "VS Code", LineSyntax::Goto),
    ("code-insiders", "VS Code Insiders", LineSyntax::Goto),
    ("code-oss", "Code - OSS", LineSyntax::Goto),
    ("codium", "VSCodium", LineSyntax::Goto),
    ("vscodium", "VSCodium", LineSyntax::Goto),
    ("cursor", "Cursor", LineSyntax::Goto),
    ("zed", "Zed", LineSyntax::Suffix),
    ("zeditor", "Zed", LineSyntax::Suffix),
    ("subl", "Sublime Text", LineSyntax::Suffix),
    ("sublime_text", "Sublime Text", LineSyntax::Suffix),
    ("gedit", "gedit", LineSyntax::Plus),
    ("gnome-text-editor", "GNOME Text Editor", LineSyntax::Plus),
    ("gvim", "gVim", LineSyntax::Plus),
    ("emacs", "Emacs", LineSyntax::Plus),
    ("emacsclient", "Emacs", LineSyntax::Plus),
    ("kate", "Kate", LineSyntax::LineFlag),
    ("idea", "IntelliJ IDEA", LineSyntax::LineFlag),
    ("idea64", "IntelliJ IDEA", LineSyntax::LineFlag),
    (
        "intellij-idea-community",
        "IntelliJ IDEA",
        LineSyntax::LineFlag,
    ),
    (
        "intellij-idea-ultimate",
        "IntelliJ IDEA",
        LineSyntax::LineFlag,
    ),
    ("clion", "CLion", LineSyntax::LineFlag),
    ("pycharm", "PyCharm", LineSyntax::LineFlag),
    ("pycharm-community", "PyCharm", LineSyntax::LineFlag),
    ("pycharm-professional", "PyCharm", LineSyntax::LineFlag),
    ("webstorm", "WebStorm", LineSyntax::LineFlag),
    ("goland", "GoLand", LineSyntax::LineFlag),
    ("rustrover", "RustRover", LineSyntax::LineFlag),
    ("phpstorm", "PhpStorm", LineSyntax::LineFlag),
    ("rubymine", "RubyMine", LineSyntax::LineFlag),
    ("rider", "Rider", LineSyntax::LineFlag),
    ("datagrip", "DataGrip", LineSyntax::LineFlag),
];

/// Editors that need a terminal, which an app started from the desktop does not have.
const TERMINAL_EDITORS: &[&str] = &[
    "vi",
    "vim",
    "vim.basic",
    "vim.tiny",
    "nvim",
    "nvi",
    "view",
    "ex",
    "ed",
    "nano",
    "pico",
    "micro",
    "hx",
    "helix",
    "kak",
    "joe",
    "jed",
    "ne",
    "mg",
    "mcedit",
    "zile",
    "jove",
    "elvis",
    "amp",
];

/// Arguments by which Emacs stays in the terminal.
const EMACS_TERMINAL_FLAGS: &[&str] = &["-nw", "--no-window-system", "-t", "--tty"];

/// A desktop editor and the argument vector that opens the file at the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorLaunch {
    /// The editor's name as people know it.
    pub name: &'static str,
    /// The program, as written in the variable (a bare name is looked up on `PATH`).
    pub program: String,
    /// Arguments: the variable's own (`--wait`, …), then the file and line.
    pub args: Vec<OsString>,
}

/// Why an editor variable was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorSkip {
    /// Unset or blank.
    Unset,
    /// A terminal editor (the program name).
    Terminal(String),
    /// A program Canopy does not know how to pass a line to.
    Unknown(String),
    /// Quotes that never close.
    Unparsable,
}

/// The argument vector that opens `file` at `line` in the editor named by `command` (the value of
/// `$VISUAL` or `$EDITOR`, possibly with arguments such as `code --wait`), or why it cannot be used.
pub fn editor_argv(
    command: &str,
    file: &Path,
    line: Option<u32>,
) -> Result<EditorLaunch, EditorSkip> {
    // Quoted the way a shell would (`'/opt/My Editors/code' --wait`), but never run by one.
    let words = shell_words::split(command).map_err(|_| EditorSkip::Unparsable)?;
    let Some((program, own_args)) = words.split_first() else {
        return Err(EditorSkip::Unset);
    };
    let base = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let key = base
        .strip_suffix(".sh")
        .or_else(|| base.strip_suffix(".exe"))
        .unwrap_or(&base);
    let stays_in_terminal = key.starts_with("emacs")
        && own_args
            .iter()
            .any(|a| EMACS_TERMINAL_FLAGS.contains(&a.as_str()));
    if TERMINAL_EDITORS.contains(&key) || stays_in_terminal {
        return Err(EditorSkip::Terminal(base));
    }
    let Some(&(_, name, syntax)) = GUI_EDITORS.iter().find(|(k, _, _)| *k == key) else {
        return Err(EditorSkip::Unknown(base));
    };
    let mut args: Vec<OsString> = own_args.iter().map(OsString::from).collect();
    match line {
        None => args.push(file.as_os_str().to_owned()),
        Some(line) => match syntax {
            LineSyntax::Goto => {
                args.push("-g".into());
                args.push(with_line_suffix(file, line));
            }
            LineSyntax::Suffix => args.push(with_line_suffix(file, line)),
            LineSyntax::Plus => {
                args.push(format!("+{line}").into());
                args.push(file.as_os_str().to_owned());
            }
            LineSyntax::LineFlag => {
                args.push("--line".into());
                args.push(line.to_string().into());
                args.push(file.as_os_str().to_owned());
            }
        },
    }
    Ok(EditorLaunch {
        name,
        program: program.clone(),
        args,
    })
}

/// `file:line` without going through a lossy string (a path need not be UTF-8).
fn with_line_suffix(file: &Path, line: u32) -> OsString {
    let mut arg = file.as_os_str().to_owned();
    arg.push(format!(":{line}"));
    arg
}

/// The person's editor for `file` at `line`: `$VISUAL`, else `$EDITOR`, when it is a desktop editor
/// Canopy knows; otherwise `Err` with the sentence the UI shows after "line not passed: ".
pub fn choose_editor(
    visual: Option<&str>,
    editor: Option<&str>,
    file: &Path,
    line: Option<u32>,
) -> Result<EditorLaunch, String> {
    let mut reasons = Vec::new();
    for (var, value) in [("$VISUAL", visual), ("$EDITOR", editor)] {
        match editor_argv(value.unwrap_or(""), file, line) {
            Ok(launch) => return Ok(launch),
            Err(EditorSkip::Unset) => {}
            Err(EditorSkip::Terminal(program)) => {
                reasons.push(format!("{var} is {program}, which needs a terminal"))
            }
            Err(EditorSkip::Unknown(program)) => reasons.push(format!(
                "Canopy does not know how to pass a line to {program} ({var})"
            )),
            Err(EditorSkip::Unparsable) => {
                reasons.push(format!("{var} has a quote that is never closed"))
            }
        }
    }
    let hint = "set $VISUAL to your editor (code, codium, zed, subl, gedit, kate, idea…)";
    Err(if reasons.is_empty() {
        hint.to_string()
    } else {
        format!("{}; {hint}", reasons.join("; "))
    })
}

/// Starts the editor without a shell and without waiting for it; a thread reaps it when it exits.
fn spawn_editor(launch: &EditorLaunch, cwd: &Path) -> std::io::Result<()> {
    let mut child = std::process::Command::new(&launch.program)
        .args(&launch.args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// Opens `path` (confined to the project at `root`) at `line` in the person's editor: `visual`
/// (`$VISUAL`), then `editor` (`$EDITOR`), when it is a desktop editor with a known line syntax;
/// otherwise `open_default` (the desktop's default application) opens it and the answer says why
/// the line could not be passed. `open_default`'s error is the sentence to show.
pub fn open_in_editor(
    root: &Path,
    path: &str,
    line: Option<u32>,
    visual: Option<&str>,
    editor: Option<&str>,
    open_default: impl FnOnce(&Path) -> Result<(), String>,
) -> HostResult<EditorOpened> {
    if line == Some(0) {
        return Err(HostError::InvalidArgument(
            "line numbers start at 1".to_string(),
        ));
    }
    let resolved = confine(root, path)?;
    let note = match choose_editor(visual, editor, &resolved.abs, line) {
        Ok(launch) => match spawn_editor(&launch, root) {
            Ok(()) => {
                return Ok(EditorOpened {
                    editor: Some(launch.name.to_string()),
                    line,
                    note: None,
                })
            }
            Err(e) => format!("could not start {} ({e})", launch.program),
        },
        Err(note) => note,
    };
    open_default(&resolved.abs)
        .map_err(|e| HostError::Platform(format!("cannot open {path}: {e}")))?;
    Ok(EditorOpened {
        editor: None,
        line: None,
        note: Some(note),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(
        command: &str,
        file: &str,
        line: Option<u32>,
    ) -> Result<(String, Vec<String>), EditorSkip> {
        editor_argv(command, Path::new(file), line).map(|l| {
            (
                l.program,
                l.args
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
            )
        })
    }

    #[test]
    fn each_known_editor_gets_the_line_in_its_own_syntax() {
        let f = "/p/src/a.rs";
        let cases: &[(&str, &[&str])] = &[
            ("code", &["-g", "/p/src/a.rs:12"]),
            ("/usr/bin/codium", &["-g", "/p/src/a.rs:12"]),
            ("code --wait", &["--wait", "-g", "/p/src/a.rs:12"]),
            ("zed", &["/p/src/a.rs:12"]),
            ("subl", &["/p/src/a.rs:12"]),
            ("sublime_text", &["/p/src/a.rs:12"]),
            ("gedit", &["+12", "/p/src/a.rs"]),
            ("gnome-text-editor", &["+12", "/p/src/a.rs"]),
            ("emacs", &["+12", "/p/src/a.rs"]),
            ("kate", &["--line", "12", "/p/src/a.rs"]),
            ("idea", &["--line", "12", "/p/src/a.rs"]),
            ("/opt/clion/bin/clion.sh", &["--line", "12", "/p/src/a.rs"]),
            ("pycharm", &["--line", "12", "/p/src/a.rs"]),
        ];
        for (command, want) in cases {
            let (_, args) =
                argv(command, f, Some(12)).unwrap_or_else(|e| panic!("{command}: {e:?}"));
            assert_eq!(args, *want, "{command}");
        }
        assert_eq!(
            editor_argv("code", Path::new(f), Some(3)).unwrap().name,
            "VS Code"
        );
        // Without a line the file alone is passed.
        assert_eq!(argv("kate", f, None).unwrap().1, ["/p/src/a.rs"]);
    }

    #[test]
    fn paths_with_spaces_and_quotes_stay_one_argument() {
        let f = "/p/my dir/it's \"x\".rs";
        let (program, args) = argv("'/opt/My Editors/code' --new-window", f, Some(7)).unwrap();
        assert_eq!(program, "/opt/My Editors/code");
        assert_eq!(args, ["--new-window", "-g", "/p/my dir/it's \"x\".rs:7"]);
        let (_, args) = argv("gedit", f, Some(7)).unwrap();
        assert_eq!(args, ["+7", f]);
        assert_eq!(
            argv("\"/opt/sub l/subl", f, Some(1)),
            Err(EditorSkip::Unparsable)
        );
        // Backslashes and double quotes as a shell reads them.
        let (program, args) = argv("/opt/My\\ Editors/zed --new", f, Some(2)).unwrap();
        assert_eq!(program, "/opt/My Editors/zed");
        assert_eq!(args, ["--new", "/p/my dir/it's \"x\".rs:2"]);
        let (program, _) = argv("\"/opt/sub l/subl\" -n", f, None).unwrap();
        assert_eq!(program, "/opt/sub l/subl");
    }

    #[test]
    fn terminal_and_unknown_editors_are_not_launched() {
        for command in [
            "vim",
            "/usr/bin/nvim",
            "nano -w",
            "emacs -nw",
            "emacsclient -t",
            "hx",
        ] {
            assert!(
                matches!(
                    argv(command, "/p/a.rs", Some(1)),
                    Err(EditorSkip::Terminal(_))
                ),
                "{command}"
            );
        }
        assert_eq!(
            argv("mousepad", "/p/a.rs", Some(1)),
            Err(EditorSkip::Unknown("mousepad".into()))
        );
        assert_eq!(argv("  ", "/p/a.rs", Some(1)), Err(EditorSkip::Unset));
    }

    #[test]
    fn visual_wins_then_editor_then_the_default_app_with_a_reason() {
        let f = Path::new("/p/a.rs");
        let chosen = choose_editor(Some("zed"), Some("code"), f, Some(4)).unwrap();
        assert_eq!(chosen.name, "Zed");
        // A terminal $VISUAL is skipped for a desktop $EDITOR.
        let chosen = choose_editor(Some("vim"), Some("kate"), f, Some(4)).unwrap();
        assert_eq!(chosen.name, "Kate");
        let why = choose_editor(None, None, f, Some(4)).unwrap_err();
        assert!(why.starts_with("set $VISUAL to your editor"), "{why}");
        let why = choose_editor(Some("vim"), None, f, Some(4)).unwrap_err();
        assert!(
            why.contains("$VISUAL is vim, which needs a terminal"),
            "{why}"
        );
        let why = choose_editor(None, Some("mousepad"), f, Some(4)).unwrap_err();
        assert!(why.contains("mousepad ($EDITOR)"), "{why}");
    }

    #[test]
    fn a_spawned_editor_receives_exactly_the_argv() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("argv.txt");
        let script = dir.path().join("code");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{}'; done\n",
                record.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.path().join("a b's.rs");
        let launch = choose_editor(script.to_str(), None, &file, Some(9)).unwrap();
        spawn_editor(&launch, dir.path()).unwrap();
        let mut got = String::new();
        for _ in 0..100 {
            got = std::fs::read_to_string(&record).unwrap_or_default();
            if got.lines().count() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(got, format!("-g\n{}:9\n", file.display()));
        let missing = choose_editor(Some("/no/such/dir/code"), None, &file, Some(1)).unwrap();
        assert!(spawn_editor(&missing, dir.path()).is_err());
    }
}
