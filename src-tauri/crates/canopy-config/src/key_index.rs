//! The key index: a small, non-secret file (`keys.json`, next to `settings.json`) listing the
//! keychain accounts Canopy stored keys under, e.g. `main@https://api.openai.com`. Redaction and the
//! key status read exactly the entries it lists instead of probing every endpoint they can think
//! of: a run start then touches the keychain once per stored key (usually one to three, each a
//! D-Bus round trip and, with a locked keychain, maybe an unlock prompt) rather than for both slots
//! at every preset and configured endpoint, and a key entered for a custom URL that is no longer in
//! the settings is still found.
//!
//! [`IndexedStore`] wraps any [`SecretStore`] (the OS keychain in the app and the CLI, an in-memory
//! store in tests) and keeps the index up to date: `set` adds the account *before* storing the key
//! (an entry without a key costs one read; a key without an entry would never be redacted),
//! `delete` removes it after. Keys stored before the index existed are not listed, so the index
//! starts out not complete ([`StoredKeys::complete`]) and callers also probe the candidate origins
//! (presets and settings) until one such probe has read them all without a keychain error.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use canopy_protocol::{ModelSlot, SecretString};
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, KeyError};
use crate::keys::{clean_key, KeyOrigin, SecretStore, StoredKeys};
use crate::store::write_atomically;

/// The index's file name in the config directory.
pub const KEY_INDEX_FILE: &str = "keys.json";

const INDEX_VERSION: u32 = 1;

/// The file's contents. Only account names: never a key.
#[derive(Debug, Default, Serialize, Deserialize)]
struct IndexFile {
    version: u32,
    /// True once keys stored before the index existed were looked for and added.
    complete: bool,
    /// `<slot>@<origin>` accounts, sorted.
    accounts: BTreeSet<String>,
}

/// The account `main@https://api.openai.com` as slot and origin; `None` when it is not one Canopy
/// writes (a hand-edited file).
fn parse_account(account: &str) -> Option<(ModelSlot, KeyOrigin)> {
    let (slot, written) = account.split_once('@')?;
    let slot = match slot {
        "main" => ModelSlot::Main,
        "light" => ModelSlot::Light,
        _ => return None,
    };
    let origin = KeyOrigin::of(written).ok()?;
    // Only the exact form `KeyOrigin::account` writes: anything else was not written by Canopy.
    (origin.as_str() == written).then_some((slot, origin))
}

/// A [`SecretStore`] that keeps the key index of its entries in a file (see the module docs).
pub struct IndexedStore {
    inner: Arc<dyn SecretStore>,
    path: PathBuf,
    // Serialises this process's read-modify-write of the file, so a run's probe result and a key
    // being stored at the same moment do not drop each other's entries.
    writing: Mutex<()>,
}

impl fmt::Debug for IndexedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexedStore")
            .field("index", &self.path)
            .finish_non_exhaustive()
    }
}

impl IndexedStore {
    /// `inner` with its index at `<config_dir>/keys.json`.
    pub fn new(inner: Arc<dyn SecretStore>, config_dir: &Path) -> Self {
        IndexedStore {
            inner,
            path: config_dir.join(KEY_INDEX_FILE),
            writing: Mutex::new(()),
        }
    }

    /// Where the index is kept.
    pub fn index_path(&self) -> &Path {
        &self.path
    }

