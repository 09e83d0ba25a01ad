//! kubegen-bench: measures kubegen against client-go and kube-rs and against the floors (raw
//! transfer, pure serde decode) on the same server and the same data, and plots the results. Binaries only in spirit:
//! this library is the shared harness of `informer-sync`, `decode-cost`, `watch-fanin`,
//! `controller-e2e` and `scale-out`, not an API.
//!
//! See `docs/performance.md` for the method and the results.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `runner`, `loader`, `scale`
//! - `roles`, `table`
//! - `data`, `fanin`, `http`, `link`, `measure`, `plot`, `server`

pub mod data;
pub mod fanin;
pub mod http;
pub mod link;
pub mod loader;
pub mod measure;
pub mod plot;
pub mod roles;
pub mod runner;
pub mod scale;
pub mod server;
pub mod table;
