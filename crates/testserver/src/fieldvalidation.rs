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

pub(crate) use crate::body::add_warnings;
use bytes::Bytes;
use http::{HeaderMap, header};
use serde_json::Value;

use crate::apiserver::ApiServer;
use crate::openapi::unknown_fields::{strict_error_message, unknown_fields};
use crate::request::query::Query;
use crate::request::route::Target;
use crate::status::ApiError;
use crate::verb::Verb;

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
    pub(crate) fn parse(value: Option<&str>, verb: Verb) -> Result<Directive, ApiError> {
        match value {
            None | Some("" | "Warn") => Ok(Directive::Warn),
            Some("Ignore") => Ok(Directive::Ignore),
            Some("Strict") => Ok(Directive::Strict),
            Some(other) => {
                let options = match verb {
                    Verb::Create => "CreateOptions",
                    Verb::Update => "UpdateOptions",
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
    (target, verb): (&Target, Verb),
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

#[cfg(test)]
#[path = "fieldvalidation_tests.rs"]
mod tests;
