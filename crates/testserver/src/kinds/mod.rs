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
//! | custom resources | [`custom_resource`] | pruning, defaulting and validation by the CRD's schema on every write; defaults of a new schema filled into stored objects |
//! | custom resources | [`conversion`] | the versions a CRD serves and the conversion of its objects between them (strategy `None` or `Webhook`) |
//! | Pod | [`pod`] | `status: {phase: Pending, qosClass}` on create |
//! | ServiceAccount | here | the `token` subresource (`crate::handlers::token`) |
//! | Deployment, ReplicaSet | here | a `/status` write also changes metadata (a Deployment's labels excepted) |
//! | Mutating/ValidatingWebhookConfiguration | [`webhook_configuration`] | defaults and the required fields on create/update |
//! | access and subject reviews | here | answered, never stored (`crate::handlers::review`) |
//!
//! The generic deletion (finalizers, `deletionTimestamp`, the removal hooks) shared by `delete`,
//! `deletecollection`, updates removing the last finalizer and namespace termination is
//! [`deletion`].

pub(crate) mod conversion;
pub(crate) mod crd;
pub(crate) mod custom_resource;
pub(crate) mod deletion;
pub(crate) mod namespace;
pub(crate) mod pod;
pub(crate) mod webhook_configuration;

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

/// Deployments and ReplicaSets: a `/status` write also changes metadata, except a Deployment's
/// labels (`pkg/registry/apps/{deployment,replicaset}/strategy.go`); the deployment controller
/// writes its revision annotation that way.
struct AppsWorkloads {
    kept_on_status_update: &'static [&'static str],
}
impl Strategy for AppsWorkloads {
    fn status_update_metadata(&self) -> Option<&'static [&'static str]> {
        Some(self.kept_on_status_update)
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
        ("", "pods") => &pod::Pods,
        ("apps", "deployments") => &AppsWorkloads {
            kept_on_status_update: &["labels"],
        },
        ("apps", "replicasets") => &AppsWorkloads {
            kept_on_status_update: &[],
        },
        ("apiextensions.k8s.io", "customresourcedefinitions") => &crd::Crds,
        ("authorization.k8s.io", "selfsubjectaccessreviews") => &Reviews(Review::Access),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => &Reviews(Review::Rules),
        ("authentication.k8s.io", "selfsubjectreviews") => &Reviews(Review::Subject),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations") => {
            &webhook_configuration::WebhookConfigurations { mutating: true }
        }
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations") => {
            &webhook_configuration::WebhookConfigurations { mutating: false }
        }
        _ => &Generic,
    }
}
