//! `KeyringStore` against the real OS keychain (Secret Service on Linux). Run inside a private,
//! unlocked gnome-keyring with `scripts/with-keyring.sh cargo test -p canopy-config`. Without a
//! reachable Secret Service these tests skip loudly, unless `CANOPY_REQUIRE_KEYRING` is set (CI), in
//! which case they fail. The "no keychain" and "locked keychain" tests need no running keyring: they
//! run `child_without_session_bus` in a child process whose session bus leads nowhere, or to a
//! gnome-keyring that was never unlocked.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use std::sync::Arc;

use canopy_config::keys::{keys_to_redact, known_key_origins};
use canopy_config::{
    key_status, require_api_key, resolve_api_key, IndexedStore, KeyOrigin, KeySource, KeyState,
    KeyringStore, SecretStore, Settings, KEY_INDEX_FILE,
};
use canopy_protocol::{ModelSlot, SecretString};

const CHILD_ENV: &str = "CANOPY_CONFIG_NO_BUS_CHILD";

fn no_env(_: &str) -> Option<String> {
    None
}

#[allow(clippy::unwrap_used)] // test helper: a bad URL here is a broken test
fn origin(url: &str) -> KeyOrigin {
    KeyOrigin::of(url).unwrap()
}

/// The origin of the default settings' main endpoint.
fn openai() -> KeyOrigin {
    origin(&Settings::default().main.base_url)
}

/// A store under a service name no other test (or person) uses.
fn unique_store(test: &str) -> KeyringStore {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    KeyringStore::with_service(format!("canopy-test-{test}-{}-{nanos}", std::process::id()))
}

/// The store when a Secret Service answers; otherwise skip (or fail when it is required).
fn keychain_or_skip(test: &str) -> Option<KeyringStore> {
    let store = unique_store(test);
    match store.get(ModelSlot::Main, &openai()) {
        Ok(_) => Some(store),
        Err(e) => {
            let required = std::env::var("CANOPY_REQUIRE_KEYRING")
                .map(|v| !v.is_empty() && v != "0")
                .unwrap_or(false);
            assert!(
                !required,
                "CANOPY_REQUIRE_KEYRING is set but the keychain is not usable: {e}"
            );
            loud(&format!(
                "\n*** SKIPPED {test}: no usable Secret Service ({e}).\n*** Run: scripts/with-keyring.sh cargo test -p canopy-config\n"
            ));
            None
        }
    }
}

/// Writes past the test harness's output capture (which only catches `print!`/`eprint!`), so a
/// skipped keychain test is visible in a normal `cargo test` run.
fn loud(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// What `secret-tool` (libsecret, a separate client) sees, proving the key is in the real Secret
/// Service and not in some in-process store. `None` when secret-tool is not installed.
fn secret_tool_lookup(service: &str, user: &str) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", service, "username", user])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn set_get_replace_delete_round_trip() {
    let Some(store) = keychain_or_skip("roundtrip") else {
        return;
    };
    let o = openai();
    assert!(store.get(ModelSlot::Main, &o).unwrap().is_none());

    store
        .set(ModelSlot::Main, &o, &SecretString::new("sk-first-1234"))
        .unwrap();
    assert_eq!(
        store.get(ModelSlot::Main, &o).unwrap().unwrap().expose(),
        "sk-first-1234"
    );
    // The documented account name, seen by another Secret Service client.
    if let Some(seen) = secret_tool_lookup(store.service(), "main@https://api.openai.com") {
        assert_eq!(
            seen.trim(),
            "sk-first-1234",
            "secret-tool sees another value"
        );
    }

    store
        .set(ModelSlot::Main, &o, &SecretString::new("sk-second-5678"))
        .unwrap();
    assert_eq!(
        store.get(ModelSlot::Main, &o).unwrap().unwrap().expose(),
        "sk-second-5678"
    );
    // Light is a separate entry.
    assert!(store.get(ModelSlot::Light, &o).unwrap().is_none());

    // A second store object (as after an app restart) reads the same entry.
    let again = KeyringStore::with_service(store.service());
    assert_eq!(
        again.get(ModelSlot::Main, &o).unwrap().unwrap().expose(),
        "sk-second-5678"
    );

    store.delete(ModelSlot::Main, &o).unwrap();
    assert!(store.get(ModelSlot::Main, &o).unwrap().is_none());
    if let Some(seen) = secret_tool_lookup(store.service(), "main@https://api.openai.com") {
        assert_eq!(
            seen.trim(),
            "",
            "entry still visible to secret-tool after delete"
        );
    }
    // Deleting what is not there is fine (the settings screen's "remove" is idempotent).
    store.delete(ModelSlot::Main, &o).unwrap();
}

