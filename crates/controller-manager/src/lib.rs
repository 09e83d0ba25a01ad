//! `kubegen-controller-manager`: the controllers of kube-controller-manager that the test server
//! needs so that workloads behave as on a real cluster without a kubelet or a scheduler.
//!
//! Each controller is built the way client-go controllers are: shared informers
//! (`kubegen-cache`) feed event handlers that enqueue `namespace/name` keys into a rate-limited
//! workqueue (`kubegen-workqueue`); workers read the current state from listers and write
//! through `kubegen-client`.
//!
//! | kube-controller-manager (`pkg/controller/...`) | here                              |
//! |------------------------------------------------|-----------------------------------|
//! | `replicaset/replica_set.go`                    | `apps/replicaset.rs`              |
//! | `deployment/*.go`, `deployment/util/*.go`      | `apps/deployment/`                |
//! | `controller_ref_manager.go`                    | `apps/controller_ref.rs`          |
//! | `controller_utils.go` (expectations, ranking)  | `apps/expectations.rs`, `apps/pods.rs` |

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod apps;
mod error;

pub use error::{Error, Result};
