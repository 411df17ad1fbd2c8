//! What a slot's API key is called where a person provides it: the environment variable, and the
//! message when there is none. Apart from `keys`, so the error type can name them without the key
//! store's module and that module's use of the error type making a circle.

use canopy_protocol::ModelSlot;

/// `CANOPY_MAIN_API_KEY` or `CANOPY_LIGHT_API_KEY`.
pub fn api_key_env_var(slot: ModelSlot) -> &'static str {
    match slot {
        ModelSlot::Main => "CANOPY_MAIN_API_KEY",
        ModelSlot::Light => "CANOPY_LIGHT_API_KEY",
    }
}

/// The message shown when a slot has no key, naming both ways to provide one.
pub fn missing_key_message(slot: ModelSlot) -> String {
    format!(
        "No API key for the {} model. Set the environment variable {}, or enter it in Settings → Models → API key (stored in the OS keychain).",
        slot.as_str(),
        api_key_env_var(slot)
    )
}