#[test]
fn a_stored_key_is_bound_to_its_origin() {
    let Some(store) = keychain_or_skip("origin") else {
        return;
    };
    let a = "http://127.0.0.1:4101/v1";
    let b = "https://models.example.com/v1";
    let mut settings = Settings::default();
    settings.main.base_url = a.to_string();
    store
        .set(
            ModelSlot::Main,
            &origin(a),
            &SecretString::new("sk-for-origin-a"),
        )
        .unwrap();
    let key = require_api_key(&settings, ModelSlot::Main, &no_env, &store).unwrap();
    assert_eq!(key.unwrap().expose(), "sk-for-origin-a");

    // The slot now points at origin B: no key is returned for it, and the status says where one is.
    settings.main.base_url = b.to_string();
    let err = require_api_key(&settings, ModelSlot::Main, &no_env, &store).unwrap_err();
    assert!(
        err.to_string().contains("No API key for the main model"),
        "{err}"
    );
    assert!(store.get(ModelSlot::Main, &origin(b)).unwrap().is_none());
    let status = key_status(ModelSlot::Main, &origin(b), &[origin(a)], &no_env, &store);
    assert_eq!(status.state, KeyState::Absent);
    assert_eq!(status.origin, "models.example.com");
    assert_eq!(status.stored_for, vec!["127.0.0.1:4101".to_string()]);
    // Another port on the same host is another origin too.
    settings.main.base_url = "http://127.0.0.1:4102/v1".to_string();
    assert_eq!(
        require_api_key(&settings, ModelSlot::Main, &no_env, &store).unwrap(),
        None
    );

    // Back at A, the key is there again; a fresh store object (an app restart) agrees.
    settings.main.base_url = a.to_string();
    let again = KeyringStore::with_service(store.service());
    let key = require_api_key(&settings, ModelSlot::Main, &no_env, &again).unwrap();
    assert_eq!(key.unwrap().expose(), "sk-for-origin-a");

    // An entry of an older version (account `main`, no origin) is never read.
    if let Some(seen) = secret_tool_lookup(store.service(), "main") {
        assert_eq!(seen.trim(), "", "an origin-less entry exists");
    }
    store.delete(ModelSlot::Main, &origin(a)).unwrap();
}

#[test]
fn status_and_resolution_read_the_real_keychain() {
    let Some(store) = keychain_or_skip("status") else {
        return;
    };
    let o = openai();
    let status = key_status(ModelSlot::Light, &o, &[], &no_env, &store);
    assert_eq!(status.state, KeyState::Absent);

    store
        .set(
            ModelSlot::Light,
            &o,
            &SecretString::new("  sk-light-pasted \n"),
        )
        .unwrap();
    let status = key_status(ModelSlot::Light, &o, &[], &no_env, &store);
    assert_eq!(status.state, KeyState::Present);
    assert_eq!(status.source, Some(KeySource::Keychain));
    let resolved = resolve_api_key(ModelSlot::Light, &o, &no_env, &store).unwrap();
    assert_eq!(resolved.key.unwrap().expose(), "sk-light-pasted");

    // A configured light slot uses its own key; without one, light falls back to main's (absent).
    let mut settings = Settings::default();
    settings.light = Some(settings.main.clone());
    let key = require_api_key(&settings, ModelSlot::Light, &no_env, &store).unwrap();
    assert_eq!(key.unwrap().expose(), "sk-light-pasted");
    let err = require_api_key(&Settings::default(), ModelSlot::Light, &no_env, &store)
        .unwrap_err()
        .to_string();
    assert!(err.contains("CANOPY_MAIN_API_KEY"), "{err}");

    store.delete(ModelSlot::Light, &o).unwrap();
}

