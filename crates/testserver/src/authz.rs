//! Authorization: who may do what. Every request (`requestinfo::authorize`) and the access reviews
//! (`SelfSubjectAccessReview`, `SelfSubjectRulesReview`, see `handlers::review`) ask one
//! [`Authorizer`]: RBAC (`rbac/`) when [`crate::ServerOptions::rbac`] is set, else
//! [`crate::ServerOptions::authorizer`], [`AllowAll`] by default.
//!
//! Mirrors apiserver `pkg/authorization/authorizer/interfaces.go`: an `Authorizer` decides one
//! request from its `Attributes`, and a `RuleResolver` lists the rules a user has in a namespace.
//! Both live on one trait here because every authorizer kubegen needs (allow-all, RBAC)
//! can answer both, and the rules review must agree with the decisions.
//!
//! # Why a trait
//! RBAC and a test's own authorizer plug in the same way, without touching the request pipeline
//! or the review handlers: they only turn requests into [`Attributes`] and [`Decision`]s /
//! [`Rules`] back into responses.

use std::fmt::Debug;

/// The authenticated user a request runs as (apiserver `user.Info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserInfo {
    /// User name, e.g. `system:serviceaccount:ns:name`.
    pub name: String,
    /// User ID; empty when the authenticator has none.
    pub uid: String,
    /// Groups, e.g. `system:masters`, `system:authenticated`.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user with these names; [`crate::ServerOptions::tokens`] maps tokens to them.
    pub fn new(name: impl Into<String>, uid: impl Into<String>, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: uid.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    /// The user every request runs as when authentication is off, and the one the admin
    /// [`crate::ServerOptions::bearer_token`] authenticates as: a cluster administrator, like a
    /// real cluster's admin kubeconfig.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "kubegen-admin".into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        }
    }
}

/// What a request wants to do (apiserver `authorizer.AttributesRecord`): either a resource request
/// (`resource` set) or a non-resource request (`path` set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, or a custom one such as `use`; for non-resource requests the lower-cased
    /// HTTP method.
    pub verb: String,
    /// Namespace; empty for cluster-scoped resources and all-namespaces requests.
    pub namespace: String,
    /// API group; empty for the core group.
    pub group: String,
    /// API version; empty or `*` for any.
    pub version: String,
    /// Plural resource, e.g. `deployments`; empty for non-resource requests.
    pub resource: String,
    /// Subresource, e.g. `status`.
    pub subresource: String,
    /// Object name; empty for collections.
    pub name: String,
    /// URL path of a non-resource request, e.g. `/healthz`.
    pub path: String,
}

/// An authorizer's answer (apiserver `authorizer.Decision` plus its reason).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Allowed; the reason says why (may be empty).
    Allow {
        /// E.g. `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`.
        reason: String,
    },
    /// Explicitly denied.
    Deny {
        /// Why, shown to the user.
        reason: String,
    },
    /// The authorizer has no rule for the request; the request is denied unless another
    /// authorizer allows it.
    NoOpinion {
        /// Why, shown to the user (may be empty).
        reason: String,
    },
}

/// One rule on resources (`authorization.k8s.io/v1` `ResourceRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// API groups, `*` for all.
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/status`), `*` for all.
    pub resources: Vec<String>,
    /// Object names; empty for all.
    pub resource_names: Vec<String>,
}

/// One rule on non-resource URLs (`authorization.k8s.io/v1` `NonResourceRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NonResourceRule {
    /// Verbs (`get`, `post`, ...), `*` for all.
    pub verbs: Vec<String>,
    /// URL paths, `*` for all; a trailing `*` matches a prefix.
    pub non_resource_urls: Vec<String>,
}

/// What a user may do in a namespace (the status of a `SelfSubjectRulesReview`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rules {
    /// Rules on resources.
    pub resource_rules: Vec<ResourceRule>,
    /// Rules on non-resource URLs.
    pub non_resource_rules: Vec<NonResourceRule>,
    /// True when the list may be missing rules (an authorizer that cannot enumerate them, or an
    /// evaluation error).
    pub incomplete: bool,
    /// Why the list is incomplete, when it is.
    pub evaluation_error: String,
}

/// Decides requests and lists rules. Implementations must be cheap to call: the server calls them
/// while answering requests.
pub trait Authorizer: Send + Sync + Debug {
    /// Whether `attributes.user` may do what `attributes` describe.
    fn authorize(&self, attributes: &Attributes) -> Decision;

    /// Everything `user` may do in `namespace` (rules that apply cluster-wide included).
    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules;
}

/// Allows everything (apiserver `authorizerfactory.NewAlwaysAllowAuthorizer`, the
/// `--authorization-mode=AlwaysAllow` of a real server): the test server's default unless RBAC is
/// opted into.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn authorize(&self, _attributes: &Attributes) -> Decision {
        Decision::Allow {
            reason: String::new(),
        }
    }

    fn rules_for(&self, _user: &UserInfo, _namespace: &str) -> Rules {
        let all = || vec!["*".to_string()];
        Rules {
            resource_rules: vec![ResourceRule {
                verbs: all(),
                api_groups: all(),
                resources: all(),
                resource_names: Vec::new(),
            }],
            non_resource_rules: vec![NonResourceRule {
                verbs: all(),
                non_resource_urls: all(),
            }],
            incomplete: false,
            evaluation_error: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_all_allows_with_an_empty_reason() {
        let attributes = Attributes {
            user: UserInfo::admin(),
            verb: "delete".into(),
            resource: "nodes".into(),
            ..Attributes::default()
        };
        assert_eq!(
            AllowAll.authorize(&attributes),
            Decision::Allow {
                reason: String::new()
            }
        );
    }

    #[test]
    fn allow_all_lists_one_wildcard_rule_of_each_kind() {
        let rules = AllowAll.rules_for(&UserInfo::admin(), "default");
        let star = vec!["*".to_string()];
        assert_eq!(rules.resource_rules.len(), 1);
        assert_eq!(rules.resource_rules[0].verbs, star);
        assert_eq!(rules.resource_rules[0].api_groups, star);
        assert_eq!(rules.resource_rules[0].resources, star);
        assert!(rules.resource_rules[0].resource_names.is_empty());
        assert_eq!(rules.non_resource_rules.len(), 1);
        assert_eq!(rules.non_resource_rules[0].non_resource_urls, star);
        assert!(!rules.incomplete);
    }
}
