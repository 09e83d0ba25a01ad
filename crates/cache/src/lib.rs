//! Placeholder: being built.