#[test]
fn the_key_index_finds_a_real_keychain_key_for_an_endpoint_no_longer_configured() {
    let Some(keychain) = keychain_or_skip("index") else {
        return;
    };
    let config = tempfile::tempdir().unwrap();
    let store = IndexedStore::new(Arc::new(keychain.clone()), config.path());
    let custom = origin("https://llm.corp.example:8443/v1");
    store
        .set(
            ModelSlot::Main,
            &custom,
            &SecretString::new("corpkey-0123456789abcdef"),
        )
        .unwrap();
    let index = std::fs::read_to_string(config.path().join(KEY_INDEX_FILE)).unwrap();
    assert!(
        index.contains("main@https://llm.corp.example:8443"),
        "{index}"
    );
    assert!(!index.contains("corpkey"), "{index}");
    // The key is in the real Secret Service under the account the index names.
    if let Some(seen) = secret_tool_lookup(keychain.service(), "main@https://llm.corp.example:8443")
    {
        assert_eq!(seen.trim(), "corpkey-0123456789abcdef");
    }

    // The slot is back on the default endpoint, so the custom URL is in no candidate list.
    let candidates = known_key_origins([&Settings::default()]);
    assert!(!candidates.contains(&custom));
    let keys = keys_to_redact(&candidates, &no_env, &store);
    let exposed: Vec<&str> = keys.iter().map(SecretString::expose).collect();
    assert_eq!(exposed, ["corpkey-0123456789abcdef"]);
    let status = key_status(ModelSlot::Main, &openai(), &candidates, &no_env, &store);
    assert_eq!(status.stored_for, ["llm.corp.example:8443"]);

    store.delete(ModelSlot::Main, &custom).unwrap();
    assert!(keychain.get(ModelSlot::Main, &custom).unwrap().is_none());
    let index = std::fs::read_to_string(config.path().join(KEY_INDEX_FILE)).unwrap();
    assert!(!index.contains("llm.corp.example"), "{index}");
    assert!(keys_to_redact(&candidates, &no_env, &store).is_empty());
}

#[test]
fn empty_key_is_refused_before_reaching_the_keychain() {
    let store = unique_store("empty");
    let err = store
        .set(ModelSlot::Main, &openai(), &SecretString::new("   "))
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid API key: it is empty");
}

/// Runs in a child process only, where the keychain cannot be used (no bus, or locked).
#[test]
#[ignore = "run in a child process by the no-bus and locked-keychain tests"]
fn child_without_session_bus() {
    assert!(
        std::env::var_os(CHILD_ENV).is_some(),
        "only meaningful when started by the parent test"
    );
    let store = unique_store("nobus");
    let err = store.get(ModelSlot::Main, &openai()).unwrap_err();
    let reason = match &err {
        canopy_config::KeyError::Unavailable(reason) => reason.clone(),
        other => panic!("expected Unavailable, got {other:?}"),
    };
    let status = key_status(ModelSlot::Main, &openai(), &[], &no_env, &store);
    assert_eq!(status.state, KeyState::Unavailable);
    assert_eq!(status.reason.as_deref(), Some(reason.as_str()));
    assert!(store
        .set(
            ModelSlot::Main,
            &openai(),
            &SecretString::new("sk-never-stored")
        )
        .is_err());
    // The environment variable still provides a key.
    let env = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "sk-env".to_string());
    let status = key_status(ModelSlot::Main, &openai(), &[], &env, &store);
    assert_eq!(status.state, KeyState::Present);
    // Own lines: the test harness prints "test … ..." without a newline before the output.
    println!("\nUNAVAILABLE_REASON={reason}");
    println!("DISPLAYED={err}");
}

