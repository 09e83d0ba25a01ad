//! `MutatingWebhookConfiguration` and `ValidatingWebhookConfiguration`
//! (`pkg/registry/admissionregistration/{mutating,validating}webhookconfiguration/strategy.go`,
//! defaults from `pkg/apis/admissionregistration/v1/defaults.go`, checks from
//! `pkg/apis/admissionregistration/validation/validation.go`): the objects the webhook admission
//! plugin (`crate::admission::webhook`) reads on every write.
//!
//! Defaults as v1.36 fills them (`failurePolicy: Fail`, `matchPolicy: Equivalent`, empty
//! selectors, `timeoutSeconds: 10`, a rule's `scope: "*"`, a mutating webhook's
//! `reinvocationPolicy: Never`, a service's `port: 443`), and the checks a configuration most often
//! fails, with v1.36's causes: `sideEffects` and `admissionReviewVersions` required, the webhook
//! name a domain of three segments, exactly one of `url` and `service`, and `matchConditions`:
//! at most 64, each named (a qualified name, once) with an expression that compiles.
//!
//! # Differences from the real server
//! The remaining checks (rule and selector syntax, URL form, unique webhook names) are not made.
//! A match condition's expression is parsed but not type-checked (v1.36 also rejects one that
//! does not evaluate to a bool), and a parse error is worded by kubegen's CEL parser.

use serde_json::{Map, Value, json};

use crate::kinds::strategy::Strategy;
use crate::status::{ApiError, Cause, cause};

/// The strategy of both webhook configuration kinds; `mutating` adds `reinvocationPolicy`.
pub(crate) struct WebhookConfigurations {
    pub(crate) mutating: bool,
}

impl Strategy for WebhookConfigurations {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        self.prepare(object)
    }

    fn prepare_for_update(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        self.prepare(object)
    }
}

impl WebhookConfigurations {
    fn kind(&self) -> &'static str {
        if self.mutating {
            "MutatingWebhookConfiguration"
        } else {
            "ValidatingWebhookConfiguration"
        }
    }

    /// Defaults every webhook, then validates them.
    ///
    /// # Errors
    /// 422 Invalid with one cause per problem.
    fn prepare(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        if let Some(webhooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) {
            for (i, webhook) in webhooks.iter_mut().enumerate() {
                if let Some(webhook) = webhook.as_object_mut() {
                    default_webhook(webhook, self.mutating);
                    causes.extend(check_webhook(webhook, &format!("webhooks[{i}]")));
                }
            }
        }
        invalid_unless_empty(object, self.kind(), causes)
    }
}

/// 422 Invalid naming `kind` and the object's name when `causes` is not empty.
pub(crate) fn invalid_unless_empty(
    object: &Map<String, Value>,
    kind: &str,
    causes: Vec<Cause>,
) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    let name = object
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    Err(ApiError::invalid(
        "admissionregistration.k8s.io",
        kind,
        name,
        causes,
    ))
}

fn default_webhook(webhook: &mut Map<String, Value>, mutating: bool) {
    let mut defaults = vec![
        ("failurePolicy", json!("Fail")),
        ("matchPolicy", json!("Equivalent")),
        ("namespaceSelector", json!({})),
        ("objectSelector", json!({})),
        ("timeoutSeconds", json!(10)),
    ];
    if mutating {
        defaults.push(("reinvocationPolicy", json!("Never")));
    }
    for (field, value) in defaults {
        webhook.entry(field).or_insert(value);
    }
    if let Some(rules) = webhook.get_mut("rules").and_then(Value::as_array_mut) {
        for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
            rule.entry("scope").or_insert(json!("*"));
        }
    }
    if let Some(service) = webhook
        .get_mut("clientConfig")
        .and_then(|c| c.get_mut("service"))
        .and_then(Value::as_object_mut)
    {
        service.entry("port").or_insert(json!(443));
    }
}

