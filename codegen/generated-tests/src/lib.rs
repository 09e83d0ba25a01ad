//! Tests of the crates kubegen generates (the tests live in `tests/`; this library is empty).
//!
//! They check what golden files cannot: that the generated code does the right thing against
//! the real runtime crates. The serde shape of the API types, the fake clientset end to end,
//! typed informers and listers, and that every generated CRD is accepted by the in-process API
//! server and round-trips a sample object of its kind.
