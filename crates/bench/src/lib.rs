//! kubegen-bench: measures kubegen against kube-rs and against the floors (raw transfer, pure
//! serde decode) on the same in-process test server and the same data. Binaries only in spirit:
//! this library is the shared harness of `informer-sync`, `decode-cost`, `watch-fanin`,
//! `controller-e2e` and `scale-out`, not an API.
//!
//! See `docs/performance.md` for the method and the results.

pub mod data;
pub mod fanin;
pub mod http;
pub mod link;
pub mod loader;
pub mod measure;
pub mod roles;
pub mod runner;
pub mod scale;
pub mod server;
pub mod table;
