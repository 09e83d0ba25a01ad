//! The handlers: one module per verb family, mirroring apiserver `endpoints/handlers/{get,create,
//! update,patch,delete,watch}.go`, plus the subresources and non-resource endpoints with their own
//! REST handlers (scale, reviews, TokenRequest, discovery). Each receives the request's scope
//! and works through the storage handle; kind-specific rules are the strategies' (`crate::kinds`).

pub(crate) mod aggregated_discovery;
pub(crate) mod crd_conversion;
pub(crate) mod crd_prune;
pub(crate) mod crd_scale;
pub(crate) mod crd_validation;
pub(crate) mod crd_write;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod discovery;
pub(crate) mod read;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod token;
pub(crate) mod update;
pub(crate) mod watch;
