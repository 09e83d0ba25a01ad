//! One RBAC `PolicyRule` and whether it allows a request: apiserver
//! `plugin/pkg/auth/authorizer/rbac/rbac.go` `RuleAllows` and the matchers of
//! `pkg/apis/rbac/v1/evaluation_helpers.go`.

use serde::Deserialize;

use crate::authz::{Attributes, NonResourceRule, ResourceRule};

/// The RBAC API group.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

/// `rbac.authorization.k8s.io/v1` `PolicyRule`, as stored in a Role or ClusterRole.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PolicyRule {
    pub(crate) verbs: Vec<String>,
    pub(crate) api_groups: Vec<String>,
    pub(crate) resources: Vec<String>,
    pub(crate) resource_names: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    pub(crate) non_resource_urls: Vec<String>,
}

const ALL: &str = "*";

impl PolicyRule {
    /// Whether this rule allows the request: a resource request needs verb, API group, resource
    /// (`<resource>/<subresource>` for a subresource, which `*/<subresource>` matches too) and
    /// name (when the rule lists names) to match; a non-resource request verb and path.
    pub(crate) fn allows(&self, request: &Attributes) -> bool {
        if !contains_or_all(&self.verbs, &request.verb) {
            return false;
        }
        if request.resource.is_empty() {
            return self.non_resource_url_matches(&request.path);
        }
        contains_or_all(&self.api_groups, &request.group)
            && self.resource_matches(&request.resource, &request.subresource)
            && (self.resource_names.is_empty() || self.resource_names.contains(&request.name))
    }

    fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        let combined = if subresource.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{subresource}")
        };
        self.resources.iter().any(|rule| {
            rule == ALL
                || *rule == combined
                || (!subresource.is_empty() && rule.strip_prefix("*/") == Some(subresource))
        })
    }

    /// `*` matches every path, `/apis/*` every path starting with `/apis/`, anything else itself.
    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|rule| {
            rule == ALL
                || rule == path
                || rule
                    .strip_suffix('*')
                    .is_some_and(|prefix| path.starts_with(prefix))
        })
    }

    /// The rule as a rules review lists it: one resource rule and/or one non-resource rule.
    pub(crate) fn split(&self) -> (Option<ResourceRule>, Option<NonResourceRule>) {
        let resource = (!self.resources.is_empty()).then(|| ResourceRule {
            verbs: self.verbs.clone(),
            api_groups: self.api_groups.clone(),
            resources: self.resources.clone(),
            resource_names: self.resource_names.clone(),
        });
        let non_resource = (!self.non_resource_urls.is_empty()).then(|| NonResourceRule {
            verbs: self.verbs.clone(),
            non_resource_urls: self.non_resource_urls.clone(),
        });
        (resource, non_resource)
    }
}

fn contains_or_all(list: &[String], wanted: &str) -> bool {
    list.iter().any(|item| item == ALL || item == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: owned(verbs),
            api_groups: owned(groups),
            resources: owned(resources),
            resource_names: owned(names),
            non_resource_urls: Vec::new(),
        }
    }

    fn request(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    fn path_request(verb: &str, path: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            path: path.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn verb_group_and_resource_must_all_match() {
        let r = rule(&["get", "list"], &["apps"], &["deployments"], &[]);
        assert!(r.allows(&request("list", "apps", "deployments", "", "")));
        assert!(!r.allows(&request("delete", "apps", "deployments", "", "")));
        assert!(!r.allows(&request("list", "", "deployments", "", "")));
        assert!(!r.allows(&request("list", "apps", "replicasets", "", "")));
    }

    #[test]
    fn wildcards_match_any_verb_group_and_resource() {
        let r = rule(&["*"], &["*"], &["*"], &[]);
        assert!(r.allows(&request("escalate", "x.io", "things", "status", "a")));
    }

    #[test]
    fn a_subresource_needs_its_own_rule_or_a_star_slash_rule() {
        let plain = rule(&["update"], &["apps"], &["deployments"], &[]);
        assert!(!plain.allows(&request("update", "apps", "deployments", "status", "web")));
        let status = rule(&["update"], &["apps"], &["deployments/status"], &[]);
        assert!(status.allows(&request("update", "apps", "deployments", "status", "web")));
        assert!(!status.allows(&request("update", "apps", "deployments", "", "web")));
        let any_status = rule(&["update"], &["apps"], &["*/status"], &[]);
        assert!(any_status.allows(&request("update", "apps", "statefulsets", "status", "s")));
        assert!(!any_status.allows(&request("update", "apps", "statefulsets", "scale", "s")));
        assert!(!any_status.allows(&request("update", "apps", "statefulsets", "", "s")));
    }

    #[test]
    fn resource_names_restrict_to_those_objects_and_exclude_collections() {
        let r = rule(&["get", "list"], &[""], &["configmaps"], &["a"]);
        assert!(r.allows(&request("get", "", "configmaps", "", "a")));
        assert!(!r.allows(&request("get", "", "configmaps", "", "b")));
        assert!(!r.allows(&request("list", "", "configmaps", "", "")));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_star_suffix() {
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into(), "/apis/*".into()],
            ..PolicyRule::default()
        };
        assert!(r.allows(&path_request("get", "/healthz")));
        assert!(!r.allows(&path_request("get", "/healthz/etcd")));
        assert!(r.allows(&path_request("get", "/apis/apps/v1")));
        assert!(!r.allows(&path_request("get", "/apis")));
        assert!(!r.allows(&path_request("post", "/healthz")));
    }

    #[test]
    fn resource_rules_never_allow_paths_and_url_rules_never_allow_resources() {
        let resources = rule(&["*"], &["*"], &["*"], &[]);
        assert!(!resources.allows(&path_request("get", "/healthz")));
        let urls = PolicyRule {
            verbs: vec!["*".into()],
            non_resource_urls: vec!["*".into()],
            ..PolicyRule::default()
        };
        assert!(!urls.allows(&request("get", "", "pods", "", "p")));
    }

    #[test]
    fn a_rule_splits_into_the_review_rules_it_holds() {
        let mut r = rule(&["get"], &[""], &["pods"], &["p"]);
        r.non_resource_urls = vec!["/x".into()];
        let (resource, non_resource) = r.split();
        let resource = resource.unwrap();
        assert_eq!(resource.resources, vec!["pods".to_string()]);
        assert_eq!(resource.resource_names, vec!["p".to_string()]);
        assert_eq!(
            non_resource.unwrap().non_resource_urls,
            vec!["/x".to_string()]
        );
        assert_eq!(rule(&["get"], &[""], &[], &[]).split(), (None, None));
    }
}
