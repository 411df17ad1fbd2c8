//! Projects and files through the command layer: opening folders, the recent list, and the file
//! viewer's confinement and refusals.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{project, TestApp};
use serde_json::{json, Value};

#[test]
fn no_project_until_one_is_opened_then_it_is_current_and_recent() {
    let t = TestApp::new();
    assert_eq!(t.ok("current_project", json!({})), json!(null));
    assert_eq!(
        t.err("read_project_file", json!({"path": "src/main.rs"})).0,
        "no_project"
    );

    let dir = project(t.dirs.path());
    let info = t.ok("open_project", json!({"path": dir.join("src/..")}));
    assert_eq!(info["root"], json!(dir.display().to_string()));
    assert_eq!(info["name"], json!("proj"));
    assert_eq!(t.ok("current_project", json!({}))["root"], info["root"]);

    let other = t.dirs.path().join("other");
    std::fs::create_dir(&other).unwrap();
    t.ok("open_project", json!({"path": other}));
    let recent = t.ok("list_recent_projects", json!({}));
    let names: Vec<&str> = recent
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["other", "proj"], "newest first: {recent}");
    assert!(t.data_dir().join("recent-projects.json").is_file());

    t.ok("forget_project", json!({"path": dir}));
    let recent = t.ok("list_recent_projects", json!({}));
    assert_eq!(recent.as_array().unwrap().len(), 1, "{recent}");
    assert_eq!(recent[0]["name"], json!("other"));
}

#[test]
fn opening_a_missing_folder_or_a_file_is_refused_with_a_reason() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    let (code, message) = t.err("open_project", json!({"path": dir.join("nope")}));
    assert_eq!(code, "not_found");
    assert!(message.contains("nope"), "{message}");
    let (code, message) = t.err("open_project", json!({"path": dir.join("src/main.rs")}));
    assert_eq!(code, "not_a_directory");
    assert!(message.contains("main.rs"), "{message}");
    assert_eq!(
        t.err("open_project", json!({"path": " "})).0,
        "invalid_argument"
    );
    assert_eq!(t.ok("current_project", json!({})), json!(null));
}

#[test]
fn reads_a_window_of_lines_with_a_language() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    t.ok("open_project", json!({"path": dir}));

    let all = t.ok("read_project_file", json!({"path": "src/main.rs"}));
    assert_eq!(all["path"], json!("src/main.rs"));
    assert_eq!(all["total_lines"], json!(5));
    assert_eq!(all["start_line"], json!(1));
    assert_eq!(all["lines"][4], json!("// end"));
    assert_eq!(all["language"], json!("rust"));

    let window = t.ok(
        "read_project_file",
        json!({"path": dir.join("src/main.rs"), "startLine": 2, "endLine": 3}),
    );
    assert_eq!(
        window["lines"],
        json!(["    let x = 1;", "    println!(\"{x}\");"])
    );
    assert_eq!(window["start_line"], json!(2));
    // An end past the file is clamped rather than refused.
    let tail = t.ok(
        "read_project_file",
        json!({"path": "src/main.rs", "startLine": 4, "endLine": 99}),
    );
    assert_eq!(tail["lines"], json!(["}", "// end"]));

    let (code, message) = t.err(
        "read_project_file",
        json!({"path": "src/main.rs", "startLine": 9}),
    );
    assert_eq!(code, "invalid_argument");
    assert!(message.contains("5 lines"), "{message}");
    assert_eq!(
        t.err(
            "read_project_file",
            json!({"path": "src/main.rs", "startLine": 3, "endLine": 2})
        )
        .0,
        "invalid_argument"
    );
    assert_eq!(
        t.err("read_project_file", json!({"path": "src/missing.rs"}))
            .0,
        "not_found"
    );
    assert_eq!(
        t.err("read_project_file", json!({"path": "src"})).0,
        "invalid_argument"
    );
}

#[test]
fn paths_outside_the_project_are_refused_including_through_symlinks() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    let secret = t.dirs.path().join("secret.txt");
    std::fs::write(&secret, "password\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(t.dirs.path(), dir.join("up")).unwrap();
    t.ok("open_project", json!({"path": dir}));

    for path in [
        json!("../secret.txt"),
        json!("src/../../secret.txt"),
        json!(secret),
        json!("link.txt"),
        json!("up/secret.txt"),
        json!("/etc/hostname"),
    ] {
        let (code, message) = t.err("read_project_file", json!({ "path": path }));
        assert_eq!(code, "outside_project", "{path}: {message}");
        assert!(!message.contains("password"));
    }
    // The same confinement guards the desktop hand-offs.
    assert_eq!(
        t.err("reveal_file", json!({"path": "../secret.txt"})).0,
        "outside_project"
    );
    assert_eq!(
        t.err("open_in_editor", json!({"path": "link.txt"})).0,
        "outside_project"
    );
    // A symlink that stays inside is fine.
    std::os::unix::fs::symlink(dir.join("src/main.rs"), dir.join("inside.rs")).unwrap();
    assert_eq!(
        t.ok("read_project_file", json!({"path": "inside.rs"}))["total_lines"],
        json!(5)
    );
}

