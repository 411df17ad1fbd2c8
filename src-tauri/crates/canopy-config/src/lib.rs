//! canopy-config
