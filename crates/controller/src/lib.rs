//! `kubegen-controller`: the `image-police` controller, built like client-go's
//! sample-controller on the generated clientset, listers and informers plus kubegen-workqueue.
//!
//! Work in progress: the pure policy modules come first.

pub mod controller;
pub mod embedded;
pub mod endpoints;
pub mod error;
pub mod events;
pub mod flags;
pub mod image_ref;
pub mod manifests;
pub mod metrics;
pub mod namespaces;
pub mod policy;
pub mod reconcile;
pub mod status;
pub mod writer;
