//! [`MemoryStore`]: keys kept in memory, for tests and for checking what a keychain failure does.

use std::collections::HashMap;
use std::sync::Mutex;

use canopy_protocol::{ModelSlot, SecretString};

use super::{clean_key, KeyOrigin, SecretStore};
use crate::error::{ConfigError, KeyError};

/// An in-memory store for tests, optionally pretending the keychain is unreachable.
#[derive(Debug, Default)]
pub struct MemoryStore {
    keys: Mutex<HashMap<(ModelSlot, KeyOrigin), SecretString>>,
    unavailable: Option<String>,
}

impl MemoryStore {
    /// An empty, working store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// A store whose every call fails with [`KeyError::Unavailable`] carrying `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        MemoryStore {
            keys: Mutex::default(),
            unavailable: Some(reason.into()),
        }
    }

    fn check(&self) -> Result<(), KeyError> {
        match &self.unavailable {
            Some(reason) => Err(ConfigError::Unavailable(reason.clone())),
            None => Ok(()),
        }
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<(ModelSlot, KeyOrigin), SecretString>> {
        // A panic elsewhere while holding the lock cannot leave a HashMap half-updated in a way
        // that matters here, so a poisoned lock is still usable.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<Option<SecretString>, KeyError> {
        self.check()?;
        Ok(self.keys().get(&(slot, origin.clone())).cloned())
    }

    fn set(&self, slot: ModelSlot, origin: &KeyOrigin, key: &SecretString) -> Result<(), KeyError> {
        self.check()?;
        let key = clean_key(key)?;
        self.keys().insert((slot, origin.clone()), key);
        Ok(())
    }

    fn delete(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<(), KeyError> {
        self.check()?;
        self.keys().remove(&(slot, origin.clone()));
        Ok(())
    }
}
