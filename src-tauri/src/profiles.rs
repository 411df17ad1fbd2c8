//! The subagent profiles a project offers, as the project view lists them: the host layer's list
//! (built-ins with settings overrides, then the project's `.canopy/agents/*.md`).

pub use canopy_host::profiles::{project_profiles, ProfileError, ProfileInfo};
