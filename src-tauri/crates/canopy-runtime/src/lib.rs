//! canopy-runtime
