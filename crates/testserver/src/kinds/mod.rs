//! Per-kind strategies: what a kind does differently from the generic verbs, in one place per
//! kind, as kube-apiserver's REST storage gives each resource a strategy
//! (`pkg/registry/<group>/<kind>/strategy.go`: `PrepareForCreate`, `PrepareForUpdate`,
//! `Validate`, and the store hooks `AfterCreate`/`AfterUpdate`/`AfterDelete`, plus the extra REST
//! endpoints a kind installs beside its storage). The generic handlers ask
//! [`strategy_for`] instead of testing kind names.
//!
//! | kind | file | differs in |
//! |---|---|---|
//! | Namespace | [`namespace`] | defaults on create, the `finalize` subresource, deletion that only terminates (the namespace controller of `kubegen-controller-manager` empties it and calls `finalize`), removal only once `spec.finalizers` is empty too |
//! | CustomResourceDefinition | [`crd`] | validation and status on create/update, serving its resource on write, removing it on delete |
//! | ServiceAccount | here | the `token` subresource (`crate::handlers::token`) |
//! | access and subject reviews | here | answered, never stored (`crate::handlers::review`) |
//!
//! The generic deletion (finalizers, `deletionTimestamp`, the removal hooks) shared by `delete`,
//! `deletecollection`, updates removing the last finalizer and namespace termination is
//! [`deletion`].

pub(crate) mod crd;
pub(crate) mod deletion;
pub(crate) mod namespace;

pub(crate) mod strategy;

use crate::registry::ResourceDefinition;
pub(crate) use strategy::{Review, Strategy};

/// Every other kind: the generic verbs as they are.
struct Generic;
impl Strategy for Generic {}

struct ServiceAccounts;
impl Strategy for ServiceAccounts {
    fn subresources(&self) -> &'static [&'static str] {
        &["token"]
    }
}

struct Reviews(Review);
impl Strategy for Reviews {
    fn review(&self) -> Option<Review> {
        Some(self.0)
    }
}

/// The strategy of a served resource (the REST storage map's lookup).
pub(crate) fn strategy_for(def: &ResourceDefinition) -> &'static dyn Strategy {
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "namespaces") => &namespace::Namespaces,
        ("", "serviceaccounts") => &ServiceAccounts,
        ("apiextensions.k8s.io", "customresourcedefinitions") => &crd::Crds,
        ("authorization.k8s.io", "selfsubjectaccessreviews") => &Reviews(Review::Access),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => &Reviews(Review::Rules),
        ("authentication.k8s.io", "selfsubjectreviews") => &Reviews(Review::Subject),
        _ => &Generic,
    }
}