    /// The file as stored; `None` when it is missing, unreadable or not an index of this version.
    fn load(&self) -> Option<IndexFile> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "the key index cannot be read; looking for keys at the known endpoints instead");
                return None;
            }
        };
        match serde_json::from_str::<IndexFile>(&text) {
            Ok(file) if file.version == INDEX_VERSION => Some(file),
            Ok(file) => {
                tracing::warn!(path = %self.path.display(), version = file.version, "the key index has an unknown version; looking for keys at the known endpoints instead");
                None
            }
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "the key index is not valid; looking for keys at the known endpoints instead");
                None
            }
        }
    }

    /// Applies `change` to the stored file (a fresh, not complete one when it is missing or
    /// unusable) and writes it back when it changed: a temporary file renamed over the old one, so
    /// a crash leaves either version, never half of one.
    fn update(&self, change: impl FnOnce(&mut IndexFile)) -> Result<(), ConfigError> {
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let before = self.load();
        let mut file = before.as_ref().map_or_else(
            || IndexFile {
                version: INDEX_VERSION,
                ..IndexFile::default()
            },
            |f| IndexFile {
                version: INDEX_VERSION,
                complete: f.complete,
                accounts: f.accounts.clone(),
            },
        );
        change(&mut file);
        if before
            .as_ref()
            .is_some_and(|b| b.complete == file.complete && b.accounts == file.accounts)
        {
            return Ok(());
        }
        let json = serde_json::to_string_pretty(&file)?;
        write_atomically(&self.path, &json)
    }
}

