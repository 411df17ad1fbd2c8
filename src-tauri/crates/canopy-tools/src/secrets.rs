//! Secret files: paths withheld from the agents whatever the permission policy. Read refuses them
//! (saying why and how to allow one), Grep and Glob skip them. The list is editable in Settings; a
//! subagent always gets the default list plus the person's additions, never their exceptions.
//!
//! Patterns work like `.gitignore` lines, matched against project-relative paths: a pattern without
//! `/` matches a file or folder name at any depth (`.env*`, `*.pem`), one with `/` matches that run
//! of names at any depth (`.aws/credentials`), a leading `/` anchors it to the project root, a match
//! on a folder withholds everything under it, and `!pattern` is an exception (`!.env.example`).

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::ToolError;

/// The list a new settings file starts with (`canopy_protocol::DEFAULT_SECRET_FILES`).
pub const DEFAULT_PATTERNS: &[&str] = canopy_protocol::DEFAULT_SECRET_FILES;

/// A compiled secret-file list.
#[derive(Debug, Clone)]
pub struct SecretFiles {
    deny: GlobSet,
    deny_src: Vec<String>,
    allow: GlobSet,
}

impl Default for SecretFiles {
    fn default() -> Self {
        let defaults: Vec<String> = DEFAULT_PATTERNS.iter().map(|p| p.to_string()).collect();
        match SecretFiles::new(&defaults) {
            Ok(s) => s,
            // The defaults are constants covered by a test; an empty set keeps this infallible.
            Err(_) => SecretFiles {
                deny: GlobSet::empty(),
                deny_src: Vec::new(),
                allow: GlobSet::empty(),
            },
        }
    }
}

impl SecretFiles {
    /// Compiles `patterns` (the Settings list); the error names the pattern that is not valid.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        let mut deny = GlobSetBuilder::new();
        let mut allow = GlobSetBuilder::new();
        let mut deny_src = Vec::new();
        for raw in patterns {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let (exception, pat) = match line.strip_prefix('!') {
                Some(rest) => (true, rest.trim()),
                None => (false, line),
            };
            if pat.is_empty() {
                return Err(format!("`{raw}`: an exception needs a pattern after `!`"));
            }
            let target = if exception { &mut allow } else { &mut deny };
            for glob in expand(pat) {
                let g = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("`{raw}` is not a valid pattern: {e}"))?;
                target.add(g);
            }
            if !exception {
                deny_src.push(pat.to_string());
            }
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| format!("secret-file list: {e}"));
        Ok(SecretFiles {
            deny: build(deny)?,
            deny_src,
            allow: build(allow)?,
        })
    }

    /// The list a subagent gets: the defaults and every pattern the person added, with no
    /// exceptions, so a subagent never sees a secret file whatever the setting.
    pub fn for_subagents(patterns: &[String]) -> Self {
        let mut all: Vec<String> = DEFAULT_PATTERNS.iter().map(|p| p.to_string()).collect();
        all.extend(
            patterns
                .iter()
                .map(|p| p.trim())
                .filter(|p| !p.is_empty() && !p.starts_with('!'))
                .map(str::to_string),
        );
        // A pattern that does not compile is left out; the rest still hold.
        let valid: Vec<String> = all
            .into_iter()
            .filter(|p| SecretFiles::new(std::slice::from_ref(p)).is_ok())
            .collect();
        SecretFiles::new(&valid).unwrap_or_default()
    }

    /// The pattern that withholds `rel` (a project-relative path), if any.
    pub fn withheld(&self, rel: &Path) -> Option<&str> {
        if self.deny_src.is_empty() || self.allow.is_match(rel) {
            return None;
        }
        // Every ancestor too: a match on a folder (`.ssh`) withholds what is inside it.
        let mut prefix = PathBuf::new();
        for c in rel.components() {
            let Component::Normal(name) = c else { continue };
            prefix.push(name);
            if let Some(&i) = self.deny.matches(&prefix).first() {
                return Some(self.pattern_of(i));
            }
        }
        None
    }

    /// Globs are added per pattern in order, two per unanchored pattern; map a glob index back.
    fn pattern_of(&self, glob_index: usize) -> &str {
        let mut i = 0;
        for src in &self.deny_src {
            let n = expand(src).len();
            if glob_index < i + n {
                return src;
            }
            i += n;
        }
        "?"
    }

    /// Refuses a path (given by the model, resolved to `abs` inside `root`) that is withheld, by its
    /// name as given or by where it leads.
    pub fn check(&self, root: &Path, given: &str, abs: &Path) -> Result<(), ToolError> {
        let lexical = lexical_rel(root, given);
        let canonical = abs.strip_prefix(root).ok().map(Path::to_path_buf);
        for rel in [lexical, canonical].into_iter().flatten() {
            if let Some(pattern) = self.withheld(&rel) {
                let shown = crate::paths::display_rel(&rel);
                return Err(ToolError::Refused(refusal(&shown, pattern)));
            }
        }
        Ok(())
    }

    /// Whether an absolute path under `root` is withheld (for the walks of Grep and Glob).
    pub fn withheld_abs(&self, root: &Path, abs: &Path) -> bool {
        abs.strip_prefix(root)
            .is_ok_and(|rel| self.withheld(rel).is_some())
    }
}

