//! canopy-test-support
