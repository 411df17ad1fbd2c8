//! Helpers shared by the command tests: an app on Tauri's mock runtime with its own folders and key
//! store, and an `invoke` that goes through the real IPC path (argument parsing, serialisation).

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use canopy_app::{AppSetup, AppState};
use canopy_config::{MemoryStore, SecretStore};
use serde_json::Value;
use tauri::ipc::{CallbackFn, InvokeBody, InvokeResponseBody};
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

/// Batches the app sent over channels, by channel id, in arrival order.
pub type ChannelLog = Arc<Mutex<Vec<(u32, Value)>>>;

pub struct TestApp {
    pub app: App<MockRuntime>,
    pub window: WebviewWindow<MockRuntime>,
    pub dirs: tempfile::TempDir,
    pub channels: ChannelLog,
}

pub struct Options {
    pub env: HashMap<String, String>,
    pub secrets: Arc<dyn SecretStore>,
    pub ollama_base_url: String,
    pub dirs: Option<tempfile::TempDir>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            env: HashMap::new(),
            secrets: Arc::new(MemoryStore::new()),
            // Port 9 (discard) on loopback: nothing listens there in tests.
            ollama_base_url: "http://127.0.0.1:9/v1".into(),
            dirs: None,
        }
    }
}

impl TestApp {
    pub fn new() -> Self {
        TestApp::with(Options::default())
    }

    pub fn with(options: Options) -> Self {
        let dirs = options.dirs.unwrap_or_else(|| tempfile::tempdir().unwrap());
        let env = options.env;
        let setup = AppSetup {
            config_dir: dirs.path().join("config"),
            data_dir: dirs.path().join("data"),
            env: Arc::new(move |k: &str| env.get(k).cloned()),
            secrets: options.secrets,
            ollama_base_url: options.ollama_base_url,
        };
        let channels: ChannelLog = Arc::default();
        let log = channels.clone();
        let builder =
            mock_builder().channel_interceptor(move |_webview, callback, _index, body| {
                let value = match body {
                    InvokeResponseBody::Json(json) => serde_json::from_str(json).unwrap(),
                    InvokeResponseBody::Raw(_) => panic!("channels carry JSON"),
                };
                log.lock().unwrap().push((callback.0, value));
                true
            });
        let app = canopy_app::setup(builder, AppState::new(setup))
            .build(mock_context(noop_assets()))
            .unwrap();
        let window = WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .unwrap();
        TestApp {
            app,
            window,
            dirs,
            channels,
        }
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dirs.path().join("config")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dirs.path().join("data")
    }

    /// Calls a command as the webview would; `Ok` is the returned value, `Err` the `CommandError`.
    pub fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        tauri::test::get_ipc_response(
            &self.window,
            InvokeRequest {
                cmd: cmd.into(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: InvokeBody::Json(args),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|body| match body {
            InvokeResponseBody::Json(json) => serde_json::from_str(&json).unwrap(),
            InvokeResponseBody::Raw(_) => panic!("commands return JSON"),
        })
    }

    pub fn ok(&self, cmd: &str, args: Value) -> Value {
        self.invoke(cmd, args)
            .unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
    }

    /// The error code and message of a failing command.
    pub fn err(&self, cmd: &str, args: Value) -> (String, String) {
        let e = self
            .invoke(cmd, args)
            .err()
            .unwrap_or_else(|| panic!("{cmd} unexpectedly succeeded"));
        (
            e["code"]
                .as_str()
                .unwrap_or_else(|| panic!("no code in {e}"))
                .to_string(),
            e["message"].as_str().unwrap().to_string(),
        )
    }
}

/// A project folder with a few files.
pub fn project(root: &Path) -> PathBuf {
    let dir = root.join("proj");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n// end\n",
    )
    .unwrap();
    dir.canonicalize().unwrap()
}
