//! Which writes a policy or binding applies to: `matchConstraints` of a policy and
//! `matchResources` of a binding (apiserver `pkg/admission/plugin/policy/matching/matching.go`,
//! `generic/policy_matcher.go`). Both are a `MatchResources`: resource rules (with resource
//! names), exclusions, a namespace and an object selector and a match policy.
//!
//! The rules, selectors and the `Equivalent` version fallback are the webhooks' (same Go
//! package upstream: `predicates/rules`, `predicates/namespace`, `predicates/object`), so this
//! reuses `crate::admission::webhook::config`'s.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::admission::plugin::Attributes;
use crate::admission::webhook::config::{Rule, labels_of, selects};

/// A `MatchResources`, as stored (defaults filled in by the strategy).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MatchResources {
    #[serde(default)]
    resource_rules: Vec<NamedRule>,
    #[serde(default)]
    exclude_resource_rules: Vec<NamedRule>,
    #[serde(default)]
    namespace_selector: Option<Value>,
    #[serde(default)]
    object_selector: Option<Value>,
    #[serde(default)]
    match_policy: Option<String>,
}

/// A rule with operations and, optionally, the object names it is limited to.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NamedRule {
    #[serde(flatten)]
    rule: Rule,
    #[serde(default)]
    resource_names: Vec<String>,
}

/// What a write looks like to the matcher.
pub(crate) struct Write<'a> {
    pub(crate) attributes: &'a Attributes<'a>,
    /// The versions the written custom resource is served in (empty for built-ins).
    pub(crate) served: &'a [String],
    /// The labels of the request's namespace (or of a namespace written), `None` for other
    /// cluster-scoped objects.
    pub(crate) namespace_labels: Option<&'a Map<String, Value>>,
    pub(crate) object: Option<&'a Value>,
}

impl MatchResources {
    /// The version the write matches in, when it matches: the request's when a rule names it,
    /// else (`matchPolicy: Equivalent`) the first other served version a rule names. An absent
    /// `resourceRules` (allowed in a binding) matches every resource.
    pub(crate) fn matched_version(&self, write: &Write<'_>) -> Option<String> {
        let scope = write.attributes.scope;
        let requested = scope.request_version.as_ref().unwrap_or(&scope.def.version);
        if !self.selects(write) {
            return None;
        }
        let version = if self.resource_rules.is_empty() {
            requested.clone()
        } else {
            self.named_version(write, requested)?
        };
        let excluded = self
            .exclude_resource_rules
            .iter()
            .any(|r| r.names(write.attributes, &version));
        (!excluded).then_some(version)
    }

    fn named_version(&self, write: &Write<'_>, requested: &String) -> Option<String> {
        let named = |version: &String| {
            self.resource_rules
                .iter()
                .any(|r| r.names(write.attributes, version))
        };
        if named(requested) {
            return Some(requested.clone());
        }
        if self.match_policy.as_deref() == Some("Exact") {
            return None;
        }
        write
            .served
            .iter()
            .filter(|v| *v != requested)
            .find(|v| named(v))
            .cloned()
    }

    /// The namespace and object selectors (the object selector against the new or old object).
    fn selects(&self, write: &Write<'_>) -> bool {
        let namespace_ok = write
            .namespace_labels
            .is_none_or(|labels| selects(self.namespace_selector.as_ref(), labels));
        let objects = [write.object, write.attributes.old];
        let object_ok = objects
            .into_iter()
            .flatten()
            .any(|o| selects(self.object_selector.as_ref(), &labels_of(Some(o))));
        namespace_ok && object_ok
    }
}

impl NamedRule {
    fn names(&self, attributes: &Attributes<'_>, version: &str) -> bool {
        let name_ok = self.resource_names.is_empty()
            || self.resource_names.iter().any(|n| n == attributes.name);
        name_ok && self.rule.matches(attributes, version)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::admission::plugin::Operation;
    use crate::registry::ResourceDefinition;
    use crate::request::route::Target;
    use crate::request::scope::Scope;
    use serde_json::json;

    fn scope(version: &str, request_version: Option<&str>) -> Scope {
        let target = Target {
            def: Arc::new(ResourceDefinition {
                group: "pol.example.com".into(),
                version: version.into(),
                kind: "Widget".into(),
                plural: "widgets".into(),
                namespaced: true,
                ..Default::default()
            }),
            namespace: Some("ns".into()),
            name: Some("w".into()),
            subresource: None,
            watch_path: false,
        };
        Scope {
            target,
            verb: crate::verb::Verb::Create,
            user: crate::authz::UserInfo::admin(),
            dry_run: false,
            request_version: request_version.map(Into::into),
            authorizer: Arc::new(crate::authz::AllowAll),
            format: crate::request::negotiation::WireFormat::Json,
            writer: kubegen_apply::Writer::default(),
            audit: crate::audit::RequestAudit::default(),
        }
    }

    fn resources(value: Value) -> MatchResources {
        serde_json::from_value(value).unwrap()
    }

    fn rule(versions: Value) -> Value {
        json!({"apiGroups": ["pol.example.com"], "apiVersions": versions,
               "operations": ["CREATE"], "resources": ["widgets"], "scope": "*"})
    }

    #[test]
    fn rules_exclusions_names_and_match_policy() {
        let state = crate::storage::State::new(4);
        let scope = scope("v2", None);
        let attributes = Attributes::new(Operation::Create, &scope, "w", &state);
        let served = ["v1".to_string(), "v2".to_string()];
        let object = json!({"metadata": {"name": "w", "labels": {"team": "a"}}});
        let labels = json!({"env": "prod"});
        let write = Write {
            attributes: &attributes,
            served: &served,
            namespace_labels: labels.as_object(),
            object: Some(&object),
        };
        let version = |m: Value| resources(m).matched_version(&write);
        assert_eq!(
            version(json!({"resourceRules": [rule(json!(["v2"]))]})),
            Some("v2".into())
        );
        assert_eq!(
            version(json!({"resourceRules": [rule(json!(["v1"]))]})),
            Some("v1".into())
        );
        assert_eq!(
            version(json!({"resourceRules": [rule(json!(["v1"]))], "matchPolicy": "Exact"})),
            None
        );
        let mut named = rule(json!(["*"]));
        named["resourceNames"] = json!(["other"]);
        assert_eq!(version(json!({"resourceRules": [named.clone()]})), None);
        assert_eq!(
            version(
                json!({"resourceRules": [rule(json!(["*"]))], "excludeResourceRules": [rule(json!(["*"]))]})
            ),
            None
        );
        assert_eq!(
            version(
                json!({"resourceRules": [rule(json!(["*"]))], "excludeResourceRules": [named]})
            ),
            Some("v2".into())
        );
        // A binding without rules matches every resource; selectors still apply.
        assert_eq!(version(json!({})), Some("v2".into()));
        assert_eq!(
            version(json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}})),
            None
        );
        assert_eq!(
            version(json!({"objectSelector": {"matchLabels": {"team": "a"}}})),
            Some("v2".into())
        );
    }
}