fn check_webhook(webhook: &Map<String, Value>, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = webhook.get("name").and_then(Value::as_str).unwrap_or("");
    if name.split('.').filter(|s| !s.is_empty()).count() < 3 {
        causes.push(cause(
            "FieldValueInvalid",
            &format!("{path}.name"),
            format!("Invalid value: \"{name}\": should be a domain with at least three segments separated by dots"),
        ));
    }
    let side_effects = webhook.get("sideEffects").and_then(Value::as_str);
    match side_effects {
        None | Some("") => causes.push(cause(
            "FieldValueRequired",
            &format!("{path}.sideEffects"),
            "Required value: must specify one of None, NoneOnDryRun",
        )),
        Some("None" | "NoneOnDryRun") => {}
        Some(other) => causes.push(cause(
            "FieldValueNotSupported",
            &format!("{path}.sideEffects"),
            format!("Unsupported value: \"{other}\": supported values: \"None\", \"NoneOnDryRun\""),
        )),
    }
    let versions = webhook
        .get("admissionReviewVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| !v.is_empty());
    if !versions {
        causes.push(cause(
            "FieldValueRequired",
            &format!("{path}.admissionReviewVersions"),
            "Required value: must specify one of v1, v1beta1",
        ));
    }
    causes.extend(check_match_conditions(webhook, path));
    let client = webhook.get("clientConfig");
    let url = client.and_then(|c| c.get("url")).is_some();
    let service = client.and_then(|c| c.get("service")).is_some();
    if url == service {
        causes.push(cause(
            "FieldValueRequired",
            &format!("{path}.clientConfig"),
            "Required value: exactly one of url or service is required",
        ));
    }
    causes
}

/// Most match conditions a webhook may have.
const MAX_MATCH_CONDITIONS: usize = 64;

/// `validateMatchConditions` of `pkg/apis/admissionregistration/validation/validation.go`.
pub(crate) fn check_match_conditions(webhook: &Map<String, Value>, path: &str) -> Vec<Cause> {
    let Some(conditions) = webhook.get("matchConditions").and_then(Value::as_array) else {
        return Vec::new();
    };
    let path = format!("{path}.matchConditions");
    if conditions.len() > MAX_MATCH_CONDITIONS {
        return vec![cause(
            "FieldValueTooMany",
            &path,
            format!(
                "Too many: {}: must have at most {MAX_MATCH_CONDITIONS} items",
                conditions.len()
            ),
        )];
    }
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let text = |key: &str| condition.get(key).and_then(Value::as_str).unwrap_or("");
        let expression = text("expression");
        if expression.is_empty() {
            causes.push(cause(
                "FieldValueRequired",
                &format!("{at}.expression"),
                "Required value",
            ));
        } else if let Err(error) = kubegen_apiextensions::Expression::compile(expression) {
            causes.push(cause(
                "FieldValueInvalid",
                &format!("{at}.expression"),
                format!("Invalid value: {}: {error}", json!(expression)),
            ));
        }
        let name = text("name");
        let field = format!("{at}.name");
        if name.is_empty() {
            causes.push(cause("FieldValueRequired", &field, "Required value"));
        } else if seen.contains(&name) {
            causes.push(cause(
                "FieldValueDuplicate",
                &field,
                format!("Duplicate value: {}", json!(name)),
            ));
        } else if let Some(why) = qualified_name_problem(name) {
            causes.push(cause(
                "FieldValueInvalid",
                &field,
                format!("Invalid value: {}: {why}", json!(name)),
            ));
        }
        seen.push(name);
    }
    causes
}

/// apimachinery `IsQualifiedName`'s complaint about the name part (and an empty prefix).
fn qualified_name_problem(name: &str) -> Option<String> {
    let (prefix, part) = match name.split_once('/') {
        Some((prefix, part)) => (Some(prefix), part),
        None => (None, name),
    };
    if prefix == Some("") {
        return Some("prefix part must be non-empty".into());
    }
    if part.is_empty() {
        return Some("name part must be non-empty".into());
    }
    if part.len() > 63 {
        return Some("name part must be no more than 63 bytes".into());
    }
    let inner_ok = part
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let ends_ok = part.starts_with(|c: char| c.is_ascii_alphanumeric())
        && part.ends_with(|c: char| c.is_ascii_alphanumeric());
    (!(inner_ok && ends_ok)).then(|| {
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and \
         end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex \
         used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            .into()
    })
}