impl SecretStore for IndexedStore {
    fn get(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<Option<SecretString>, KeyError> {
        self.inner.get(slot, origin)
    }

    fn set(&self, slot: ModelSlot, origin: &KeyOrigin, key: &SecretString) -> Result<(), KeyError> {
        // A key that would be refused must not leave an entry behind.
        let key = clean_key(key)?;
        let account = origin.account(slot);
        let mut added = false;
        self.update(|file| added = file.accounts.insert(account.clone()))?;
        if let Err(e) = self.inner.set(slot, origin, &key) {
            if added {
                // Nothing was stored, so the entry only costs a read; failing to drop it is harmless.
                let _ = self.update(|file| {
                    file.accounts.remove(&account);
                });
            }
            return Err(e);
        }
        Ok(())
    }

    fn delete(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<(), KeyError> {
        self.inner.delete(slot, origin)?;
        let account = origin.account(slot);
        // The key is gone; an entry left behind only costs a read, so this is not the person's
        // problem.
        if let Err(e) = self.update(|file| {
            file.accounts.remove(&account);
        }) {
            tracing::warn!(account = %account, error = %e, "the key was removed but the key index could not be updated");
        }
        Ok(())
    }

    fn stored_keys(&self) -> StoredKeys {
        let Some(file) = self.load() else {
            return StoredKeys::default();
        };
        let mut complete = file.complete;
        let mut accounts = Vec::with_capacity(file.accounts.len());
        for account in &file.accounts {
            match parse_account(account) {
                Some(entry) => accounts.push(entry),
                // An entry the app never writes: the file was edited, so it no longer vouches for
                // being complete.
                None => complete = false,
            }
        }
        StoredKeys { accounts, complete }
    }

    fn probed_all(&self, found: &[(ModelSlot, KeyOrigin)]) {
        let result = self.update(|file| {
            file.accounts
                .extend(found.iter().map(|(slot, origin)| origin.account(*slot)));
            file.complete = true;
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, "the key index could not be written; keys will be looked for at every known endpoint again next time");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;
    use crate::keys::{key_status, keys_to_redact, known_key_origins, KeyState, MemoryStore};
    use crate::settings::Settings;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn origin(url: &str) -> KeyOrigin {
        KeyOrigin::of(url).unwrap()
    }

    /// A working in-memory keychain that counts reads and can be made to fail them, as a locked
    /// keychain whose unlock prompt was dismissed does.
    #[derive(Default)]
    struct CountingStore {
        keys: MemoryStore,
        gets: AtomicUsize,
        fail_gets: AtomicBool,
    }

    impl SecretStore for CountingStore {
        fn get(
            &self,
            slot: ModelSlot,
            origin: &KeyOrigin,
        ) -> Result<Option<SecretString>, KeyError> {
            self.gets.fetch_add(1, Ordering::SeqCst);
            if self.fail_gets.load(Ordering::SeqCst) {
                return Err(ConfigError::Unavailable("the keychain is locked".into()));
            }
            self.keys.get(slot, origin)
        }
        fn set(
            &self,
            slot: ModelSlot,
            origin: &KeyOrigin,
            key: &SecretString,
        ) -> Result<(), KeyError> {
            self.keys.set(slot, origin, key)
        }
        fn delete(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<(), KeyError> {
            self.keys.delete(slot, origin)
        }
    }

    fn indexed(dir: &Path) -> (Arc<CountingStore>, IndexedStore) {
        let inner = Arc::new(CountingStore::default());
        let store = IndexedStore::new(inner.clone(), dir);
        (inner, store)
    }

    fn index_json(dir: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(KEY_INDEX_FILE)).unwrap()).unwrap()
    }

    fn exposed(keys: &[SecretString]) -> Vec<String> {
        let mut out: Vec<String> = keys.iter().map(|k| k.expose().to_string()).collect();
        out.sort();
        out
    }

    #[test]
    fn set_and_delete_write_the_index_and_it_never_holds_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let (_inner, store) = indexed(dir.path());
        assert!(!dir.path().join(KEY_INDEX_FILE).exists());
        store
            .set(
                ModelSlot::Main,
                &origin("https://api.openai.com/v1"),
                &SecretString::new("sk-indexsecret-1"),
            )
            .unwrap();
        store
            .set(
                ModelSlot::Light,
                &origin("http://127.0.0.1:4000/v1"),
                &SecretString::new("sk-indexsecret-2"),
            )
            .unwrap();
        let json = index_json(dir.path());
        assert_eq!(
            json["accounts"],
            serde_json::json!(["light@http://127.0.0.1:4000", "main@https://api.openai.com"])
        );
        // Created by `set`, not by a probe: keys from before the index may still exist.
        assert_eq!(json["complete"], false);
        let text = std::fs::read_to_string(store.index_path()).unwrap();
        assert!(!text.contains("indexsecret"), "{text}");
        // No temporary files are left next to it.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);

        store
            .delete(ModelSlot::Main, &origin("https://api.openai.com"))
            .unwrap();
        assert_eq!(
            index_json(dir.path())["accounts"],
            serde_json::json!(["light@http://127.0.0.1:4000"])
        );
        assert!(store
            .get(ModelSlot::Main, &origin("https://api.openai.com"))
            .unwrap()
            .is_none());

        // A refused key leaves no entry; nor does one the keychain refuses to store.
        let err = store
            .set(
                ModelSlot::Main,
                &origin("https://api.anthropic.com"),
                &SecretString::new("  "),
            )
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid API key: it is empty");
        let broken = IndexedStore::new(Arc::new(MemoryStore::unavailable("no bus")), dir.path());
        assert!(broken
            .set(
                ModelSlot::Main,
                &origin("https://api.anthropic.com"),
                &SecretString::new("k"),
            )
            .is_err());
        assert_eq!(
            index_json(dir.path())["accounts"],
            serde_json::json!(["light@http://127.0.0.1:4000"])
        );
        assert!(!format!("{store:?}").contains("indexsecret"));
    }

    #[test]
    fn a_key_for_a_custom_endpoint_stays_redacted_after_the_slot_moves_away() {
        let dir = tempfile::tempdir().unwrap();
        let (inner, store) = indexed(dir.path());
        const CUSTOM: &str = "customendpointkey0123456789";
        store
            .set(
                ModelSlot::Main,
                &origin("https://llm.corp.example:8443/v1"),
                &SecretString::new(CUSTOM),
            )
            .unwrap();
        // The slot now points at OpenAI; the custom URL is neither a preset nor in the settings.
        let settings = Settings::default();
        let candidates = known_key_origins([&settings]);
        assert!(!candidates.contains(&origin("https://llm.corp.example:8443")));

        let keys = keys_to_redact(&candidates, &no_env, &store);
        assert_eq!(exposed(&keys), [CUSTOM]);
        // That first run also looked at the candidates (keys from before the index), found
        // nothing else, and marked the index complete: the next run reads only the one entry.
        assert_eq!(index_json(dir.path())["complete"], true);
        inner.gets.store(0, Ordering::SeqCst);
        let keys = keys_to_redact(&candidates, &no_env, &store);
        assert_eq!(exposed(&keys), [CUSTOM]);
        assert_eq!(inner.gets.load(Ordering::SeqCst), 1);

        // The settings screen names it too.
        let status = key_status(
            ModelSlot::Main,
            &origin("https://api.openai.com"),
            &candidates,
            &no_env,
            &store,
        );
        assert_eq!(status.state, KeyState::Absent);
        assert_eq!(status.stored_for, ["llm.corp.example:8443"]);
        // Light never had one there.
        let status = key_status(
            ModelSlot::Light,
            &origin("https://api.openai.com"),
            &candidates,
            &no_env,
            &store,
        );
        assert!(status.stored_for.is_empty(), "{status:?}");
    }

    #[test]
    fn a_failing_keychain_is_read_once_and_environment_keys_still_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let (inner, store) = indexed(dir.path());
        for (slot, url) in [
            (ModelSlot::Main, "https://api.openai.com"),
            (ModelSlot::Main, "https://api.anthropic.com"),
            (ModelSlot::Light, "https://openrouter.ai"),
        ] {
            store
                .set(slot, &origin(url), &SecretString::new(format!("k-{url}")))
                .unwrap();
        }
        inner.fail_gets.store(true, Ordering::SeqCst);
        let env = |k: &str| (k == "CANOPY_LIGHT_API_KEY").then(|| " env-light ".to_string());
        let candidates = known_key_origins([&Settings::default()]);
        let keys = keys_to_redact(&candidates, &env, &store);
        assert_eq!(exposed(&keys), ["env-light"]);
        assert_eq!(inner.gets.load(Ordering::SeqCst), 1);
        // A failed probe does not make the index complete.
        assert_eq!(index_json(dir.path())["complete"], false);

        // Without any index (keys stored by an older version) the same holds for the candidates.
        let plain = CountingStore::default();
        plain.fail_gets.store(true, Ordering::SeqCst);
        assert_eq!(
            exposed(&keys_to_redact(&candidates, &env, &plain)),
            ["env-light"]
        );
        assert_eq!(plain.gets.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn without_a_usable_index_the_known_endpoints_are_still_probed() {
        let dir = tempfile::tempdir().unwrap();
        let inner = Arc::new(CountingStore::default());
        // A key stored by an older version, straight into the keychain.
        inner
            .set(
                ModelSlot::Main,
                &origin("https://api.anthropic.com"),
                &SecretString::new("old-anthropic"),
            )
            .unwrap();
        std::fs::write(dir.path().join(KEY_INDEX_FILE), "{ not json").unwrap();
        let store = IndexedStore::new(inner.clone(), dir.path());
        assert_eq!(store.stored_keys(), StoredKeys::default());
        let candidates = known_key_origins([&Settings::default()]);
        let keys = keys_to_redact(&candidates, &no_env, &store);
        assert_eq!(exposed(&keys), ["old-anthropic"]);
        assert_eq!(inner.gets.load(Ordering::SeqCst), 2 * candidates.len());
        // The probe found it and wrote a complete index in place of the broken file.
        let json = index_json(dir.path());
        assert_eq!(json["complete"], true);
        assert_eq!(
            json["accounts"],
            serde_json::json!(["main@https://api.anthropic.com"])
        );

        // A hand-edited entry the app never writes makes the index incomplete again.
        std::fs::write(
            dir.path().join(KEY_INDEX_FILE),
            r#"{"version":1,"complete":true,"accounts":["main@https://api.anthropic.com","someone@else"]}"#,
        )
        .unwrap();
        let listed = store.stored_keys();
        assert!(!listed.complete);
        assert_eq!(
            listed.accounts,
            [(ModelSlot::Main, origin("https://api.anthropic.com"))]
        );
    }
}
