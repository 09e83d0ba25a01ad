//! `Status` error bodies, shaped exactly like kube-apiserver's (apimachinery
//! `pkg/api/errors/errors.go`).
//!
//! Every failure a handler can produce is an [`ApiError`]; the router turns it into an HTTP response
//! whose body is a `meta/v1 Status` with the same fields, field order, reasons, codes and message
//! wording as the real server, so client error predicates (`is_not_found`, `is_conflict`, ...) and
//! logged messages behave identically against this test double.

use crate::body::{BoxBody, full, with_json_type};
use bytes::Bytes;
use http::{Response, header};
use serde::Serialize;

/// One field-level cause inside `details.causes` (apimachinery `StatusCause`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Cause {
    /// Machine-readable cause, e.g. `FieldValueInvalid`; omitted when empty, like Go's
    /// `omitempty`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) reason: String,
    /// Human-readable description.
    pub(crate) message: String,
    /// The offending field path, e.g. `metadata.name`; omitted when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) field: String,
}

/// `details` of a `Status` (apimachinery `StatusDetails`). Empty fields are omitted like Go's
/// `omitempty`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Details {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) causes: Vec<Cause>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) retry_after_seconds: Option<u64>,
}

impl Details {
    fn is_empty(&self) -> bool {
        *self == Details::default()
    }
}

/// A failed request: HTTP code, `reason`, message and details, rendered as a `Status` body.
///
/// Constructors are named after apimachinery's `errors.New*` helpers so a reader can compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: std::borrow::Cow<'static, str>,
    pub(crate) message: String,
    pub(crate) details: Box<Details>,
    /// `metadata.continue` of the Status (only the expired-continue 410 carries one).
    pub(crate) continue_token: Option<String>,
    /// Value of a `Retry-After` header, in seconds.
    pub(crate) retry_after: Option<u64>,
    /// Serialize `details` even when empty (`"details":{}`), as the real server does for unknown
    /// resources.
    pub(crate) empty_details: bool,
    /// Answer with the plain-text `404 page not found` of a path outside the API.
    pub(crate) plain_text: bool,
}

/// Group and plural resource of the object an error is about, as the real server reports them in
/// `details.group` / `details.kind` (which holds the *resource*, e.g. `configmaps`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Qualified<'a> {
    pub(crate) group: &'a str,
    pub(crate) resource: &'a str,
}

