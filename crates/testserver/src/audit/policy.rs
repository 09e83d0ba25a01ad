//! [`AuditPolicy`]: which requests are written to the audit log, and how much of each
//! (apiserver `pkg/audit/policy/{reader,checker}.go` and `pkg/apis/audit/validation`).
//!
//! A policy is an ordered list of rules; the first rule whose users, groups, verbs, resources,
//! namespaces or non-resource URLs all match a request gives its level (`None`, `Metadata`,
//! `Request`, `RequestResponse`), the stages left out and whether managedFields are dropped from
//! the logged objects. A request no rule matches is not logged.
//!
//! # Guarantees
//! - A policy is read as kube-apiserver reads `--audit-policy-file`: `audit.k8s.io/v1`
//!   `Policy`, unknown fields ignored (the real server warns and decodes leniently), at least one
//!   rule, and the real validation's messages (`rules[0].level: Unsupported value: "Full": ...`).
//! - Matching follows `checker.go` rule for rule, including `resource/*`, `*/subresource`,
//!   `resourceNames`, `nonResourceURLs` ending in `*`, and a rule-level `omitManagedFields`
//!   overriding the policy's.

use std::path::Path;

use serde_json::{Map, Value};

use crate::authz::Attributes;
use crate::error::Error;
use crate::registry::NameRule;
use crate::validation::name_causes;

/// How much of a request the audit log records (apiserver `audit.Level`), in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Not logged.
    None,
    /// User, verb, object reference, status and annotations.
    Metadata,
    /// Metadata and the request's body.
    Request,
    /// Request and the response's body.
    RequestResponse,
}

impl Level {
    const NAMES: [&'static str; 4] = ["None", "Metadata", "Request", "RequestResponse"];

    fn parse(name: &str) -> Option<Level> {
        match name {
            "None" => Some(Level::None),
            "Metadata" => Some(Level::Metadata),
            "Request" => Some(Level::Request),
            "RequestResponse" => Some(Level::RequestResponse),
            _ => None,
        }
    }

    /// The name an event carries in `level`.
    pub(crate) fn as_str(self) -> &'static str {
        Level::NAMES[self as usize]
    }
}

/// When in a request's life an event is written (apiserver `audit.Stage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// As soon as the request is authenticated, before authorization.
    RequestReceived,
    /// When the response headers of a long-running request (watch, logs, exec) are sent.
    ResponseStarted,
    /// When the response is complete.
    ResponseComplete,
    /// When the handler panicked (never here: the handlers do not panic).
    Panic,
}

impl Stage {
    const NAMES: [&'static str; 4] = [
        "RequestReceived",
        "ResponseStarted",
        "ResponseComplete",
        "Panic",
    ];

    fn parse(name: &str) -> Option<Stage> {
        match name {
            "RequestReceived" => Some(Stage::RequestReceived),
            "ResponseStarted" => Some(Stage::ResponseStarted),
            "ResponseComplete" => Some(Stage::ResponseComplete),
            "Panic" => Some(Stage::Panic),
            _ => None,
        }
    }

    /// The name an event carries in `stage`.
    pub(crate) fn as_str(self) -> &'static str {
        Stage::NAMES[self as usize]
    }
}

/// What the policy decided for one request (apiserver `audit.RequestAuditConfig`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decision {
    pub(crate) level: Level,
    /// The rule's stages and the policy's, left out of the log.
    pub(crate) omit_stages: Vec<Stage>,
    /// Drop `metadata.managedFields` from the logged request and response objects.
    pub(crate) omit_managed_fields: bool,
}

/// A group and the resources of it a rule names (apiserver `audit.GroupResources`).
#[derive(Clone, Debug, Default)]
struct GroupResources {
    group: String,
    resources: Vec<String>,
    resource_names: Vec<String>,
}

/// One rule of a policy (apiserver `audit.PolicyRule`); an empty list matches everything.
#[derive(Clone, Debug)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    non_resource_urls: Vec<String>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: Option<bool>,
}

/// An audit policy (`audit.k8s.io/v1` `Policy`, kube-apiserver's `--audit-policy-file`): with
/// [`crate::ServerOptions::audit_policy`] set, the server writes an audit log as v1.36 does.
///
/// ```
/// let policy = kubegen_testserver::AuditPolicy::from_yaml(
///     "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
/// )
/// .unwrap();
/// let mut options = kubegen_testserver::ServerOptions::default();
/// options.audit_policy = Some(policy);
/// ```
#[derive(Clone, Debug)]
pub struct AuditPolicy {
    rules: Vec<Rule>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
}

