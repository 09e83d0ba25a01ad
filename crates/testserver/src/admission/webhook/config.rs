//! Which webhooks a write goes to: the stored Mutating/ValidatingWebhookConfigurations, read as
//! the real server's configuration manager reads them (configurations in name order, webhooks in
//! their order), and the matching of `rules`, `namespaceSelector` and `objectSelector`
//! (apiserver `pkg/admission/plugin/webhook/{configuration,predicates/rules,predicates/namespace,
//! predicates/object}`).
//!
//! A webhook matches in the version the request names when a rule names it; else, under
//! `matchPolicy: Equivalent` (the default), in the first other version of the same resource its
//! rules name (`generic/webhook.go` `ShouldCallHook`): the other versions a custom resource's CRD
//! serves, in the CRD's order (built-in kinds here are served in one version). That version is
//! [`Webhook::version`]: the webhook gets the object in it. `matchConditions` are CEL
//! expressions (`kubegen_apiextensions::Expression`) over `object`, `oldObject` and `request`
//! (`pkg/admission/plugin/webhook/matchconditions/matcher.go`).

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::admission::plugin::{Attributes, Operation};
use crate::kinds::namespace::{namespaces, ns_key};
use crate::registry::ResourceKey;
use crate::storage::State;

/// One webhook of a configuration, with the defaults the configuration's strategy stored.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Webhook {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) client_config: ClientConfig,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    pub(crate) failure_policy: Option<String>,
    #[serde(default)]
    namespace_selector: Option<Value>,
    #[serde(default)]
    object_selector: Option<Value>,
    #[serde(default)]
    pub(crate) timeout_seconds: Option<u64>,
    #[serde(default)]
    pub(crate) admission_review_versions: Vec<String>,
    #[serde(default)]
    pub(crate) reinvocation_policy: Option<String>,
    #[serde(default)]
    match_conditions: Vec<MatchCondition>,
    #[serde(default)]
    match_policy: Option<String>,
    /// The version of the written resource the webhook matched, which it is sent the object in.
    #[serde(skip)]
    pub(crate) version: String,
    /// The configuration it belongs to, for its audit annotations.
    #[serde(skip)]
    pub(crate) configuration: String,
    /// Its place among all the webhooks of its phase (configurations in name order), which the
    /// audit annotations of a mutating webhook name (`round_0_index_<i>`).
    #[serde(skip)]
    pub(crate) index: usize,
}

/// One of a webhook's `matchConditions`.
#[derive(Clone, Debug, Deserialize)]
struct MatchCondition {
    #[serde(default)]
    expression: String,
}

impl Webhook {
    /// Whether every match condition holds for the request (`variables`: `object`, `oldObject`,
    /// `request`): false as soon as one is false, even when others fail to evaluate.
    ///
    /// # Errors
    /// `expression '<e>' resulted in error: <why>` for each that failed (joined as an aggregate),
    /// when none is false.
    pub(crate) fn conditions_hold(&self, variables: &[(&str, &Value)]) -> Result<bool, String> {
        let mut failed = Vec::new();
        for condition in &self.match_conditions {
            let source = &condition.expression;
            let outcome = kubegen_apiextensions::Expression::compile(source)
                .map_err(|e| e.to_string())
                .and_then(|e| e.evaluate_bool(variables));
            match outcome {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(why) => failed.push(format!("expression '{source}' resulted in error: {why}")),
            }
        }
        match failed.len() {
            0 => Ok(true),
            1 => Err(failed.remove(0)),
            _ => Err(format!("[{}]", failed.join(", "))),
        }
    }
}

/// Where the webhook is served.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClientConfig {
    pub(crate) url: Option<String>,
    pub(crate) service: Option<ServiceReference>,
    #[serde(default)]
    pub(crate) ca_bundle: Option<String>,
}

/// `clientConfig.service`.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ServiceReference {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) path: Option<String>,
    pub(crate) port: Option<u16>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Rule {
    #[serde(default)]
    operations: Vec<String>,
    #[serde(default)]
    api_groups: Vec<String>,
    #[serde(default)]
    api_versions: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
    scope: Option<String>,
}

/// Mutating or validating configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Mutating,
    Validating,
}

impl Phase {
    fn plural(self) -> &'static str {
        match self {
            Phase::Mutating => "mutatingwebhookconfigurations",
            Phase::Validating => "validatingwebhookconfigurations",
        }
    }
}