impl Qualified<'_> {
    /// `configmaps` or `deployments.apps`, the prefix of most messages.
    fn display(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: String) -> ApiError {
        ApiError {
            code,
            reason: reason.into(),
            message,
            details: Box::default(),
            continue_token: None,
            retry_after: None,
            empty_details: false,
            plain_text: false,
        }
    }

    fn with_target(mut self, what: Qualified<'_>, name: &str) -> ApiError {
        self.details.name = name.to_string();
        self.details.group = what.group.to_string();
        self.details.kind = what.resource.to_string();
        self
    }

    /// 404 `configmaps "x" not found`.
    pub(crate) fn not_found(what: Qualified<'_>, name: &str) -> ApiError {
        let message = format!("{} \"{name}\" not found", what.display());
        ApiError::new(404, "NotFound", message).with_target(what, name)
    }

    /// 404 for a URL that names no registered resource (the real server's generic 404 body).
    pub(crate) fn unknown_path() -> ApiError {
        let message = "the server could not find the requested resource";
        let mut e = ApiError::new(404, "NotFound", message.into());
        e.empty_details = true;
        e
    }

    /// 400 for a request path with a malformed `%` escape: Go's HTTP server answers it in plain
    /// text before any handler runs (the body has no trailing newline).
    pub(crate) fn bad_request_path() -> ApiError {
        let mut e = ApiError::new(400, "BadRequest", "400 Bad Request".into());
        e.plain_text = true;
        e
    }

    /// 422 for a JSON patch that cannot be applied: both real servers answer every failing
    /// operation (a failed `test`, a `remove` of a missing member, ...) with this generic Status.
    pub(crate) fn json_patch_failed() -> ApiError {
        let message = "the server rejected our request due to an error in our request";
        let mut e = ApiError::new(422, "Invalid", message.into());
        e.empty_details = true;
        e
    }

    /// 404 for a path outside the API: plain text, like the real server's mux (Go's `http.NotFound`
    /// ends it with a newline).
    pub(crate) fn page_not_found() -> ApiError {
        let mut e = ApiError::new(404, "NotFound", "404 page not found\n".into());
        e.plain_text = true;
        e
    }

    /// 409 `configmaps "x" already exists`.
    pub(crate) fn already_exists(what: Qualified<'_>, name: &str) -> ApiError {
        let message = format!("{} \"{name}\" already exists", what.display());
        ApiError::new(409, "AlreadyExists", message).with_target(what, name)
    }

    /// 409 optimistic-concurrency failure (stale resourceVersion or failed precondition).
    pub(crate) fn conflict(what: Qualified<'_>, name: &str, why: &str) -> ApiError {
        let message = format!(
            "Operation cannot be fulfilled on {} \"{name}\": {why}",
            what.display()
        );
        ApiError::new(409, "Conflict", message).with_target(what, name)
    }

    /// 409 for a server-side apply that would take fields other managers own (apimachinery
    /// `NewApplyConflict`): the causes name each field and manager, the details nothing else.
    pub(crate) fn apply_conflict(message: String, causes: Vec<Cause>) -> ApiError {
        let mut e = ApiError::new(409, "Conflict", message);
        e.details.causes = causes;
        e
    }

    /// The `why` of a stale-resourceVersion conflict, worded like the real server.
    pub(crate) const MODIFIED: &'static str = "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 `Kind "name" is invalid: field: Invalid value: ...`, one cause per field error.
    pub(crate) fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> ApiError {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let joined: Vec<String> = causes
            .iter()
            .map(|c| {
                if c.field.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}: {}", c.field, c.message)
                }
            })
            .collect();
        let summary = if joined.len() == 1 {
            joined[0].clone()
        } else {
            format!("[{}]", joined.join(", "))
        };
        let message = format!("{qualified} \"{name}\" is invalid: {summary}");
        let mut e = ApiError::new(422, "Invalid", message);
        e.details = Box::new(Details {
            name: name.to_string(),
            group: group.to_string(),
            kind: kind.to_string(),
            causes,
            ..Details::default()
        });
        e
    }

    /// 422 for invalid list/watch query options (`ListOptions.meta.k8s.io "" is invalid: ...`).
    pub(crate) fn invalid_list_options(field: &str, detail: &str) -> ApiError {
        let cause = Cause {
            reason: "FieldValueForbidden".into(),
            message: format!("Forbidden: {detail}"),
            field: field.into(),
        };
        ApiError::invalid("meta.k8s.io", "ListOptions", "", vec![cause])
    }

    /// 422 for a list/watch option with an unsupported value.
    pub(crate) fn unsupported_list_option(field: &str, value: &str, supported: &str) -> ApiError {
        let cause = Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!("Unsupported value: \"{value}\": supported values: {supported}"),
            field: field.into(),
        };
        ApiError::invalid("meta.k8s.io", "ListOptions", "", vec![cause])
    }

    /// 400 with a free-form message.
    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message.into())
    }

    /// 405 for a verb a resource has no route for (e.g. `GET` on a create-only review), worded
    /// like the real server's router: generic message, empty details.
    pub(crate) fn method_not_allowed() -> ApiError {
        let mut e = ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".into(),
        );
        e.empty_details = true;
        e
    }

    /// 413 for a request body over the server's limit.
    pub(crate) fn request_entity_too_large(message: &str) -> ApiError {
        let message = format!("Request entity too large: {message}");
        ApiError::new(413, "RequestEntityTooLarge", message)
    }

    /// 415 for a patch type or body format the server does not accept.
    pub(crate) fn unsupported_media_type(accepted: &str) -> ApiError {
        let message = format!(
            "the body of the request was in an unknown format - accepted media types include: {accepted}"
        );
        ApiError::new(415, "UnsupportedMediaType", message)
    }

    /// 406 from the route check in front of built-in kinds (go-restful's wording, as v1.36 has
    /// it; v1.15 stops after "Not Acceptable"), when no media range of `Accept` names a type the
    /// route serves (`served`).
    pub(crate) fn not_acceptable_route(served: &str) -> ApiError {
        let message = format!("406: Not Acceptable\n\nAvailable representations: {served}");
        let mut e = ApiError::new(406, "NotAcceptable", message);
        e.empty_details = true;
        e
    }

    /// 406 from the handler, when no media range of `Accept` can be answered; `served` lists the
    /// types the server writes.
    pub(crate) fn not_acceptable(served: &str) -> ApiError {
        let message = format!("only the following media types are accepted: {served}");
        ApiError::new(406, "NotAcceptable", message)
    }

    /// 406 from the handler for an `as=` conversion that does not fit the request (a list asked
    /// for as one object, or the reverse); the real server's message, no details.
    pub(crate) fn not_acceptable_conversion(message: String) -> ApiError {
        ApiError::new(406, "NotAcceptable", message)
    }

    /// 410 `Expired` (too old resourceVersion or continue token).
    pub(crate) fn expired(message: impl Into<String>) -> ApiError {
        ApiError::new(410, "Expired", message.into())
    }

    /// 504 "Too large resource version", with the `ResourceVersionTooLarge` cause clients test for.
    pub(crate) fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
        let message =
            format!("Timeout: Too large resource version: {requested}, current: {current}");
        let mut e = ApiError::new(504, "Timeout", message);
        e.details.causes.push(Cause {
            reason: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            field: String::new(),
        });
        e.details.retry_after_seconds = Some(1);
        e
    }

    /// 401 for a missing or wrong bearer token.
    pub(crate) fn unauthorized() -> ApiError {
        ApiError::new(401, "Unauthorized", "Unauthorized".into())
    }

    /// 403 with a free-form message (e.g. writes into a terminating namespace).
    pub(crate) fn forbidden(what: Qualified<'_>, name: &str, why: &str) -> ApiError {
        let message = format!("{} \"{name}\" is forbidden: {why}", what.display());
        ApiError::new(403, "Forbidden", message).with_target(what, name)
    }

    /// A validating admission policy's denial: apimachinery `NewForbidden`'s message
    /// (`<resource> "<name>" is forbidden: <why>`) with the policy's `reason` and its code
    /// (Invalid 422, Forbidden 403, RequestEntityTooLarge 413, Unauthorized 401), and `why` as
    /// the one cause (apiserver `validating/dispatcher.go`).
    pub(crate) fn policy_denied(
        what: Qualified<'_>,
        name: &str,
        reason: &str,
        why: &str,
    ) -> ApiError {
        let (code, reason): (u16, &'static str) = match reason {
            "Forbidden" => (403, "Forbidden"),
            "RequestEntityTooLarge" => (413, "RequestEntityTooLarge"),
            "Unauthorized" => (401, "Unauthorized"),
            _ => (422, "Invalid"),
        };
        let mut e = ApiError::forbidden(what, name, why);
        e.code = code;
        e.reason = reason.into();
        e.details.causes = vec![Cause {
            reason: String::new(),
            message: why.to_string(),
            field: String::new(),
        }];
        e
    }

    /// A mutating admission policy's refusal (apiserver `mutating/dispatcher.go`): 403 with
    /// `reason` (Forbidden for a binding that cannot be configured, Invalid for an expression
    /// that failed), the bare message, and the message as the one cause.
    pub(crate) fn mutation_denied(
        what: Qualified<'_>,
        name: &str,
        reason: &'static str,
        why: &str,
    ) -> ApiError {
        let mut e = ApiError::new(403, reason, why.to_string()).with_target(what, name);
        e.details.causes = vec![Cause {
            reason: String::new(),
            message: why.to_string(),
            field: String::new(),
        }];
        e
    }

    /// 403 from the authorizer (apimachinery `NewForbidden`): `<resource> is forbidden: <why>`,
    /// or `<resource> "<name>" is forbidden: <why>` when the URL names an object.
    pub(crate) fn denied(what: Qualified<'_>, name: Option<&str>, why: &str) -> ApiError {
        match name {
            Some(name) => ApiError::forbidden(what, name, why),
            None => {
                let message = format!("{} is forbidden: {why}", what.display());
                ApiError::new(403, "Forbidden", message).with_target(what, "")
            }
        }
    }

    /// 403 from the authorizer for a non-resource path: `forbidden: <why>` with empty details.
    pub(crate) fn forbidden_path(why: &str) -> ApiError {
        let mut e = ApiError::new(403, "Forbidden", format!("forbidden: {why}"));
        e.empty_details = true;
        e
    }

    /// 429 with `Retry-After`, as API Priority and Fairness sends it.
    pub(crate) fn too_many_requests(retry_after: u64) -> ApiError {
        let mut e = ApiError::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.".into(),
        );
        e.details.retry_after_seconds = Some(retry_after);
        e.retry_after = Some(retry_after);
        e
    }

    /// A plain storage error the real server passes through without a reason (`StatusReasonUnknown`).
    pub(crate) fn unknown(code: u16, message: impl Into<String>) -> ApiError {
        ApiError::new(code, "", message.into())
    }

    /// apimachinery's `NewGenericServerResponse` for a backend's (a kubelet's) answer: the
    /// code's reason and `message` as the caller words it.
    pub(crate) fn generic_server_response(code: u16, message: &str) -> ApiError {
        let reason = match code {
            404 => "NotFound",
            500.. => "InternalError",
            _ => "",
        };
        ApiError::new(code, reason, message.to_owned())
    }

    /// 500 with a free-form message; the one cause carries the bare message, as
    /// apimachinery's `NewInternalError` (checked on v1.36).
    pub(crate) fn internal(message: impl Into<String>) -> ApiError {
        let cause = message.into();
        let mut e = ApiError::new(
            500,
            "InternalError",
            format!("Internal error occurred: {cause}"),
        );
        e.details.causes.push(Cause {
            reason: String::new(),
            message: cause,
            field: String::new(),
        });
        e
    }

    /// An admission webhook's denial: its code, reason and message as it gave them (the
    /// webhook plugins' `ToStatusErr`).
    pub(crate) fn from_webhook(code: u16, reason: &str, message: String) -> ApiError {
        let mut e = ApiError::new(code, "", message);
        e.reason = reason.to_string().into();
        e
    }

    /// 503 with a free-form message.
    pub(crate) fn service_unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(503, "ServiceUnavailable", message.into())
    }

    /// The `Status` object as JSON bytes (also used inside watch `ERROR` events).
    pub(crate) fn to_json(&self) -> Bytes {
        #[derive(Serialize)]
        struct ListMeta<'a> {
            #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
            continue_token: Option<&'a str>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Status<'a> {
            kind: &'static str,
            api_version: &'static str,
            metadata: ListMeta<'a>,
            status: &'static str,
            message: &'a str,
            #[serde(skip_serializing_if = "str::is_empty")]
            reason: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            details: Option<&'a Details>,
            code: u16,
        }
        let status = Status {
            kind: "Status",
            api_version: "v1",
            metadata: ListMeta {
                continue_token: self.continue_token.as_deref(),
            },
            status: "Failure",
            message: &self.message,
            reason: &self.reason,
            details: (self.empty_details || !self.details.is_empty()).then_some(&*self.details),
            code: self.code,
        };
        // Serializing plain structs of strings and integers cannot fail.
        Bytes::from(serde_json::to_vec(&status).unwrap_or_default())
    }
}