impl AuditPolicy {
    /// Reads a policy file, as kube-apiserver reads `--audit-policy-file`.
    ///
    /// # Errors
    /// [`Error::AuditPolicyInvalid`] naming the file and, for a malformed policy, the field.
    pub fn from_file(path: &Path) -> Result<AuditPolicy, Error> {
        let invalid = |reason: String| Error::AuditPolicyInvalid {
            origin: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
        AuditPolicy::parse(&text).map_err(invalid)
    }

    /// Reads a policy from YAML or JSON text.
    ///
    /// # Errors
    /// [`Error::AuditPolicyInvalid`] naming the field of a malformed policy.
    pub fn from_yaml(text: &str) -> Result<AuditPolicy, Error> {
        AuditPolicy::parse(text).map_err(|reason| Error::AuditPolicyInvalid {
            origin: "<inline>".into(),
            reason,
        })
    }

    fn parse(text: &str) -> Result<AuditPolicy, String> {
        let value: Value =
            serde_yaml::from_str(text).map_err(|e| format!("failed decoding: {e}"))?;
        let Value::Object(object) = value else {
            return Err("failed decoding: not an object".into());
        };
        let api_version = str_field(&object, "apiVersion");
        let kind = str_field(&object, "kind");
        if api_version != "audit.k8s.io/v1" || kind != "Policy" {
            return Err(format!(
                "unknown group version field {api_version}, Kind={kind} in policy"
            ));
        }
        let mut errors = Vec::new();
        let omit_stages = stages(&object, "omitStages", "omitStages", &mut errors);
        let rules: Vec<Rule> = match object.get("rules") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(rules)) => rules
                .iter()
                .enumerate()
                .map(|(i, rule)| self::rule(rule, &format!("rules[{i}]"), &mut errors))
                .collect(),
            Some(_) => return Err("rules: must be a list".into()),
        };
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(format!("[{}]", errors.join(", "))),
        }
        if rules.is_empty() {
            return Err("loaded illegal policy with 0 rules".into());
        }
        Ok(AuditPolicy {
            rules,
            omit_stages,
            omit_managed_fields: object
                .get("omitManagedFields")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// The level, omitted stages and managedFields choice for a request (`checker.go`
    /// `EvaluatePolicyRule`): the first matching rule's, `None` when no rule matches.
    pub(crate) fn decide(&self, attributes: &Attributes) -> Decision {
        let Some(rule) = self.rules.iter().find(|r| r.matches(attributes)) else {
            return Decision {
                level: Level::None,
                omit_stages: self.omit_stages.clone(),
                omit_managed_fields: self.omit_managed_fields,
            };
        };
        let mut omit_stages = self.omit_stages.clone();
        for stage in &rule.omit_stages {
            if !omit_stages.contains(stage) {
                omit_stages.push(*stage);
            }
        }
        Decision {
            level: rule.level,
            omit_stages,
            omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
        }
    }
}

impl Rule {
    fn matches(&self, attributes: &Attributes) -> bool {
        let user = &attributes.user;
        if !self.users.is_empty() && !self.users.contains(&user.name) {
            return false;
        }
        if !self.user_groups.is_empty() && !user.groups.iter().any(|g| self.user_groups.contains(g))
        {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.contains(&attributes.verb) {
            return false;
        }
        let resource_request = !attributes.resource.is_empty();
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return resource_request && self.matches_resource(attributes);
        }
        if !self.non_resource_urls.is_empty() {
            return !resource_request
                && self
                    .non_resource_urls
                    .iter()
                    .any(|spec| path_matches(&attributes.path, spec));
        }
        true
    }

    fn matches_resource(&self, attributes: &Attributes) -> bool {
        if !self.namespaces.is_empty() && !self.namespaces.contains(&attributes.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let resource = attributes.resource.as_str();
        let subresource = attributes.subresource.as_str();
        let combined = if subresource.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{subresource}")
        };
        self.resources.iter().any(|gr| {
            if gr.group != attributes.group && gr.group != "*" {
                return false;
            }
            if gr.resources.is_empty() {
                return true;
            }
            let named =
                gr.resource_names.is_empty() || gr.resource_names.contains(&attributes.name);
            named
                && gr.resources.iter().any(|res| {
                    *res == combined
                        || res == "*"
                        || (!subresource.is_empty() && res.strip_prefix("*/") == Some(subresource))
                        || res.strip_suffix("/*") == Some(resource)
                })
        })
    }
}

/// `spec` matches `path` exactly, as `*`, or as a prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || spec
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
}

