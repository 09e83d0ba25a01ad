//! kubegen-testserver: an in-process Kubernetes API server for tests and for the controller's
//! `--embedded` mode.
//!
//! Real Kubernetes cannot run where kubegen is developed and tested, so this crate speaks the
//! kube-apiserver wire protocol closely enough that kubegen's client, reflector, informers and
//! controller cannot tell the difference for the features they use. It is a test double: where it
//! has a behaviour, that behaviour matches the real server, including the exact shape of `Status`
//! error bodies.
//!
//! # Entry points
//! - [`TestServer::start`] binds 127.0.0.1 on an ephemeral port (HTTP or, with
//!   [`ServerOptions::tls`], HTTPS with a generated CA) and hands out [`TestServer::url`] and a
//!   ready [`TestServer::kubeconfig_yaml`].
//! - [`ApiServer::handle`] is the same server without a socket: the fake clientset plugs it into a
//!   client transport.
//! - [`Faults`] injects failures: dropped, stalled or bookmark-less watches, forced compaction
//!   (410), 429/500/503 responses, latency.
//!
//! # Real-server behaviour reproduced
//! - Storage: one global, monotonically increasing resourceVersion; uid, creationTimestamp,
//!   generation (bumped only when something outside metadata/status changes); optimistic
//!   concurrency (409 Conflict); `generateName`; AlreadyExists/NotFound; `/status` subresource
//!   semantics; JSON merge, JSON patch and (for built-ins) strategic merge patch; finalizers with
//!   `deletionTimestamp`; deletecollection; namespaces that must exist, and namespace deletion
//!   (Terminating, content deleted, then removed); DNS-1123 name validation (422 Invalid).
//! - Lists: label and field selectors, `limit`/`continue` with opaque tokens served from a
//!   consistent snapshot and expiring with 410 after compaction, `resourceVersion` /
//!   `resourceVersionMatch` (`""` consistent, `"0"` any, `Exact`, `NotOlderThan`, and the 504
//!   "Too large resource version" after a configurable wait).
//! - Watches: chunked NDJSON from a resourceVersion, synthetic `ADDED` for RV unset/"0", 410 `ERROR`
//!   events beyond the bounded history, periodic and on-demand BOOKMARKs, `timeoutSeconds`,
//!   streaming lists (`sendInitialEvents=true`, ending at the `k8s.io/initial-events-end` bookmark,
//!   switchable off to mimic older servers), selector transitions as ADDED/DELETED.
//! - Discovery (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`) and CRDs:
//!   creating a CustomResourceDefinition serves its resource and marks it Established; deleting
//!   it removes the resource and its objects.
//! - `dryRun=All` on every write: the response is computed, nothing is stored.
//! - Bearer-token authentication (401), TLS with HTTP/1.1 and HTTP/2 (ALPN), clean shutdown.
//!
//! # Deliberately not reproduced
//! No admission beyond NamespaceLifecycle (namespaces must exist, terminating ones refuse new
//! content, system namespaces cannot be deleted), no RBAC, no server-side apply (apply patches
//! get 415), no managedFields, no field validation or pruning against OpenAPI schemas, no
//! defaulting of built-in specs, no garbage collection of owned objects, no graceful pod
//! deletion, no version conversion (each served version and the two Event APIs have separate
//! storage), no aggregated discovery, protobuf, `/openapi/*`, `fieldValidation`, namespace
//! `/finalize` or `remainingItemCount`, and no watch-cache pagination quirks (a `limit` is always
//! honoured). A body without `apiVersion`/`kind` is accepted and completed from the URL where the
//! real server would reject it. A watch from a resourceVersion newer than the server's waits for
//! it instead of failing.

mod api;
mod body;
mod discovery;
mod error;
mod faults;
mod handlers;
mod options;
mod patch;
mod query;
mod registry;
mod route;
mod selectors;
mod server;
mod shared;
mod state;
mod status;
mod store;
mod tls;
mod validation;
mod watch;

pub use body::BoxBody;
pub use error::Error;
pub use faults::{Failure, Faults, RequestMatch};
pub use options::ServerOptions;
pub use registry::{NameRule, ResourceDefinition};
pub use server::TestServer;
pub use shared::ApiServer;
