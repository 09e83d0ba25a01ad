//! One audit event (`audit.k8s.io/v1` `Event`, apiserver `pkg/apis/audit/v1/types.go`) and the
//! line kube-apiserver's log backend writes for it (`plugin/pkg/audit/log/backend.go`).
//!
//! # Guarantees
//! - Fields in the order and with the omissions of the Go type's JSON encoding (`omitempty`):
//!   `kind`, `apiVersion`, `level`, `auditID`, `stage`, `requestURI`, `verb`, `user`,
//!   `impersonatedUser`, `sourceIPs`, `userAgent`, `objectRef`, `responseStatus`, `requestObject`,
//!   `responseObject`, `requestReceivedTimestamp`, `stageTimestamp`, `annotations` (keys sorted).
//! - Timestamps in UTC with six fractional digits (`metav1.MicroTime`).
//! - Strings escaped as Go's encoder escapes them: `&`, `<`, `>` as `\u0026`, `\u003c`,
//!   `\u003e`, so `requestURI` reads `?a=1\u0026b=2` as in the real log.
//!
//! # Differences from kube-apiserver
//! The logged objects are the server's JSON with their keys in alphabetical order (the real
//! server writes them in its Go types' field order); JSON readers see the same values.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

/// The user of an event (`authentication/v1` `UserInfo`).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct EventUser {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) groups: Vec<String>,
}

/// What a resource request acts on (`audit.k8s.io/v1` `ObjectReference`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObjectRef {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) uid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) resource_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) subresource: String,
}

/// The `responseStatus` of an event (`metav1.Status` without its type fields), in Go's field
/// order: what a `Status` answer said, or only the code of any other answer.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct ResponseStatus {
    metadata: Value,
    #[serde(skip_serializing_if = "String::is_empty")]
    status: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<StatusDetails>,
    #[serde(skip_serializing_if = "is_zero")]
    code: u16,
}

/// `metav1.StatusDetails`, in Go's field order.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusDetails {
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    causes: Vec<StatusCause>,
    #[serde(skip_serializing_if = "is_zero_u64")]
    retry_after_seconds: u64,
}

/// `metav1.StatusCause`, in Go's field order.
#[derive(Clone, Debug, Default, Serialize)]
struct StatusCause {
    #[serde(skip_serializing_if = "String::is_empty")]
    reason: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    field: String,
}

fn is_zero(code: &u16) -> bool {
    *code == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl ResponseStatus {
    /// The status of an answer with HTTP status `code` whose body is `body` (when it is JSON):
    /// a `Status` body's fields, with `code` (a successful delete's `Status` carries none).
    pub(crate) fn of(code: u16, body: Option<&Value>) -> ResponseStatus {
        let status = body.filter(|b| b.get("kind").and_then(Value::as_str) == Some("Status"));
        let Some(status) = status else {
            return ResponseStatus {
                metadata: Value::Object(Default::default()),
                code,
                ..ResponseStatus::default()
            };
        };
        let text = |v: &Value, field: &str| {
            v.get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let details = status.get("details").map(|d| StatusDetails {
            name: text(d, "name"),
            group: text(d, "group"),
            kind: text(d, "kind"),
            uid: text(d, "uid"),
            causes: d
                .get("causes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| StatusCause {
                    reason: text(c, "reason"),
                    message: text(c, "message"),
                    field: text(c, "field"),
                })
                .collect(),
            retry_after_seconds: d
                .get("retryAfterSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        });
        ResponseStatus {
            metadata: status
                .get("metadata")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
            status: text(status, "status"),
            message: text(status, "message"),
            reason: text(status, "reason"),
            details,
            code,
        }
    }

    /// The status kube-apiserver records for a request whose authentication failed.
    pub(crate) fn unauthorized() -> ResponseStatus {
        ResponseStatus {
            metadata: Value::Object(Default::default()),
            status: "Failure".into(),
            message: "Unauthorized".into(),
            reason: "Unauthorized".into(),
            details: None,
            code: 401,
        }
    }
}

/// An audit event as it is being filled in; each stage writes a copy of it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Event {
    pub(crate) kind: &'static str,
    pub(crate) api_version: &'static str,
    pub(crate) level: &'static str,
    #[serde(rename = "auditID")]
    pub(crate) audit_id: String,
    pub(crate) stage: &'static str,
    #[serde(rename = "requestURI")]
    pub(crate) request_uri: String,
    pub(crate) verb: String,
    pub(crate) user: EventUser,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub(crate) source_ips: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) user_agent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) object_ref: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_status: Option<ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_object: Option<Value>,
    pub(crate) request_received_timestamp: String,
    pub(crate) stage_timestamp: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) annotations: BTreeMap<String, String>,
}

