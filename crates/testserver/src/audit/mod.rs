//! The audit log: kube-apiserver's record of who did what, when, and with which answer
//! (apiserver `pkg/audit`, `endpoints/filters/audit.go`, `plugin/pkg/audit/log`). With an
//! [`AuditPolicy`] in [`crate::ServerOptions::audit_policy`] every request the policy selects
//! writes `audit.k8s.io/v1` `Event`s, one JSON object per line, to
//! [`crate::ServerOptions::audit_log_path`] (`-`: stdout) and to memory
//! ([`crate::ApiServer::audit_events`]), as v1.36 writes them with `--audit-policy-file` and
//! `--audit-log-path`.
//!
//! Why a test double has one: admission policies' `Audit` action and `auditAnnotations` only
//! show in the audit log, and an operator's own audit expectations (who changed this object?)
//! need the same events a real cluster writes.
//!
//! # Differences from kube-apiserver
//! - No rotation, batching or webhook backend; no `apiserver.latency.k8s.io/*` annotations for
//!   slow requests; no `impersonatedUser` (the server does not impersonate) and no `extra` in
//!   `user`.
//! - The logged objects' keys are in alphabetical order, not the Go types' field order.
//! - An upgraded stream (exec, attach, port-forward) writes `ResponseComplete` when the upgrade
//!   answer is sent, not when the spliced connection ends.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two
//! modules import each other (`hack/import-layers.py` checks both).
//! - `request`
//! - `sink`
//! - `event`, `policy`

mod event;
mod policy;
mod request;
mod sink;

pub(crate) use event::go_json;
pub use policy::AuditPolicy;
pub(crate) use policy::Level;
pub(crate) use request::{Incoming, PeerAddr, RequestAudit};
pub(crate) use sink::AuditLog;
