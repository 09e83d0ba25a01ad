//! RBAC authorization (`--authorization-mode=RBAC`): decides requests from the stored
//! `rbac.authorization.k8s.io/v1` Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.
//! Mirrors apiserver `plugin/pkg/auth/authorizer/rbac/rbac.go` and the rule resolver of
//! `pkg/registry/rbac/validation/rule.go`: ClusterRoleBindings grant their role's rules
//! everywhere, RoleBindings in their namespace only (to a Role of that namespace or a
//! ClusterRole); the first rule that allows the request decides, with the reason
//! `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`. Members of
//! `system:masters` are allowed everything before RBAC is asked, like the real server's
//! privileged-group authorizer (so with an empty reason).
//!
//! Bindings and roles are read from the store on every decision: a binding created a moment ago
//! applies to the next request, as on a real server once its informer caught up.
//!
//! # Differences from the real server
//! - No ClusterRole aggregation (`aggregationRule` is stored but not evaluated) and no
//!   escalation checks on writes of roles and bindings (any user allowed to write them may grant
//!   anything).
//! - A rules review lists rules in binding-name order (ClusterRoleBindings first); the real order
//!   follows its informer caches and is not promised either.

mod bootstrap;
mod rules;

use std::sync::Arc;

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;

use crate::authz::{Attributes, Authorizer, Decision, Rules, UserInfo};
use crate::registry::ResourceKey;
use crate::storage::State;

pub(crate) use bootstrap::bootstrap;
use rules::GROUP;
pub(crate) use rules::PolicyRule;

/// The group whose members may do everything (apiserver `user.SystemPrivilegedGroup`).
const MASTERS: &str = "system:masters";

/// Evaluates RBAC over the server's store.
pub(crate) struct Rbac {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for Rbac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rbac")
    }
}

/// `RoleRef` and `Subject` of a binding.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoleRef {
    kind: String,
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Subject {
    kind: String,
    name: String,
    namespace: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Binding {
    role_ref: RoleRef,
    subjects: Vec<Subject>,
}

/// A binding that applies to the user, with its role's rules (or why they could not be read).
struct Grant {
    /// How the reason names it: `ClusterRoleBinding "b" of ClusterRole "r" to User "u"`.
    source: String,
    rules: Result<Vec<PolicyRule>, String>,
}

impl Rbac {
    pub(crate) fn new(state: Arc<Mutex<State>>) -> Rbac {
        Rbac { state }
    }

    /// Every binding that applies to `user` in `namespace` (cluster-wide ones included), with its
    /// role's rules.
    fn grants(&self, user: &UserInfo, namespace: &str) -> Vec<Grant> {
        let state = self.state.lock();
        let objects = |plural: &str, ns: Option<&str>| -> Vec<Value> {
            let key = ResourceKey::new(GROUP, "v1", plural);
            let Some(collection) = state.store.collection(&key) else {
                return Vec::new();
            };
            collection
                .iter()
                .filter(|((object_ns, _), _)| ns.is_none_or(|ns| ns == object_ns))
                .map(|(_, stored)| (*stored.value).clone())
                .collect()
        };
        let mut grants = Vec::new();
        for object in objects("clusterrolebindings", None) {
            grants.extend(grant(&state, &object, "ClusterRoleBinding", "", user));
        }
        if !namespace.is_empty() {
            for object in objects("rolebindings", Some(namespace)) {
                grants.extend(grant(&state, &object, "RoleBinding", namespace, user));
            }
        }
        grants
    }
}

/// The rules of the Role (in `namespace`) or ClusterRole a binding refers to; a missing role is
/// an error worded like the real rule resolver's (`clusterrole.rbac.authorization.k8s.io "x"
/// not found`).
fn role_rules(state: &State, role: &RoleRef, namespace: &str) -> Result<Vec<PolicyRule>, String> {
    let (plural, singular, ns) = match role.kind.as_str() {
        "ClusterRole" => ("clusterroles", "clusterrole", ""),
        _ => ("roles", "role", namespace),
    };
    let key = ResourceKey::new(GROUP, "v1", plural);
    let name = &role.name;
    let stored = state
        .store
        .get(&key, &(ns.to_string(), name.clone()))
        .ok_or_else(|| format!("{singular}.{GROUP} {name:?} not found"))?;
    Ok(serde_json::from_value(stored.value["rules"].clone()).unwrap_or_default())
}

/// The grant `object` (a binding) gives `user`, if one of its subjects is the user.
fn grant(
    state: &State,
    object: &Value,
    kind: &str,
    namespace: &str,
    user: &UserInfo,
) -> Option<Grant> {
    let binding: Binding = serde_json::from_value(object.clone()).ok()?;
    let subject = binding
        .subjects
        .iter()
        .find(|s| applies_to(s, namespace, user))?;
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let shown_name = if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{name}/{namespace}")
    };
    let role = &binding.role_ref;
    Some(Grant {
        source: format!(
            "{kind} {shown_name:?} of {} {:?} to {}",
            role.kind,
            role.name,
            describe(subject, namespace)
        ),
        rules: role_rules(state, role, namespace),
    })
}

/// Whether a binding's subject is the user (`appliesToUser`): a User by name, a Group the user is
/// in, a ServiceAccount by its user name (the binding's namespace when the subject has none).
fn applies_to(subject: &Subject, binding_namespace: &str, user: &UserInfo) -> bool {
    match subject.kind.as_str() {
        "User" => user.name == subject.name,
        "Group" => user.groups.contains(&subject.name),
        "ServiceAccount" => {
            let ns = if subject.namespace.is_empty() {
                binding_namespace
            } else {
                &subject.namespace
            };
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{}", subject.name)
        }
        _ => false,
    }
}

/// `User "u"`, `Group "g"`, `ServiceAccount "name/ns"`.
fn describe(subject: &Subject, binding_namespace: &str) -> String {
    match subject.kind.as_str() {
        "ServiceAccount" => {
            let ns = if subject.namespace.is_empty() {
                binding_namespace
            } else {
                &subject.namespace
            };
            format!("ServiceAccount {:?}", format!("{}/{ns}", subject.name))
        }
        kind => format!("{kind} {:?}", subject.name),
    }
}

impl Authorizer for Rbac {
    fn authorize(&self, attributes: &Attributes) -> Decision {
        if attributes.user.groups.iter().any(|g| g == MASTERS) {
            return Decision::Allow {
                reason: String::new(),
            };
        }
        for grant in self.grants(&attributes.user, &attributes.namespace) {
            let Ok(rules) = &grant.rules else { continue };
            if rules.iter().any(|rule| rule.allows(attributes)) {
                return Decision::Allow {
                    reason: format!("RBAC: allowed by {}", grant.source),
                };
            }
        }
        Decision::NoOpinion {
            reason: String::new(),
        }
    }

    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules {
        let mut rules = Rules::default();
        let mut errors = Vec::new();
        for grant in self.grants(user, namespace) {
            match grant.rules {
                Ok(list) => {
                    for (resource, non_resource) in list.iter().map(PolicyRule::split) {
                        rules.resource_rules.extend(resource);
                        rules.non_resource_rules.extend(non_resource);
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        rules.incomplete = !errors.is_empty();
        rules.evaluation_error = errors.join(", ");
        rules
    }
}

#[cfg(test)]
#[path = "rbac_tests.rs"]
mod tests;
