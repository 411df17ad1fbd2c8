//! Reading project files for the viewer, and handing them to the desktop (file manager, editor).
//! Every path is confined to the open project by the same rule the agent's tools obey
//! ([`canopy_tools::paths::resolve`]): canonicalised (resolving `..` and symlinks), it must exist and
//! stay under the project's canonical root. What only the viewer needs (no folders, pipes, binary or
//! huge files) is checked here.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

use canopy_tools::paths::{self, Access, Resolved};
use canopy_tools::ToolError;
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_opener::OpenerExt;
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

/// Largest file the viewer reads.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Most lines one call returns.
pub const MAX_WINDOW_LINES: usize = 5000;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A window of lines of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FileWindow {
    /// Project-relative path with `/` separators.
    pub path: String,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// 1-based number of the first returned line.
    pub start_line: u32,
    /// The lines, without line endings.
    pub lines: Vec<String>,
    /// Language id for highlighting (`rust`, `typescript`, …), `null` when unknown.
    pub language: Option<String>,
}

/// Confines `path` (project-relative or absolute) to the project at `root` with the shared rule
/// ([`canopy_tools::paths::resolve`], read access: it must exist, symlinks may not lead out) and
/// turns a refusal into the code the UI branches on: `outside_project`, `not_found`,
/// `invalid_argument` (empty path) or `io`.
pub fn confine(root: &Path, path: &str) -> CommandResult<Resolved> {
    paths::resolve(root, path, Access::Read).map_err(|err| match err {
        ToolError::OutsideProject(message) => CommandError::new(ErrorCode::OutsideProject, message),
        ToolError::NotFound(message) => CommandError::new(ErrorCode::NotFound, message),
        ToolError::InvalidArguments(message) => {
            CommandError::new(ErrorCode::InvalidArgument, message)
        }
        ToolError::Failed(message) => CommandError::new(ErrorCode::Io, message),
        other => CommandError::new(ErrorCode::Io, other.to_string()),
    })
}

/// Reads lines `start_line..=end_line` (1-based; defaults: from 1, at most [`MAX_WINDOW_LINES`]).
pub fn read_window(
    root: &Path,
    path: &str,
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> CommandResult<FileWindow> {
    let Resolved {
        abs: resolved,
        display: shown,
    } = confine(root, path)?;
    let io =
        |e: std::io::Error| CommandError::new(ErrorCode::Io, format!("cannot read {shown}: {e}"));
    let meta = std::fs::metadata(&resolved).map_err(io)?;
    if meta.is_dir() {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{shown} is a folder, not a file"),
        ));
    }
    // A FIFO or device would block the read forever.
    if !meta.is_file() {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{shown} is not a regular file (a pipe, socket or device)"),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(CommandError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{shown} is {} bytes; the viewer reads files up to {MAX_FILE_BYTES} bytes",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&resolved)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(CommandError::new(
            ErrorCode::BinaryFile,
            format!("{shown} looks like a binary file (it contains NUL bytes)"),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.strip_suffix('\n')
            .unwrap_or(&text)
            .split('\n')
            .collect()
    };
    let total = all.len();
    let start = start_line.unwrap_or(1) as usize;
    if start == 0 {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            "line numbers start at 1",
        ));
    }
    if start > total.max(1) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{shown} has {total} lines; cannot start at line {start}"),
        ));
    }
    let end = match end_line {
        Some(e) if (e as usize) < start => {
            return Err(CommandError::new(
                ErrorCode::InvalidArgument,
                format!("end line {e} is before start line {start}"),
            ))
        }
        Some(e) => e as usize,
        None => usize::MAX,
    }
    .min(total)
    .min(start + MAX_WINDOW_LINES - 1);
    let lines = all
        .get(start - 1..end)
        .unwrap_or_default()
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    Ok(FileWindow {
        language: language_for(&resolved).map(str::to_string),
        path: shown,
        total_lines: u32::try_from(total).unwrap_or(u32::MAX),
        start_line: u32::try_from(start).unwrap_or(u32::MAX),
        lines,
    })
}

/// Language ids of whole file names (lower-cased), tried before the extension.
pub(crate) const LANGUAGE_BY_NAME: &[(&str, &str)] = &[
    ("dockerfile", "dockerfile"),
    ("containerfile", "dockerfile"),
    ("makefile", "makefile"),
    ("gnumakefile", "makefile"),
    ("cargo.lock", "toml"),
];

