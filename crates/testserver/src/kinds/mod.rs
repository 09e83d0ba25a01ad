//! Per-kind strategies: what a kind does differently from the generic verbs, in one place per
//! kind, as kube-apiserver's REST storage gives each resource a strategy
//! (`pkg/registry/<group>/<kind>/strategy.go`: `PrepareForCreate`, `PrepareForUpdate`,
//! `Validate`, and the store hooks `AfterCreate`/`AfterUpdate`/`AfterDelete`, plus the extra REST
//! endpoints a kind installs beside its storage). The generic handlers ask
//! [`strategy_for`] instead of testing kind names.
//!
//! | kind | file | differs in |
//! |---|---|---|
//! | Namespace | [`namespace`] | defaults on create, the `finalize` subresource, deletion that only terminates (the namespace controller of `kubegen-controller-manager` empties it and calls `finalize`), removal only once `spec.finalizers` is empty too, no `deletecollection` |
//! | CustomResourceDefinition | [`crd`] | validation and status on create/update, serving its resource on write, removing it on delete |
//! | custom resources | here, its rules in [`custom_resource`] | decoding (pruning, defaulting), validation and CEL by the CRD's schema on every write, in the version the request names; the versions a CRD serves and the conversion of requests and answers between them (strategy `None` or `Webhook`), managedFields per version; defaults of a new schema filled into stored objects |
//! | ConfigMap, Secret | [`config_data`] | at most 1 MiB of data |
//! | Pod | [`pod`] | `status: {phase: Pending, qosClass}` on create |
//! | ServiceAccount | here | the `token` subresource (`crate::handlers::token`) |
//! | Deployment, ReplicaSet | here | a `/status` write also changes metadata (a Deployment's labels excepted) |
//! | Mutating/ValidatingWebhookConfiguration | [`webhook_configuration`] | defaults and the required fields on create/update |
//! | access and subject reviews | here | answered, never stored (`crate::handlers::review`); `create` only |
//!
//! The generic deletion (finalizers, `deletionTimestamp`, the removal hooks) shared by `delete`,
//! `deletecollection`, updates removing the last finalizer and namespace termination is
//! [`deletion`]; the scopes a write is admitted and stored in, [`stages`].
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `deletion`, `stages`
//! - `config_data`, `crd`, `namespace`, `pod`, `webhook_configuration`
//! - `strategy`
//! - `custom_resource`

pub(crate) mod config_data;
pub(crate) mod crd;
pub(crate) mod custom_resource;
pub(crate) mod deletion;
pub(crate) mod namespace;
pub(crate) mod pod;
pub(crate) mod stages;
pub(crate) mod webhook_configuration;

pub(crate) mod strategy;

use serde_json::{Map, Value};

use crate::kinds::custom_resource::edge::Edge;
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;
use crate::verb::Verb;
pub(crate) use stages::Stages;
pub(crate) use strategy::{Review, Strategy};

/// Every other kind: the generic verbs as they are.
struct Generic;
impl Strategy for Generic {}

struct ServiceAccounts;
impl Strategy for ServiceAccounts {
    fn subresources(&self) -> &'static [(&'static str, Verb)] {
        &[("token", Verb::Create)]
    }

    fn requests_token(&self, subresource: &str) -> bool {
        subresource == "token"
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

/// Custom resources: every rule is their CRD's ([`custom_resource`]). A kind no stored CRD
/// defines has no schema and one version, so every hook leaves it as it is.
struct CustomResources;
impl Strategy for CustomResources {
    fn decode(&self, state: &State, def: &ResourceDefinition, object: &mut Map<String, Value>) {
        custom_resource::schema::decode(state, def, object);
    }

    fn validate(
        &self,
        state: &State,
        target: &Scope,
        name: &str,
        (object, old): (&mut Value, Option<&Value>),
    ) -> Result<(), ApiError> {
        custom_resource::schema::admit(state, target, name, object, old)
    }

    fn edge(&self, state: &State, scope: &Scope) -> Option<Edge> {
        Edge::for_scope(state, scope)
    }
}

/// Reviews are questions, answered and never stored.
struct Reviews(Review);
impl Strategy for Reviews {
    fn verbs(&self) -> &'static [Verb] {
        &[Verb::Create]
    }

    fn review(&self) -> Option<Review> {
        Some(self.0)
    }
}

/// The strategy of a served resource (the REST storage map's lookup). Built-in kinds are
/// served with strategic merge patches; every other kind is a custom resource.
pub(crate) fn strategy_for(def: &ResourceDefinition) -> &'static dyn Strategy {
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "namespaces") => &namespace::Namespaces,
        ("", "configmaps") => &config_data::ConfigData { secret: false },
        ("", "secrets") => &config_data::ConfigData { secret: true },
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
        // Served without strategic merge: from a CRD, or registered by a fake clientset.
        _ if !def.strategic_merge => &CustomResources,
        _ => &Generic,
    }
}