/// The `Status` a successful delete returns for kinds that do not return the deleted object.
pub(crate) fn success_status(what: Qualified<'_>, name: &str, uid: &str) -> Bytes {
    let details = Details {
        name: name.to_string(),
        group: what.group.to_string(),
        kind: what.resource.to_string(),
        uid: uid.to_string(),
        ..Details::default()
    };
    let body = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    });
    Bytes::from(body.to_string())
}

/// A field error cause: `reason` is the apimachinery `field.ErrorType` (e.g. `FieldValueInvalid`),
/// `message` the text after the field path.
pub(crate) fn cause(reason: &str, field: &str, message: impl Into<String>) -> Cause {
    Cause {
        reason: reason.into(),
        message: message.into(),
        field: field.into(),
    }
}

/// The `Status` response for an error.
pub(crate) fn error_response(error: &ApiError) -> Response<BoxBody> {
    let mut builder = Response::builder().status(error.code);
    if error.plain_text {
        return builder
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(full(Bytes::from(error.message.clone())))
            .unwrap_or_else(|_| Response::new(full(Bytes::new())));
    }
    if let Some(seconds) = error.retry_after {
        builder = builder.header(header::RETRY_AFTER, seconds.to_string());
    }
    with_json_type(builder, full(error.to_json()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_body_matches_real_server_shape() {
        let e = ApiError::not_found(
            Qualified {
                group: "",
                resource: "configmaps",
            },
            "x",
        );
        let body: serde_json::Value = serde_json::from_slice(&e.to_json()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "configmaps \"x\" not found", "reason": "NotFound",
                "details": {"name": "x", "kind": "configmaps"}, "code": 404
            })
        );
    }

    #[test]
    fn invalid_message_joins_multiple_causes_in_brackets() {
        let causes = vec![
            cause(
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required",
            ),
            cause("FieldValueInvalid", "spec.x", "Invalid value: 1: bad"),
        ];
        let e = ApiError::invalid("apps", "Deployment", "d", causes);
        assert_eq!(
            e.message,
            "Deployment.apps \"d\" is invalid: [metadata.name: Required value: name or generateName is required, spec.x: Invalid value: 1: bad]"
        );
    }
}