#[test]
fn binary_and_huge_files_are_refused() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend(std::iter::repeat_n(b'a', 100));
    std::fs::write(dir.join("logo.png"), png).unwrap();
    let big = std::fs::File::create(dir.join("big.log")).unwrap();
    big.set_len(canopy_app::commands::files::MAX_FILE_BYTES + 1)
        .unwrap();
    t.ok("open_project", json!({"path": dir}));

    let (code, message) = t.err("read_project_file", json!({"path": "logo.png"}));
    assert_eq!(code, "binary_file");
    assert!(message.contains("logo.png"), "{message}");
    assert_eq!(
        t.err("read_project_file", json!({"path": "big.log"})).0,
        "file_too_large"
    );
}

#[test]
fn command_line_folder_is_current_and_a_bad_one_becomes_a_warning() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    let state = tauri::Manager::state::<canopy_app::AppState>(&t.app);
    canopy_app::open_initial_project(&state, &["canopy".into(), dir.display().to_string()]);
    assert_eq!(t.ok("current_project", json!({}))["name"], json!("proj"));

    let t = TestApp::new();
    let state = tauri::Manager::state::<canopy_app::AppState>(&t.app);
    canopy_app::open_initial_project(&state, &["canopy".into(), "/no/such/folder".into()]);
    assert_eq!(t.ok("current_project", json!({})), json!(null));
    let warnings = t.ok("startup_warnings", json!({}));
    assert!(
        warnings[0].as_str().unwrap().contains("/no/such/folder"),
        "{warnings}"
    );
}

#[test]
fn project_profiles_say_which_were_rejected_and_which_run_with_lowered_budgets() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    let agents = dir.join(".canopy/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("greedy.md"),
        "---\nname: greedy\ndescription: reads everything\nmax_steps: 500\n---\nSearch everything.\n",
    )
    .unwrap();
    std::fs::write(agents.join("broken.md"), "no front matter here\n").unwrap();
    let info = t.ok("open_project", json!({"path": dir}));

    let greedy = info["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "greedy")
        .unwrap_or_else(|| panic!("greedy is in use: {info}"));
    assert_eq!(
        greedy["budgets"]["max_steps"],
        json!(60),
        "lowered to the main agent's"
    );
    let errors = info["profile_errors"].as_array().unwrap();
    let about = |file: &str| {
        errors
            .iter()
            .find(|e| e["path"].as_str().unwrap().ends_with(file))
            .unwrap_or_else(|| panic!("{file} in {errors:?}"))
    };
    assert_eq!(about("greedy.md")["loaded"], json!(true));
    assert!(about("greedy.md")["reason"]
        .as_str()
        .unwrap()
        .contains("max_steps 500 -> 60"));
    assert_eq!(about("broken.md")["loaded"], json!(false));
    assert!(about("broken.md")["reason"]
        .as_str()
        .unwrap()
        .contains("front matter"));
}

#[test]
fn a_projects_own_profiles_wait_for_the_persons_answer_which_is_kept_per_digest() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    let plain = t.ok("open_project", json!({"path": dir}));
    assert_eq!(plain["profiles_trust"], json!("no_profiles"));
    assert_eq!(plain["profiles_digest"], Value::Null);

    let agents = dir.join(".canopy/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("docs.md"),
        "---\nname: docs\ndescription: Reads docs\ntools: Read\n---\nYou read the docs only.\n",
    )
    .unwrap();
    let info = t.ok("open_project", json!({"path": dir}));
    assert_eq!(info["profiles_trust"], json!("ask"));
    let digest = info["profiles_digest"].as_str().unwrap().to_string();
    let docs = info["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "docs")
        .unwrap();
    // What the person is shown before answering: the prompt too, not only the description.
    assert_eq!(docs["system_prompt"], json!("You read the docs only."));

    let (code, message) = t.err(
        "answer_project_profiles",
        json!({"digest": "0000", "trusted": true}),
    );
    assert_eq!(code, "invalid_argument");
    assert!(
        message.contains("changed since they were shown"),
        "{message}"
    );

    let answered = t.ok(
        "answer_project_profiles",
        json!({"digest": digest, "trusted": true}),
    );
    assert_eq!(answered["profiles_trust"], json!("trusted"));
    // Kept across opening the project again (and in the file the CLI reads too).
    let again = t.ok("open_project", json!({"path": dir}));
    assert_eq!(again["profiles_trust"], json!("trusted"));
    assert!(t.config_dir().join("trusted-profiles.json").exists());

    // A changed profile is new text: asked again.
    std::fs::write(
        agents.join("docs.md"),
        "---\nname: docs\ndescription: Reads docs\ntools: Read\n---\nSomething else now.\n",
    )
    .unwrap();
    let changed = t.ok("open_project", json!({"path": dir}));
    assert_eq!(changed["profiles_trust"], json!("ask"));
    let declined = t.ok(
        "answer_project_profiles",
        json!({"digest": changed["profiles_digest"], "trusted": false}),
    );
    assert_eq!(declined["profiles_trust"], json!("declined"));
}
