//! The REST storage map's lookup: which strategy a served resource has, and the strategies too
//! small for a file of their own (ServiceAccounts, Nodes, PersistentVolumeClaims, Deployments and ReplicaSets, custom resources,
//! reviews, and every other kind's generic one).

use serde_json::{Map, Value};

use crate::kinds::custom_resource::{self, edge::Edge};
use crate::kinds::strategy::{Review, Strategy};
use crate::kinds::{
    admission_policy, config_data, crd, daemon_set, job, namespace, pod, policy_binding, service,
    webhook_configuration,
};
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;
use crate::verb::Verb;

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

/// Nodes: a `/status` write may change labels and annotations, never `spec`
/// (`pkg/registry/core/node/strategy.go`, `nodeStatusStrategy.PrepareForUpdate`; checked on
/// v1.36): the kubelet reports its status that way.
struct Nodes;
impl Strategy for Nodes {
    fn status_update_metadata(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }
}

/// PersistentVolumeClaims: a new claim's status is cleared and then, as v1.36's storage reads it
/// back with its defaults, `Pending` (`pkg/registry/core/persistentvolumeclaim/strategy.go`);
/// nothing binds it here, as on a cluster without a provisioner.
struct Claims;
impl Strategy for Claims {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        object.insert("status".into(), serde_json::json!({"phase": "Pending"}));
        Ok(())
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
        ("", "services") => &service::Services,
        ("", "nodes") => &Nodes,
        ("", "persistentvolumeclaims") => &Claims,
        ("apps", "deployments") => &AppsWorkloads {
            kept_on_status_update: &["labels"],
        },
        ("apps", "replicasets") => &AppsWorkloads {
            kept_on_status_update: &[],
        },
        ("apps", "daemonsets") => &daemon_set::DaemonSets,
        ("batch", "jobs") => &job::Jobs,
        ("apiextensions.k8s.io", "customresourcedefinitions") => &crd::Crds,
        ("authorization.k8s.io", "selfsubjectaccessreviews") => &Reviews(Review::Access),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => &Reviews(Review::Rules),
        ("authentication.k8s.io", "selfsubjectreviews") => &Reviews(Review::Subject),
        ("authentication.k8s.io", "tokenreviews") => &Reviews(Review::Token),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations") => {
            &webhook_configuration::WebhookConfigurations { mutating: true }
        }
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations") => {
            &webhook_configuration::WebhookConfigurations { mutating: false }
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            &admission_policy::AdmissionPolicies { mutating: false }
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => {
            &admission_policy::AdmissionPolicies { mutating: true }
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
            &policy_binding::PolicyBindings { mutating: false }
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings") => {
            &policy_binding::PolicyBindings { mutating: true }
        }
        // Served without strategic merge: from a CRD, or registered by a fake clientset.
        _ if !def.strategic_merge => &CustomResources,
        _ => &Generic,
    }
}
