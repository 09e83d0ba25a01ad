//! Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`): which fields of a request
//! body the kind's schema does not declare.
//!
//! Mirrors apiserver `endpoints/handlers/rest.go` field validation: built-in kinds are decoded
//! strictly (sigs.k8s.io/json `UnmarshalStrict`) and custom resources pruned against their
//! structural schema; either way the unknown fields become `strict decoding error: unknown field
//! "spec.foo"` (Strict, 400) or one `Warning` header per field (Warn, the default). kubectl relies on
//! it: when the server's OpenAPI v3 document lists `fieldValidation` on the kind's PATCH operation,
//! `kubectl apply --validate=strict` sends `fieldValidation=Strict` and skips client-side
//! validation. The schemas are the ones `/openapi/v3` serves ([`crate::openapi`]), so what kubectl
//! explains and what the server enforces cannot disagree.
//!
//! # Differences from the real server
//! - Only unknown fields are reported; duplicate fields in the JSON text are not.
//! - JSON patches (`application/json-patch+json`) are not checked (the real server checks the
//!   patched object); merge and strategic merge patches are checked as documents, skipping
//!   strategic-merge directives (`$patch`, `$setElementOrder/...`) and `null` deletions.
//! - Unknown fields are only reported, not dropped: a Warn or Ignore write stores them, where the
//!   real server would prune them.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, header};
use serde_json::{Map, Value};

use crate::body::BoxBody;
use crate::query::Query;
use crate::route::Target;
use crate::shared::ApiServer;
use crate::status::ApiError;

/// The `fieldValidation` directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Directive {
    Ignore,
    Warn,
    Strict,
}

impl Directive {
    /// Parses the query parameter of a `verb` request; absent means Warn, the real server's
    /// default.
    ///
    /// # Errors
    /// 422 Invalid on the verb's options kind (`CreateOptions.meta.k8s.io "" is invalid:
    /// fieldValidation: Unsupported value: ...`) for a value the real server does not know.
    pub(crate) fn parse(value: Option<&str>, verb: &str) -> Result<Directive, ApiError> {
        match value {
            None | Some("" | "Warn") => Ok(Directive::Warn),
            Some("Ignore") => Ok(Directive::Ignore),
            Some("Strict") => Ok(Directive::Strict),
            Some(other) => {
                let options = match verb {
                    "create" => "CreateOptions",
                    "update" => "UpdateOptions",
                    _ => "PatchOptions",
                };
                let message = format!(
                    "Unsupported value: \"{other}\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                );
                let cause =
                    crate::status::cause("FieldValueNotSupported", "fieldValidation", message);
                Err(ApiError::invalid("meta.k8s.io", options, "", vec![cause]))
            }
        }
    }
}

/// Checks a create, update or patch body against the kind's schema: the warnings to send (Warn),
/// or the 400 BadRequest the real server answers (Strict).
///
/// # Errors
/// 400 for an unknown `fieldValidation` value or, under Strict, for unknown fields.
pub(crate) fn check(
    api: &ApiServer,
    (target, verb): (&Target, &str),
    headers: &HeaderMap,
    body: &Bytes,
    query: &Query,
) -> Result<Vec<String>, ApiError> {
    let directive = Directive::parse(query.get("fieldValidation"), verb)?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let strategic = content_type.starts_with("application/strategic-merge-patch+json");
    let patch = strategic || content_type.starts_with("application/merge-patch+json");
    // JSON patches are not checked; strategic merge patches on custom resources are refused
    // (415) by the handler, before any decoding.
    let unchecked = content_type.starts_with("application/json-patch+json")
        || (strategic && !target.def.strategic_merge);
    if directive == Directive::Ignore || unchecked {
        return Ok(Vec::new());
    }
    // Bodies that are not JSON objects are the handlers' to reject.
    let Ok(object @ Value::Object(_)) = serde_json::from_slice::<Value>(body) else {
        return Ok(Vec::new());
    };
    let def = &target.def;
    let gvk = (def.group.as_str(), def.version.as_str(), def.kind.as_str());
    let fields = crate::openapi::with_kind_schema(api, gvk, |schema| {
        unknown_fields(schema, &object, patch)
    })?
    .unwrap_or_default();
    if directive == Directive::Strict && !fields.is_empty() {
        return Err(strict_error(def, patch.then_some(body), &fields));
    }
    Ok(fields
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect())
}

/// The Strict rejection: 400 for a create or update body; for a patch, the 422 on field `patch`
/// the real server answers after applying it (whose value is the patched object; the patch itself
/// here).
fn strict_error(
    def: &crate::registry::ResourceDefinition,
    patch: Option<&Bytes>,
    fields: &[String],
) -> ApiError {
    let decoding = strict_error_message(fields);
    match patch {
        None => ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {decoding}",
            kind = def.kind,
            version = def.version,
        )),
        Some(body) => {
            let shown = serde_json::to_string(&String::from_utf8_lossy(body)).unwrap_or_default();
            let message = format!("Invalid value: {shown}: {decoding}");
            ApiError::invalid(
                "",
                "",
                "",
                vec![crate::status::cause("FieldValueInvalid", "patch", message)],
            )
        }
    }
}