#[test]
fn no_secret_service_means_unavailable_with_a_reason() {
    let scratch = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    // Two ways of having no keychain: an address that leads nowhere, and no address at all
    // (libdbus then tries $XDG_RUNTIME_DIR/bus and X11 autolaunch, both absent here).
    let cases: [(&str, Option<String>); 2] = [
        (
            "dead address",
            Some(format!(
                "unix:path={}",
                scratch.path().join("no-bus").display()
            )),
        ),
        ("no address", None),
    ];
    for (case, address) in cases {
        let mut cmd = Command::new(&exe);
        cmd.args([
            "--exact",
            "child_without_session_bus",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env("XDG_RUNTIME_DIR", scratch.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
        match &address {
            Some(a) => cmd.env("DBUS_SESSION_BUS_ADDRESS", a),
            None => cmd.env_remove("DBUS_SESSION_BUS_ADDRESS"),
        };
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{case}: child failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(
            stdout.contains("1 passed"),
            "{case}: child test did not run\n{stdout}"
        );
        let reason = stdout
            .lines()
            .find_map(|l| l.split_once("UNAVAILABLE_REASON=").map(|(_, r)| r))
            .unwrap_or_else(|| panic!("{case}: no reason printed\n{stdout}"));
        assert!(
            reason.starts_with("no Secret Service is reachable on the D-Bus session bus"),
            "{case}: reason not plain enough: {reason}"
        );
        assert!(
            reason.contains("environment variable"),
            "{case}: reason should say how to proceed: {reason}"
        );
        let displayed = stdout
            .lines()
            .find_map(|l| l.split_once("DISPLAYED=").map(|(_, r)| r))
            .unwrap_or_default();
        assert!(
            displayed.starts_with("the OS keychain is unavailable: "),
            "{case}: {displayed}"
        );
        assert!(!stdout.contains("sk-never-stored"), "{case}: key leaked");
    }
}

/// A Secret Service whose keychain was never unlocked (no login keyring yet, nobody to type a
/// password): calls must fail fast with a reason, not hang waiting for a prompt.
#[test]
fn locked_keychain_means_unavailable_without_hanging() {
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !(have("dbus-run-session") && have("gnome-keyring-daemon")) {
        let required =
            std::env::var("CANOPY_REQUIRE_KEYRING").is_ok_and(|v| !v.is_empty() && v != "0");
        assert!(
            !required,
            "CANOPY_REQUIRE_KEYRING is set but dbus-run-session or gnome-keyring-daemon is missing"
        );
        loud("\n*** SKIPPED locked keychain test: dbus-run-session or gnome-keyring-daemon not installed\n");
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("home");
    let runtime = scratch.path().join("runtime");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&runtime).unwrap();
    let exe = std::env::current_exe().unwrap();
    // `timeout` turns a hang (an unlock prompt nobody can answer) into a failure.
    let script = "gnome-keyring-daemon --start --components=secrets >/dev/null 2>&1; \
                  exec timeout 60 \"$0\" --exact child_without_session_bus --ignored --nocapture --test-threads=1";
    let out = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", script])
        .arg(&exe)
        .env(CHILD_ENV, "1")
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let reason = stdout
        .lines()
        .find_map(|l| l.split_once("UNAVAILABLE_REASON=").map(|(_, r)| r))
        .unwrap_or_default();
    assert!(
        reason.starts_with("the keychain is locked or access was refused"),
        "reason: {reason}"
    );
    assert!(reason.contains("unlock it"), "reason: {reason}");
}