/// The webhooks of `phase` whose rules (in the request's version or, `served` being the versions
/// of the written custom resource, an equivalent one) and namespace selector match the write,
/// configurations in name order. Writes to the webhook configurations themselves are exempt, as
/// on the real server (a broken webhook could otherwise never be removed).
pub(crate) fn matching(
    (phase, served): (Phase, &[String]),
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Vec<Webhook> {
    let (state, scope) = (attributes.state, attributes.scope);
    if scope.def.group == "admissionregistration.k8s.io" {
        return Vec::new();
    }
    let key = ResourceKey::new("admissionregistration.k8s.io", "v1", phase.plural());
    let mut configurations = state.store.all(&key, None);
    configurations.sort_by(|a, b| {
        crate::object::meta_str(&a.value, "name").cmp(crate::object::meta_str(&b.value, "name"))
    });
    let labels = namespace_labels(state, attributes, object);
    configurations
        .iter()
        .filter_map(|c| {
            let hooks = serde_json::from_value::<Vec<Webhook>>(c.value.get("webhooks")?.clone());
            let name = crate::object::meta_str(&c.value, "name");
            Some(hooks.ok()?.into_iter().map(move |mut w| {
                w.configuration = name.to_string();
                w
            }))
        })
        .flatten()
        .enumerate()
        .filter_map(|(index, mut w)| {
            w.index = index;
            w.version = w.matched_version(attributes, served)?;
            Some(w)
        })
        .filter(|w| {
            labels
                .as_ref()
                .is_none_or(|l| selects(w.namespace_selector.as_ref(), l))
        })
        .collect()
}

/// The labels a `namespaceSelector` is matched against: the request namespace's, or the
/// namespace's own for a write to a namespace; `None` (always matches) for other cluster-scoped
/// objects.
pub(crate) fn namespace_labels(
    state: &State,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Option<Map<String, Value>> {
    let scope = attributes.scope;
    let is_namespace = scope.def.group.is_empty() && scope.def.plural == "namespaces";
    if is_namespace {
        return Some(labels_of(object.or(attributes.old)));
    }
    let ns = scope.namespace.as_deref()?;
    let stored = state.store.get(&namespaces(), &ns_key(ns));
    Some(labels_of(stored.as_ref().map(|s| &*s.value)))
}

pub(crate) fn labels_of(object: Option<&Value>) -> Map<String, Value> {
    object
        .and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

impl Webhook {
    /// The version this webhook is called in for the write, if any: the request's when a rule
    /// names it, else (`Equivalent`) the first of `served` a rule names.
    fn matched_version(&self, attributes: &Attributes<'_>, served: &[String]) -> Option<String> {
        let scope = attributes.scope;
        let requested = scope.request_version.as_ref().unwrap_or(&scope.def.version);
        let named = |version: &String| self.rules.iter().any(|r| r.matches(attributes, version));
        if named(requested) {
            return Some(requested.clone());
        }
        if self.match_policy.as_deref() == Some("Exact") {
            return None;
        }
        served
            .iter()
            .filter(|v| *v != requested)
            .find(|v| named(v))
            .cloned()
    }

    /// Whether the `objectSelector` matches the new or the old object's labels.
    pub(crate) fn selects_object(&self, object: Option<&Value>, old: Option<&Value>) -> bool {
        [object, old]
            .into_iter()
            .flatten()
            .any(|o| selects(self.object_selector.as_ref(), &labels_of(Some(o))))
    }
}

impl Rule {
    /// Whether the rule names the write, its resource taken in `version`.
    pub(crate) fn matches(&self, attributes: &Attributes<'_>, version: &str) -> bool {
        let scope = attributes.scope;
        let operation = match attributes.operation {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        };
        let any = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
        let scoped = match self.scope.as_deref() {
            Some("Cluster") => !scope.def.namespaced,
            Some("Namespaced") => scope.def.namespaced,
            _ => true,
        };
        any(&self.operations, operation)
            && any(&self.api_groups, &scope.def.group)
            && any(&self.api_versions, version)
            && self
                .resources
                .iter()
                .any(|r| resource_matches(r, &scope.def.plural, scope.subresource.as_deref()))
            && scoped
    }
}

/// A rule's resource (`deployments`, `*`, `deployments/status`, `*/status`, `*/*`) against the
/// request's resource and subresource.
fn resource_matches(rule: &str, resource: &str, subresource: Option<&str>) -> bool {
    let (rule_resource, rule_sub) = match rule.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (rule, None),
    };
    let resource_ok = rule_resource == "*" || rule_resource == resource;
    let sub_ok = match (rule_sub, subresource) {
        (None, None) => true,
        (Some("*"), _) => true,
        (Some(want), Some(have)) => want == have,
        _ => false,
    };
    resource_ok && sub_ok
}

/// A `metav1.LabelSelector` (absent or `{}` selects everything) against `labels`.
pub(crate) fn selects(selector: Option<&Value>, labels: &Map<String, Value>) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    match_labels
        && expressions.iter().all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(Value::as_str) {
                Some("In") => label(key).is_some_and(|l| values.contains(&l)),
                Some("NotIn") => label(key).is_none_or(|l| !values.contains(&l)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rule_resources_match_subresources_only_when_named() {
        assert!(resource_matches("deployments", "deployments", None));
        assert!(!resource_matches(
            "deployments",
            "deployments",
            Some("status")
        ));
        assert!(resource_matches(
            "deployments/status",
            "deployments",
            Some("status")
        ));
        assert!(resource_matches("*", "pods", None));
        assert!(!resource_matches("*", "pods", Some("status")));
        assert!(resource_matches("*/*", "pods", Some("status")));
        assert!(resource_matches("*/status", "pods", Some("status")));
        assert!(!resource_matches("pods", "deployments", None));
    }

    #[test]
    fn label_selectors_follow_match_labels_and_expressions() {
        let labels = json!({"team": "a", "tier": "web"});
        let labels = labels.as_object().unwrap();
        assert!(selects(None, labels));
        assert!(selects(Some(&json!({})), labels));
        assert!(selects(
            Some(&json!({"matchLabels": {"team": "a"}})),
            labels
        ));
        assert!(!selects(
            Some(&json!({"matchLabels": {"team": "b"}})),
            labels
        ));
        let exp = |op: &str, values: Value| json!({"matchExpressions": [{"key": "tier", "operator": op, "values": values}]});
        assert!(selects(Some(&exp("In", json!(["web", "db"]))), labels));
        assert!(!selects(Some(&exp("NotIn", json!(["web"]))), labels));
        assert!(selects(Some(&exp("Exists", json!([]))), labels));
        assert!(!selects(Some(&exp("DoesNotExist", json!([]))), labels));
    }
}
