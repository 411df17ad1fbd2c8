//! Shared types of Canopy: the provider-neutral conversation, trace events and subagent results.
//! No I/O lives here; every other crate and the UI (through generated TypeScript) speak these types.

pub mod message;
pub mod policy;
pub mod result;
pub mod secret;
pub mod trace;
pub mod typescript;

pub use message::*;
pub use policy::{PermissionPolicy, PolicyAction, DEFAULT_SECRET_FILES};
pub use result::*;
pub use secret::SecretString;
pub use trace::*;