/// Language ids by (lower-cased) extension. The UI highlights each id or shows it plain on purpose;
/// `ui/src/lib/languages.json` lists them for its test (regenerated by `languages_json_is_current`).
pub(crate) const LANGUAGE_BY_EXTENSION: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("tsx", "tsx"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "jsx"),
    ("svelte", "svelte"),
    ("vue", "vue"),
    ("py", "python"),
    ("pyi", "python"),
    ("go", "go"),
    ("java", "java"),
    ("kt", "kotlin"),
    ("kts", "kotlin"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("cxx", "cpp"),
    ("hpp", "cpp"),
    ("hh", "cpp"),
    ("hxx", "cpp"),
    ("cs", "csharp"),
    ("rb", "ruby"),
    ("php", "php"),
    ("swift", "swift"),
    ("sh", "shell"),
    ("bash", "shell"),
    ("zsh", "shell"),
    ("json", "json"),
    ("jsonl", "json"),
    ("toml", "toml"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("md", "markdown"),
    ("markdown", "markdown"),
    ("html", "html"),
    ("htm", "html"),
    ("css", "css"),
    ("scss", "scss"),
    ("sql", "sql"),
    ("xml", "xml"),
    ("svg", "xml"),
    ("lua", "lua"),
    ("zig", "zig"),
    ("mk", "makefile"),
    ("dockerfile", "dockerfile"),
];

/// A highlighting language id guessed from the file name.
pub fn language_for(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    if let Some((_, id)) = LANGUAGE_BY_NAME.iter().find(|(n, _)| *n == name) {
        return Some(id);
    }
    let ext = path.extension()?.to_string_lossy().to_lowercase();
    LANGUAGE_BY_EXTENSION
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, id)| *id)
}

