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
    rule_causes(rule, name, name, field)
}

/// Field errors for a `generateName` prefix: checked like a name, except that a trailing '-' is
/// allowed, since the random suffix follows it. The check masks it as apimachinery's
/// `maskTrailingDash` does: the last *two* bytes become one 'a' (an upstream quirk kept because it
/// decides which prefixes pass); the message shows the prefix as sent.
pub(crate) fn prefix_causes(rule: NameRule, prefix: &str, field: &str) -> Vec<Cause> {
    let bytes = prefix.as_bytes();
    let masked = match bytes {
        [head @ .., _, b'-'] => format!("{}a", String::from_utf8_lossy(head)),
        _ => prefix.to_string(),
    };
    rule_causes(rule, &masked, prefix, field)
}

/// Field errors for `checked` under `rule`, quoting `shown` as the invalid value.
fn rule_causes(rule: NameRule, checked: &str, shown: &str, field: &str) -> Vec<Cause> {
    let name = checked;
    let bad = |msg: &str| {
        vec![cause(
            "FieldValueInvalid",
            field,
            format!("Invalid value: \"{shown}\": {msg}"),
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn prefixes_may_end_in_a_dash_and_are_quoted_as_sent() {
        assert!(prefix_causes(NameRule::Subdomain, "web-", "metadata.generateName").is_empty());
        assert!(prefix_causes(NameRule::Label, "ns-", "metadata.generateName").is_empty());
        let causes = prefix_causes(NameRule::Subdomain, "Web-", "metadata.generateName");
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "metadata.generateName");
        assert!(
            causes[0]
                .message
                .starts_with("Invalid value: \"Web-\": a lowercase RFC 1123 subdomain"),
            "{}",
            causes[0].message
        );
        // A lone dash is not masked (a 1.15 server panics here; later ones check it as is).
        assert_eq!(prefix_causes(NameRule::Subdomain, "-", "f").len(), 1);
        // A multibyte character before the dash is cut, never sliced inside a character.
        assert_eq!(prefix_causes(NameRule::Subdomain, "aé-", "f").len(), 1);
    }
}