impl Event {
    /// An event for a request received at `received`, at `level`, before any stage.
    pub(crate) fn new(audit_id: String, level: &'static str, received: Timestamp) -> Event {
        let at = micro_time(received);
        Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level,
            audit_id,
            stage: "",
            request_uri: String::new(),
            verb: String::new(),
            user: EventUser::default(),
            source_ips: Vec::new(),
            user_agent: String::new(),
            object_ref: None,
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: at.clone(),
            stage_timestamp: at,
            annotations: BTreeMap::new(),
        }
    }

    /// The log line of this event, without the newline: JSON escaped as Go's encoder does.
    pub(crate) fn to_line(&self) -> String {
        go_json(self)
    }
}

/// `at` as `metav1.MicroTime` writes it: `2026-11-28T23:24:36.720732Z`.
pub(crate) fn micro_time(at: Timestamp) -> String {
    let micros = at.subsec_microsecond();
    format!("{}.{micros:06}Z", at.strftime("%Y-%m-%dT%H:%M:%S"))
}

/// `value` in JSON as Go's `encoding/json` writes it (`json.Marshal`): what annotation values
/// holding JSON (`validation.policy.admission.k8s.io/validation_failure`) are made of.
pub(crate) fn go_json<T: Serialize>(value: &T) -> String {
    go_escape(&serde_json::to_string(value).unwrap_or_default())
}

/// Escapes, inside JSON text, the characters Go's `encoding/json` escapes and serde_json does
/// not. They only occur inside strings, so the text stays the same JSON value.
fn go_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '&' => out.push_str("\\u0026"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_escape_as_go_and_keep_go_field_order() {
        let at: Timestamp = "2026-11-28T23:24:36.7207329Z".parse().unwrap();
        let mut event = Event::new("id".into(), "Metadata", at);
        event.stage = "ResponseComplete";
        event.request_uri = "/api/v1/x?a=1&b=<2>".into();
        event.verb = "list".into();
        event.response_status = Some(ResponseStatus::of(200, None));
        event.annotations.insert("z".into(), "1".into());
        event.annotations.insert("a".into(), "2".into());
        assert_eq!(
            event.to_line(),
            concat!(
                r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id","#,
                r#""stage":"ResponseComplete","requestURI":"/api/v1/x?a=1\u0026b=\u003c2\u003e","#,
                r#""verb":"list","user":{},"responseStatus":{"metadata":{},"code":200},"#,
                r#""requestReceivedTimestamp":"2026-11-28T23:24:36.720732Z","#,
                r#""stageTimestamp":"2026-11-28T23:24:36.720732Z","annotations":{"a":"2","z":"1"}}"#
            )
        );
    }

    #[test]
    fn status_answers_keep_their_fields_in_go_order() {
        let body = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "m", "reason": "Invalid", "code": 422,
            "details": {"kind": "ConfigMap", "name": "Bad", "causes": [
                {"field": "metadata.name", "message": "bad", "reason": "FieldValueInvalid"}]}});
        let status = serde_json::to_string(&ResponseStatus::of(422, Some(&body))).unwrap();
        assert_eq!(
            status,
            concat!(
                r#"{"metadata":{},"status":"Failure","message":"m","reason":"Invalid","#,
                r#""details":{"name":"Bad","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","#,
                r#""message":"bad","field":"metadata.name"}]},"code":422}"#
            )
        );
        let deleted = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "details": {"name": "c", "kind": "configmaps", "uid": "u"}});
        let status = serde_json::to_string(&ResponseStatus::of(200, Some(&deleted))).unwrap();
        assert_eq!(
            status,
            r#"{"metadata":{},"status":"Success","details":{"name":"c","kind":"configmaps","uid":"u"},"code":200}"#
        );
    }

    #[test]
    fn micro_time_always_has_six_digits() {
        let at: Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
        assert_eq!(micro_time(at), "2026-01-02T03:04:05.000000Z");
    }
}