/// The message Read gives for a withheld file: why, and how the person can allow it.
pub fn refusal(shown: &str, pattern: &str) -> String {
    format!(
        "`{shown}` is withheld as a secret file (it matches `{pattern}` in the secret-file list), so \
         its content is not shown to agents. If it is needed, ask the person: they can allow this file \
         by adding `!{shown}` to Settings → Secret files (or removing `{pattern}`), or paste the part \
         that is needed into the chat. Subagents never get secret files."
    )
}

/// An unanchored pattern matches at any depth; `/x` only at the root.
fn expand(pat: &str) -> Vec<String> {
    let pat = pat.trim_end_matches('/');
    match pat.strip_prefix('/') {
        Some(anchored) => vec![anchored.to_string()],
        None => vec![pat.to_string(), format!("**/{pat}")],
    }
}

/// `given` relative to `root`, `..` and `.` removed without touching the disk.
fn lexical_rel(root: &Path, given: &str) -> Option<PathBuf> {
    let joined = root.join(given);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out.strip_prefix(root).ok().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(p: &[&str]) -> SecretFiles {
        SecretFiles::new(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn the_defaults_withhold_the_usual_secrets_at_any_depth_and_nothing_ordinary() {
        let s = SecretFiles::default();
        for (path, pattern) in [
            (".env", ".env*"),
            ("app/.env.local", ".env*"),
            ("certs/server.pem", "*.pem"),
            ("deploy/tls.key", "*.key"),
            ("id_rsa", "id_rsa*"),
            ("keys/id_ed25519.pub", "id_ed25519*"),
            ("home/.aws/credentials", ".aws/credentials"),
            (".ssh/config", ".ssh"),
            ("config/secrets.yaml", "secrets.*"),
            (".npmrc", ".npmrc"),
            ("a/b/.netrc", ".netrc"),
        ] {
            assert_eq!(s.withheld(Path::new(path)), Some(pattern), "{path}");
        }
        for path in [
            "src/main.rs",
            "README.md",
            "environment.md",
            "src/keyboard.rs",
            "docs/secrets-handling.md",
            ".aws/config",
            "monkey/id.rs",
        ] {
            assert_eq!(s.withheld(Path::new(path)), None, "{path}");
        }
    }

    #[test]
    fn exceptions_anchors_and_bad_patterns() {
        let s = list(&[".env*", "!.env.example", "/local.cfg"]);
        assert_eq!(s.withheld(Path::new(".env")), Some(".env*"));
        assert_eq!(s.withheld(Path::new(".env.example")), None);
        assert_eq!(s.withheld(Path::new("local.cfg")), Some("/local.cfg"));
        assert_eq!(s.withheld(Path::new("sub/local.cfg")), None);
        let err = SecretFiles::new(&["a[".to_string()]).unwrap_err();
        assert!(err.contains("`a[` is not a valid pattern"), "{err}");
        let err = SecretFiles::new(&["!".to_string()]).unwrap_err();
        assert!(err.contains("needs a pattern"), "{err}");
    }

    #[test]
    fn subagents_keep_the_defaults_and_drop_exceptions() {
        // The person removed `*.pem` and allowed `.env`; a subagent still gets neither.
        let person = vec!["!.env".to_string(), "notes/private.txt".to_string()];
        let s = SecretFiles::for_subagents(&person);
        assert!(s.withheld(Path::new(".env")).is_some());
        assert!(s.withheld(Path::new("server.pem")).is_some());
        assert!(s.withheld(Path::new("notes/private.txt")).is_some());
    }

    #[test]
    fn a_path_is_checked_as_given_and_where_it_leads() {
        let s = SecretFiles::default();
        let root = Path::new("/p");
        let err = s
            .check(root, "sub/../.env", Path::new("/p/real.txt"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("withheld as a secret file"), "{err}");
        assert!(
            err.contains("adding `!.env` to Settings → Secret files"),
            "{err}"
        );
        assert!(s
            .check(root, "notes.txt", Path::new("/p/keys/prod.pem"))
            .is_err());
        assert!(s
            .check(root, "notes.txt", Path::new("/p/notes.txt"))
            .is_ok());
    }

    mod tools {
        //! Read, Grep and Glob on a project holding secrets, through the real tools.
        use std::sync::Arc;

        use serde_json::json;

        use super::super::SecretFiles;
        use crate::tools::test_util::{project, run};
        use crate::{GlobTool, GrepTool, ReadTool, ToolContext};

        const TOKEN: &str = "hunter2-canopy-token";

        fn secret_project() -> (tempfile::TempDir, ToolContext) {
            let (dir, ctx) = project();
            let root = dir.path();
            std::fs::create_dir_all(root.join("config")).unwrap();
            std::fs::create_dir_all(root.join("deploy/.ssh")).unwrap();
            std::fs::write(root.join(".env"), format!("API_TOKEN={TOKEN}\n")).unwrap();
            std::fs::write(root.join("config/server.pem"), format!("{TOKEN}\n")).unwrap();
            std::fs::write(root.join("config/secrets.yaml"), format!("t: {TOKEN}\n")).unwrap();
            std::fs::write(root.join("deploy/.ssh/id_ed25519"), format!("{TOKEN}\n")).unwrap();
            std::fs::write(root.join("app.txt"), format!("uses {TOKEN} from the env\n")).unwrap();
            std::os::unix::fs::symlink("config/server.pem", root.join("innocent.txt")).unwrap();
            (dir, ctx)
        }

        #[tokio::test]
        async fn read_refuses_a_secret_file_saying_why_and_how_to_allow_it() {
            let (_dir, ctx) = secret_project();
            for (path, shown, pattern) in [
                (".env", ".env", ".env*"),
                ("config/server.pem", "config/server.pem", "*.pem"),
                (
                    "./config/../config/secrets.yaml",
                    "config/secrets.yaml",
                    "secrets.*",
                ),
                ("deploy/.ssh/id_ed25519", "deploy/.ssh/id_ed25519", ".ssh"),
                ("innocent.txt", "config/server.pem", "*.pem"),
            ] {
                let err = run(&ReadTool, &ctx, json!({ "path": path }))
                    .await
                    .unwrap_err()
                    .to_string();
                assert!(
                    err.starts_with(&format!(
                        "`{shown}` is withheld as a secret file (it matches `{pattern}`"
                    )),
                    "{path}: {err}"
                );
                assert!(err.contains("Settings → Secret files"), "{err}");
                assert!(!err.contains(TOKEN));
            }
            let out = run(&ReadTool, &ctx, json!({"path": "app.txt"}))
                .await
                .unwrap();
            assert!(out.content.contains(TOKEN));
        }

        #[tokio::test]
        async fn an_exception_in_the_list_lets_the_main_agent_read_that_file() {
            let (_dir, mut ctx) = secret_project();
            let mut list: Vec<String> = super::super::DEFAULT_PATTERNS
                .iter()
                .map(|p| p.to_string())
                .collect();
            list.push("!.env".to_string());
            ctx.secrets = Arc::new(SecretFiles::new(&list).unwrap());
            let out = run(&ReadTool, &ctx, json!({"path": ".env"})).await.unwrap();
            assert!(out.content.contains(TOKEN));
            ctx.secrets = Arc::new(SecretFiles::for_subagents(&list));
            assert!(run(&ReadTool, &ctx, json!({"path": ".env"})).await.is_err());
        }

        #[tokio::test]
        async fn grep_and_glob_skip_secret_files() {
            let (_dir, ctx) = secret_project();
            // Hidden files are searched when named by a glob; secrets still are not.
            for args in [
                json!({"pattern": TOKEN}),
                json!({"pattern": TOKEN, "glob": "*"}),
            ] {
                let out = run(&GrepTool, &ctx, args.clone()).await.unwrap();
                assert_eq!(out.content.trim(), "app.txt", "{args}");
            }
            let out = run(&GrepTool, &ctx, json!({"pattern": TOKEN, "path": "config"}))
                .await
                .unwrap();
            assert!(out.content.starts_with("No matches"), "{}", out.content);
            let out = run(
                &GrepTool,
                &ctx,
                json!({"pattern": TOKEN, "output_mode": "content"}),
            )
            .await
            .unwrap();
            assert_eq!(out.content.matches(TOKEN).count(), 1, "{}", out.content);
            let err = run(
                &GrepTool,
                &ctx,
                json!({"pattern": TOKEN, "path": "config/server.pem"}),
            )
            .await
            .unwrap_err()
            .to_string();
            assert!(err.contains("withheld as a secret file"), "{err}");
            let err = run(
                &GlobTool,
                &ctx,
                json!({"pattern": "*", "path": "deploy/.ssh"}),
            )
            .await
            .unwrap_err()
            .to_string();
            assert!(err.contains("withheld as a secret file"), "{err}");

            let out = run(&GlobTool, &ctx, json!({"pattern": "**/*"}))
                .await
                .unwrap();
            for secret in ["server.pem", "secrets.yaml", ".env", "id_ed25519"] {
                assert!(
                    !out.content.contains(secret),
                    "{secret} listed: {}",
                    out.content
                );
            }
            assert!(out.content.contains("app.txt"), "{}", out.content);
        }
    }
}
