//! Per-kind strategies.

pub(crate) mod crd;
pub(crate) mod namespace;