/// Adds one `Warning: 299 - "<text>"` header per warning (apiserver `warning.AddWarning`).
pub(crate) fn add_warnings(response: &mut Response<BoxBody>, warnings: &[String]) {
    for text in warnings {
        let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
}

/// A kind's schema: the root schema and the named schemas its `$ref`s point into
/// (`components.schemas` of an OpenAPI v3 document).
pub(crate) struct KindSchema<'a> {
    pub(crate) root: &'a Value,
    pub(crate) components: &'a Map<String, Value>,
}

/// The dotted paths (`spec.template.spec.containers[0].foo`) of the fields in `object` that the
/// schema does not declare, in key order (the real server reports them in document order).
pub(crate) fn unknown_fields(schema: &KindSchema<'_>, object: &Value, patch: bool) -> Vec<String> {
    let mut walk = Walk {
        components: schema.components,
        patch,
        found: Vec::new(),
    };
    walk.value(schema.root, object, "");
    walk.found
}

/// The Status message of a Strict rejection (`strict decoding error: unknown field "a", unknown
/// field "b"`).
pub(crate) fn strict_error_message(fields: &[String]) -> String {
    let listed: Vec<String> = fields
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    format!("strict decoding error: {}", listed.join(", "))
}

/// Follows `$ref` and the single-`allOf` wrapper the v3 documents put around a `$ref` that carries
/// a description or default. Returns the schema and whether it is a named (built-in) type; a
/// reference to a missing schema resolves to `null`.
pub(crate) fn resolve<'a>(
    components: &'a Map<String, Value>,
    schema: &'a Value,
) -> (&'a Value, bool) {
    let mut current = schema;
    let mut named = false;
    for _ in 0..8 {
        let target = match current.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => &all[0],
            _ => current,
        };
        let Some(name) = target
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
        else {
            return (target, named);
        };
        match components.get(name) {
            Some(next) => {
                current = next;
                named = true;
            }
            None => return (&Value::Null, true),
        }
    }
    (current, named)
}

struct Walk<'a> {
    components: &'a Map<String, Value>,
    /// Whether the document is a merge patch: `$` directives and `null` deletions are skipped.
    patch: bool,
    found: Vec<String>,
}

impl<'a> Walk<'a> {
    fn resolve(&self, schema: &'a Value) -> (&'a Value, bool) {
        resolve(self.components, schema)
    }

    fn value(&mut self, schema: &'a Value, value: &Value, path: &str) {
        let (schema, named) = self.resolve(schema);
        if schema.is_null() {
            return;
        }
        match value {
            Value::Object(map) => self.object(schema, named, map, path),
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item_schema, item, &format!("{path}[{i}]"));
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, schema: &'a Value, named: bool, map: &Map<String, Value>, path: &str) {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        let preserve = flag("x-kubernetes-preserve-unknown-fields");
        let embedded = flag("x-kubernetes-embedded-resource");
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties").filter(|a| a.is_object());
        // A named type without declared fields (RawExtension, FieldsV1) holds arbitrary JSON; an
        // inline one (a custom resource's structural schema) declares exactly no fields.
        let opaque = named && properties.is_none() && additional.is_none();
        if opaque || (preserve && properties.is_none() && additional.is_none()) {
            return;
        }
        for (key, field) in map {
            if self.patch && (key.starts_with('$') || field.is_null()) {
                continue;
            }
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            match properties.and_then(|p| p.get(key)).or(additional) {
                Some(field_schema) => self.value(field_schema, field, &child),
                None if preserve => {}
                None if embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") => {}
                None => self.found.push(child),
            }
        }
    }
}

#[cfg(test)]
#[path = "fieldvalidation_tests.rs"]
mod tests;