/// One rule at `at` (`rules[i]`), its validation errors appended to `errors`.
fn rule(value: &Value, at: &str, errors: &mut Vec<String>) -> Rule {
    let empty = Map::new();
    let object = value.as_object().unwrap_or(&empty);
    let level = match object.get("level").and_then(Value::as_str).unwrap_or("") {
        "" => {
            errors.push(format!("{at}.level: Required value"));
            Level::None
        }
        name => Level::parse(name).unwrap_or_else(|| {
            let supported = Level::NAMES.map(|n| format!("\"{n}\"")).join(", ");
            errors.push(format!(
                "{at}.level: Unsupported value: \"{name}\": supported values: {supported}"
            ));
            Level::None
        }),
    };
    let non_resource_urls = strings(object, "nonResourceURLs");
    for (i, url) in non_resource_urls.iter().enumerate() {
        if url == "*" {
            continue;
        }
        let field = format!("{at}.nonResourceURLs[{i}]");
        if !url.starts_with('/') {
            errors.push(format!(
                "{field}: Invalid value: \"{url}\": non-resource URL rules must begin with a '/' character"
            ));
        }
        if url[..url.len().saturating_sub(1)].contains('*') {
            errors.push(format!(
                "{field}: Invalid value: \"{url}\": non-resource URL wildcards '*' must be the final character of the rule"
            ));
        }
    }
    let resources = group_resources(object, &format!("{at}.resources"), errors);
    let namespaces = strings(object, "namespaces");
    if !non_resource_urls.is_empty() && (!resources.is_empty() || !namespaces.is_empty()) {
        errors.push(format!(
            "{at}.nonResourceURLs: Invalid value: {}: rules cannot apply to both regular resources and non-resource URLs",
            json_strings(&non_resource_urls)
        ));
    }
    Rule {
        level,
        users: strings(object, "users"),
        user_groups: strings(object, "userGroups"),
        verbs: strings(object, "verbs"),
        resources,
        namespaces,
        non_resource_urls,
        omit_stages: stages(object, "omitStages", &format!("{at}.omitStages"), errors),
        omit_managed_fields: object.get("omitManagedFields").and_then(Value::as_bool),
    }
}

/// The `resources` of a rule, checked as `validateResources` checks them (whose paths name no
/// index: `rules[0].resources.group`).
fn group_resources(
    rule: &Map<String, Value>,
    at: &str,
    errors: &mut Vec<String>,
) -> Vec<GroupResources> {
    let empty = Map::new();
    let list = rule.get("resources").and_then(Value::as_array);
    let mut out = Vec::new();
    for value in list.into_iter().flatten() {
        let object = value.as_object().unwrap_or(&empty);
        let group = str_field(object, "group").to_string();
        if !group.is_empty() && group != "*" {
            let field = format!("{at}.group");
            for cause in name_causes(NameRule::Subdomain, &group, &field) {
                errors.push(format!("{field}: {}", cause.message));
            }
        }
        let resources = strings(object, "resources");
        let resource_names = strings(object, "resourceNames");
        if !resource_names.is_empty() && resources.is_empty() {
            errors.push(format!(
                "{at}.resourceNames: Invalid value: {}: using resourceNames requires at least one resource",
                json_strings(&resource_names)
            ));
        }
        out.push(GroupResources {
            group,
            resources,
            resource_names,
        });
    }
    out
}

/// The stages of `field`, each checked (`validateOmitStages`).
fn stages(
    object: &Map<String, Value>,
    field: &str,
    at: &str,
    errors: &mut Vec<String>,
) -> Vec<Stage> {
    let mut out = Vec::new();
    for (i, name) in strings(object, field).iter().enumerate() {
        match Stage::parse(name) {
            Some(stage) => out.push(stage),
            None => errors.push(format!(
                "{at}[{i}]: Invalid value: \"{name}\": allowed stages are {}",
                Stage::NAMES.join(",")
            )),
        }
    }
    out
}

fn str_field<'a>(object: &'a Map<String, Value>, field: &str) -> &'a str {
    object.get(field).and_then(Value::as_str).unwrap_or("")
}

fn strings(object: &Map<String, Value>, field: &str) -> Vec<String> {
    object
        .get(field)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A list of strings as a field error shows it: in JSON, `["a","b"]`.
fn json_strings(items: &[String]) -> String {
    Value::from(items.to_vec()).to_string()
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