/// Every id [`language_for`] can return, sorted, once each.
pub fn language_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = LANGUAGE_BY_NAME
        .iter()
        .chain(LANGUAGE_BY_EXTENSION)
        .map(|(_, id)| *id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Reads a window of lines of a text file in the open project.
#[tauri::command]
pub async fn read_project_file(
    state: State<'_, AppState>,
    path: String,
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> CommandResult<FileWindow> {
    let project = state.require_project()?;
    read_window(Path::new(&project.root), &path, start_line, end_line)
}

/// Shows a project file in the desktop's file manager.
#[tauri::command]
pub async fn reveal_file<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<()> {
    let project = state.require_project()?;
    let resolved = confine(Path::new(&project.root), &path)?;
    app.opener()
        .reveal_item_in_dir(&resolved.abs)
        .map_err(|e| CommandError::new(ErrorCode::Platform, format!("cannot show {path}: {e}")))
}

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

/// Splits an editor variable into words the way a shell would for simple cases (quotes and
/// backslashes), without running one. `None` for an unclosed quote.
fn split_command(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// The argument vector that opens `file` at `line` in the editor named by `command` (the value of
/// `$VISUAL` or `$EDITOR`, possibly with arguments such as `code --wait`), or why it cannot be used.
pub fn editor_argv(
    command: &str,
    file: &Path,
    line: Option<u32>,
) -> Result<EditorLaunch, EditorSkip> {
    let words = split_command(command).ok_or(EditorSkip::Unparsable)?;
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

/// Opens a project file at `line` in the person's editor (`$VISUAL`, then `$EDITOR`, when it is a
/// desktop editor with a known line syntax), else with the desktop's default application, saying why
/// the line could not be passed.
#[tauri::command]
pub async fn open_in_editor<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
    line: Option<u32>,
) -> CommandResult<EditorOpened> {
    if line == Some(0) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            "line numbers start at 1",
        ));
    }
    let project = state.require_project()?;
    let root = Path::new(&project.root);
    let resolved = confine(root, &path)?;
    let visual = std::env::var("VISUAL").ok();
    let editor = std::env::var("EDITOR").ok();
    let note = match choose_editor(visual.as_deref(), editor.as_deref(), &resolved.abs, line) {
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
    app.opener()
        .open_path(resolved.abs.display().to_string(), None::<&str>)
        .map_err(|e| CommandError::new(ErrorCode::Platform, format!("cannot open {path}: {e}")))?;
    Ok(EditorOpened {
        editor: None,
        line: None,
        note: Some(note),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// A project with `src/main.rs` and, beside it, an outside folder holding a secret.
    fn setup() -> (tempfile::TempDir, (PathBuf, PathBuf)) {
        let dirs = tempfile::tempdir().unwrap();
        let root = dirs.path().join("project");
        let outside = dirs.path().join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(outside.join("inner")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(outside.join("secret.txt"), "password\n").unwrap();
        (dirs, (root, outside))
    }

    fn code(root: &Path, path: &str) -> ErrorCode {
        match read_window(root, path, None, None) {
            Ok(w) => panic!("{path} was read: {w:?}"),
            Err(e) => {
                assert!(!e.message.contains("password"), "{}", e.message);
                e.code
            }
        }
    }

    #[test]
    fn the_viewer_uses_the_shared_rule_and_keeps_its_codes() {
        let (_dirs, (root, outside)) = setup();
        symlink(outside.join("inner"), root.join("esc")).unwrap();
        // Into the project: a dangling link pointing out is refused as outside, like any link out.
        symlink(root.join("gone.txt"), root.join("dangling")).unwrap();

        // `..` through a symlinked folder goes where the OS goes: out.
        assert_eq!(code(&root, "esc/../secret.txt"), ErrorCode::OutsideProject);
        // A missing path that climbs out is outside, not merely missing.
        assert_eq!(code(&root, "../no/such.txt"), ErrorCode::OutsideProject);
        assert_eq!(code(&root, "dangling"), ErrorCode::NotFound);
        assert_eq!(code(&root, "src\\main.rs"), ErrorCode::NotFound);
        assert_eq!(code(&root, ""), ErrorCode::InvalidArgument);
        // The root itself is confined but is a folder.
        assert_eq!(code(&root, "."), ErrorCode::InvalidArgument);

        let abs = root.join("src/main.rs");
        let window = read_window(&root, abs.to_str().unwrap(), None, None).unwrap();
        assert_eq!(window.path, "src/main.rs");
        assert_eq!(window.lines, ["fn main() {}"]);
    }

    #[test]
    fn refusals_name_the_path_and_the_reason() {
        let (_dirs, (root, outside)) = setup();
        symlink(outside.join("secret.txt"), root.join("link.txt")).unwrap();
        let err = confine(&root, "link.txt").unwrap_err();
        assert_eq!(err.code, ErrorCode::OutsideProject);
        assert!(
            err.message.contains("`link.txt`") && err.message.contains("symlink"),
            "{}",
            err.message
        );
        let err = confine(&root, "src/missing.rs").unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert!(
            err.message.contains("`src/missing.rs` does not exist"),
            "{}",
            err.message
        );
    }

    #[test]
    fn pipes_are_refused_by_the_viewer_not_by_confinement() {
        let (_dirs, (root, _outside)) = setup();
        let fifo = root.join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert!(confine(&root, "pipe").is_ok());
        assert_eq!(code(&root, "pipe"), ErrorCode::InvalidArgument);
    }

    #[test]
    fn languages_json_is_current() {
        crate::typescript::assert_generated_current(
            "../ui/src/lib/languages.json",
            &format!("{}\n", serde_json::to_string(&language_ids()).unwrap()),
            "language_for changed",
            "languages_json",
        );
    }

    #[test]
    fn languages_come_from_names_and_extensions() {
        assert_eq!(language_for(Path::new("app/models/user.RB")), Some("ruby"));
        assert_eq!(language_for(Path::new("db/001_init.sql")), Some("sql"));
        assert_eq!(language_for(Path::new("web/App.vue")), Some("vue"));
        assert_eq!(language_for(Path::new("Dockerfile")), Some("dockerfile"));
        assert_eq!(language_for(Path::new("GNUmakefile")), Some("makefile"));
        assert_eq!(language_for(Path::new("Cargo.lock")), Some("toml"));
        assert_eq!(language_for(Path::new("notes.txt")), None);
        assert_eq!(language_for(Path::new("LICENSE")), None);
        let ids = language_ids();
        assert!(ids.contains(&"kotlin") && ids.contains(&"zig"), "{ids:?}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    }

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
