//! `kubegen-nodesim`: Pods that run without machines. Simulated Nodes, a scheduler and a kubelet
//! that only talk to an API server, the way kwok (kubernetes-sigs/kwok) simulates a cluster's
//! nodes: they write what kube-scheduler and the kubelet would write, in configurable stages.
//!
//! # Why
//! Without a scheduler and a kubelet, Pods stay `Pending` forever: a Deployment never becomes
//! Available, `kubectl rollout status` never returns, and an operator that waits for its
//! workload to be ready cannot be tested. envtest users hit this for years
//! (controller-runtime issues 880 and 1529) and are told to use kind. A [`NodeSimulator`] is a
//! client of any API server: it runs in process beside `kubegen-testserver` (which starts one
//! by default in its binary and in `kubegen-embedded`) and, unchanged, against a real
//! kube-apiserver, as kwok does.
//!
//! | piece | Kubernetes source mirrored | here |
//! |---|---|---|
//! | Node registration, status, Lease heartbeats | `pkg/kubelet/kubelet_node_status.go`, `pkg/kubelet/nodestatus/setters.go`, `component-helpers/apimachinery/lease` | `node.rs`, `heartbeat.rs` |
//! | scheduling cycle, binding, failure handling | `pkg/scheduler/schedule_one.go` | `scheduler.rs` |
//! | scheduler cache (Pods placed per Node, assumed Pods) | `pkg/scheduler/backend/cache/cache.go` | `usage.rs` |
//! | Filter plugins, the fit error's words | `pkg/scheduler/framework/plugins/{nodeunschedulable,tainttoleration,nodeaffinity,noderesources}`, `framework/types.go` | `fit.rs`, `quantity.rs` |
//! | Pod status (running, ready, completed, crash loop), deletion | `pkg/kubelet/kubelet_pods.go`, `pkg/kubelet/status/`, kwok's `kustomize/stage/pod` | `lifecycle.rs`, `kubelet.rs` |
//! | the kubelet's HTTPS API for logs, exec, attach, port-forward | `pkg/kubelet/server/server.go`, `k8s.io/cri-streaming/pkg/streaming/{remotecommand,portforward}` | `kubelet_server.rs`, `streaming.rs`, `container_logs.rs`, `remote_command.rs`, `port_forward.rs` |
//! | the same over SPDY/3.1 (upgraded, or tunnelled in a WebSocket) | `k8s.io/apimachinery/pkg/util/httpstream/spdy`, `cri-streaming/.../{remotecommand,portforward}/httpstream.go`, `apiserver/pkg/util/proxy/streamtunnel.go` | `spdy_session.rs`, `remote_command_spdy.rs`, `port_forward_spdy.rs` (framing: `kubegen_client::spdy`) |
//! | the containers' processes (built-in commands only, never a host one), logs, ports | the container runtime (containerd) | `process.rs`, `port_forward_responder.rs` |
//!
//! ```mermaid
//! sequenceDiagram
//!     participant RS as replicaset controller
//!     participant API as API server
//!     participant S as nodesim scheduler
//!     participant K as nodesim kubelet
//!     RS->>API: create Pod (Pending)
//!     API-->>S: watch: Pod without nodeName
//!     S->>API: POST pods/p/binding, Event Scheduled
//!     API-->>K: watch: Pod on nodesim-0
//!     K->>API: PATCH pods/p/status (Running, Ready)
//! ```
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `simulator`
//! - `kubelet_server`
//! - `container_logs`, `heartbeat`, `kubelet`, `port_forward`, `remote_command`, `scheduler`
//! - `port_forward_spdy`, `remote_command_spdy`
//! - `remote_process`, `spdy_session`
//! - `process`, `streaming`, `usage`
//! - `fit`, `lifecycle`, `worker`
//! - `node`, `quantity`
//! - `error`, `options`
//! - `port_forward_responder`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod container_logs;
mod error;
mod fit;
mod heartbeat;
mod kubelet;
mod kubelet_server;
mod lifecycle;
mod node;
mod options;
mod port_forward;
mod port_forward_responder;
mod port_forward_spdy;
mod process;
mod quantity;
mod remote_command;
mod remote_command_spdy;
mod remote_process;
mod scheduler;
mod simulator;
mod spdy_session;
mod streaming;
mod usage;
mod worker;

pub use error::{Error, Result};
pub use options::{FAILURE_LABEL, Failure, NODE_ANNOTATION, NodeSimOptions, Taint};
pub use simulator::NodeSimulator;
