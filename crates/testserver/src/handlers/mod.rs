//! The handlers: one module per verb family, mirroring apiserver `endpoints/handlers/{get,create,
//! update,patch,delete,watch}.go`, plus the subresources and non-resource endpoints with their own
//! REST handlers (scale, reviews, TokenRequest, pod binding, the streams a kubelet serves, discovery, the OpenID issuer documents). Each receives the request's scope
//! and works through the storage handle; kind-specific rules are the strategies' (`crate::kinds`),
//! asked through their hooks. A write of a kind served in several versions goes through
//! `versioned`, which converts in, runs the generic `update`/`create` in the request's version
//! and stores in the storage version.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `discovery`, `oidc`, `pod_connect`, `versioned`
//! - `scale`, `watch`
//! - `aggregated_discovery`, `read`, `review`, `token`, `update`
//! - `binding`, `create`, `delete`, `kubelet_proxy`, `token_review`

pub(crate) mod aggregated_discovery;
pub(crate) mod binding;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod discovery;
pub(crate) mod kubelet_proxy;
pub(crate) mod oidc;
pub(crate) mod pod_connect;
pub(crate) mod read;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod token;
pub(crate) mod token_review;
pub(crate) mod update;
pub(crate) mod versioned;
pub(crate) mod watch;
