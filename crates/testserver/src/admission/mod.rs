//! Admission.
