//! Object validation shared by every kind: names (apimachinery `util/validation`), namespace and
//! type-meta consistency with the URL (apiserver `endpoints/handlers/create.go`, `update.go`).
//!
//! The real server validates each kind's spec too; a test double only validates metadata, which is
//! what clients and controllers commonly trip over (a bad generated name, a forgotten namespace).

use crate::registry::{NameRule, ResourceDefinition};
use crate::status::{ApiError, Cause, cause};

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn is_label_like(s: &str, first_alpha: bool) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && s.bytes().next().is_some_and(|b| {
            if first_alpha {
                b.is_ascii_lowercase()
            } else {
                b != b'-'
            }
        })
        && !s.ends_with('-')
}

/// RFC 1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub(crate) fn is_dns1123_label(s: &str) -> bool {
    is_label_like(s, false)
}

/// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// Field errors for `name` under `rule` (empty when valid).
pub(crate) fn name_causes(rule: NameRule, name: &str, field: &str) -> Vec<Cause> {
    let bad = |msg: &str| {
        vec![cause(
            "FieldValueInvalid",
            field,
            format!("Invalid value: \"{name}\": {msg}"),
        )]
    };
    if name == "." || name == ".." {
        return bad("may not be '.' or '..'");
    }
    if name.contains('/') || name.contains('%') {
        return bad("may not contain '/' or '%'");
    }
    match rule {
        NameRule::Subdomain if !is_dns1123_subdomain(name) => bad(SUBDOMAIN_MSG),
        NameRule::Label if !is_dns1123_label(name) => bad(LABEL_MSG),
        NameRule::Dns1035Label if !is_label_like(name, true) => bad(DNS1035_MSG),
        _ => Vec::new(),
    }
}

/// Checks `apiVersion`/`kind` of a request body against the URL's resource, filling them in when
/// absent.
///
/// # Errors
/// 400 BadRequest worded like the real server when either is present and different.
pub(crate) fn check_type_meta(
    object: &mut serde_json::Map<String, serde_json::Value>,
    def: &ResourceDefinition,
) -> Result<(), ApiError> {
    let expected_version = def.api_version();
    match object.get("apiVersion").and_then(|v| v.as_str()) {
        Some(v) if v != expected_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expected_version})"
            )));
        }
        _ => {}
    }
    match object.get("kind").and_then(|v| v.as_str()) {
        Some(k) if k != def.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                def.kind
            )));
        }
        _ => {}
    }
    object.insert("apiVersion".into(), expected_version.into());
    object.insert("kind".into(), def.kind.clone().into());
    Ok(())
}

/// The most data a ConfigMap or Secret may hold (`core.MaxSecretSize`, 1 MiB).
const MAX_DATA_BYTES: usize = 1024 * 1024;

/// The 422 cause for a ConfigMap whose `data` plus `binaryData`, or a Secret whose `data` plus
/// `stringData`, hold more than 1 MiB of values (binary values counted decoded), as the real
/// `ValidateConfigMap` / `ValidateSecret` report it; None for other kinds or smaller objects.
pub(crate) fn data_size_cause(
    def: &ResourceDefinition,
    object: &serde_json::Value,
) -> Option<Cause> {
    let values = |field: &str| -> Vec<&str> {
        object
            .get(field)
            .and_then(serde_json::Value::as_object)
            .map(|m| m.values().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default()
    };
    let decoded = |text: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_or(text.len(), |bytes| bytes.len())
    };
    let (total, field): (usize, &str) = match (def.group.as_str(), def.plural.as_str()) {
        ("", "configmaps") => (
            values("data").iter().map(|v| v.len()).sum::<usize>()
                + values("binaryData")
                    .iter()
                    .map(|v| decoded(v))
                    .sum::<usize>(),
            // The real validation reports the whole object, with an empty path printed as `[]`.
            "[]",
        ),
        ("", "secrets") => (
            values("data").iter().map(|v| decoded(v)).sum::<usize>()
                + values("stringData").iter().map(|v| v.len()).sum::<usize>(),
            "data",
        ),
        _ => return None,
    };
    (total > MAX_DATA_BYTES).then(|| {
        cause(
            "FieldValueTooLong",
            field,
            format!("Too long: may not be more than {MAX_DATA_BYTES} bytes"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configmaps_and_secrets_over_one_mebibyte_are_too_long() {
        let def = |plural: &str| ResourceDefinition {
            version: "v1".into(),
            plural: plural.into(),
            ..ResourceDefinition::default()
        };
        let half = "x".repeat(MAX_DATA_BYTES / 2);
        let exactly = serde_json::json!({"data": {"a": half, "b": half}});
        assert_eq!(data_size_cause(&def("configmaps"), &exactly), None);
        let over = serde_json::json!({"data": {"a": half, "b": format!("{half}y")}});
        let cause = data_size_cause(&def("configmaps"), &over).unwrap();
        assert_eq!(cause.reason, "FieldValueTooLong");
        assert_eq!(
            cause.message,
            "Too long: may not be more than 1048576 bytes"
        );
        use base64::Engine;
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_DATA_BYTES + 1]);
        let secret = serde_json::json!({"data": {"a": encoded}});
        assert_eq!(
            data_size_cause(&def("secrets"), &secret).unwrap().field,
            "data"
        );
        assert_eq!(data_size_cause(&def("pods"), &over), None);
    }

    #[test]
    fn subdomain_names_follow_rfc_1123() {
        for ok in ["a", "a-b", "a.b", "0abc", "x.y-z.example"] {
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in ["", "A", "-a", "a-", "a_b", "a..b", ".a"] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }

    #[test]
    fn invalid_names_produce_one_field_cause() {
        let causes = name_causes(NameRule::Subdomain, "Bad_Name", "metadata.name");
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].reason, "FieldValueInvalid");
        assert!(
            causes[0]
                .message
                .starts_with("Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain")
        );
        assert!(name_causes(NameRule::Label, "a.b", "metadata.name").len() == 1);
        assert!(name_causes(NameRule::Dns1035Label, "1abc", "metadata.name").len() == 1);
        assert!(name_causes(NameRule::PathSegment, "a:b.c", "metadata.name").is_empty());
    }
}
