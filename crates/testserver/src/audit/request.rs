//! [`RequestAudit`]: one request's audit event, from the moment it is authenticated to the end
//! of its response (apiserver `endpoints/filters/audit.go`, `authn_audit.go` and
//! `pkg/audit/{context,request}.go`).
//!
//! # The stages a request writes
//! - `RequestReceived` once the user is known, before authorization (so without annotations).
//! - `ResponseStarted` for long-running requests (watches, a Pod's log, exec, attach,
//!   port-forward, proxy) when the response's headers are ready, and for a request whose
//!   authentication failed, which writes only this stage (as kube-apiserver's failed-
//!   authentication handler does).
//! - `ResponseComplete` when the response is complete: for a stream, when its body ends or the
//!   client goes away.
//!
//! Stages the policy omits are skipped; `Panic` never happens here.
//!
//! # Guarantees
//! - Annotations keep their first value: a later different value for a key is dropped, as
//!   admission's `AddAnnotation` refuses to overwrite one.
//! - `objectRef` takes name, namespace, uid and resourceVersion from the request's object where
//!   the URL gave none (`LogRequestObject`), at every level but `None`.
//! - `responseStatus` is the answer's `Status` (without `kind`/`apiVersion`, with `code`) or
//!   `{"metadata":{},"code":N}`; `responseObject` the answer's object (JSON, or protobuf decoded),
//!   except for streams.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use jiff::Timestamp;
use parking_lot::Mutex;
use serde_json::Value;

use crate::audit::event::{Event, EventUser, ObjectRef, ResponseStatus, micro_time};
use crate::audit::policy::{Decision, Level, Stage};
use crate::audit::sink::AuditLog;
use crate::authz::Attributes;
use crate::body::{BoxBody, full};
use crate::verb::Verb;

/// The response header naming a request's audit ID, sent on every response.
pub(crate) const AUDIT_ID_HEADER: &str = "audit-id";

/// The peer address of a request, put into its extensions by the listener.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerAddr(pub(crate) SocketAddr);

/// What the audit log needs from a request before it is consumed.
#[derive(Clone, Debug)]
pub(crate) struct Incoming {
    /// The request's `Audit-ID` header, else a new UUID.
    pub(crate) audit_id: String,
    received: Timestamp,
    request_uri: String,
    user_agent: String,
    source_ips: Vec<String>,
}

impl Incoming {
    /// Reads `request`'s audit ID, URI, user agent and source addresses.
    pub(crate) fn of<B>(request: &Request<B>) -> Incoming {
        let headers = request.headers();
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let audit_id = match header("audit-id") {
            id if id.is_empty() => uuid::Uuid::new_v4().to_string(),
            id => id,
        };
        let mut user_agent = header("user-agent");
        if user_agent.len() > 1024 {
            let mut cut = 1024;
            while !user_agent.is_char_boundary(cut) {
                cut -= 1;
            }
            user_agent.truncate(cut);
            user_agent.push_str("...TRUNCATED");
        }
        let peer = request.extensions().get::<PeerAddr>().map(|p| p.0);
        Incoming {
            audit_id,
            received: Timestamp::now(),
            request_uri: request
                .uri()
                .path_and_query()
                .map_or_else(|| request.uri().path().to_string(), |pq| pq.to_string()),
            user_agent,
            source_ips: source_ips(headers, peer),
        }
    }
}

/// The client's addresses as `utilnet.SourceIPs` finds them: `X-Forwarded-For`, then
/// `X-Real-Ip`, then the peer, each once.
fn source_ips(headers: &HeaderMap, peer: Option<SocketAddr>) -> Vec<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let mut ips: Vec<std::net::IpAddr> = header("x-forwarded-for")
        .unwrap_or_default()
        .split(',')
        .filter_map(|part| part.trim().parse().ok())
        .collect();
    let more = header("x-real-ip").and_then(|ip| ip.trim().parse().ok());
    for ip in more.into_iter().chain(peer.map(|p| p.ip())) {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    ips.iter().map(ToString::to_string).collect()
}

/// One request's event while it is being filled in.
struct Draft {
    log: Arc<AuditLog>,
    event: Event,
    decision: Decision,
    received: Timestamp,
    /// A watch or stream: `ResponseStarted`, then `ResponseComplete` when the body ends.
    long_running: bool,
    /// Authentication failed: only `ResponseStarted` is written.
    unauthenticated: bool,
}

impl Draft {
    /// Records the answer: its status, its object at `RequestResponse`, and for a long-running
    /// request the `ResponseStarted` stage.
    fn answered(&mut self, code: u16, answer: Option<Value>) {
        self.event.response_status = Some(ResponseStatus::of(code, answer.as_ref()));
        if self.decision.level == Level::RequestResponse
            && let Some(mut object) = answer
        {
            if self.decision.omit_managed_fields {
                strip_managed_fields(&mut object);
            }
            self.event.response_object = Some(object);
        }
        if self.long_running {
            self.write(Stage::ResponseStarted);
        }
    }

    fn write(&mut self, stage: Stage) {
        if self.decision.omit_stages.contains(&stage) {
            return;
        }
        self.event.stage = stage.as_str();
        self.event.stage_timestamp = match stage {
            Stage::RequestReceived => micro_time(self.received),
            _ => micro_time(Timestamp::now()),
        };
        self.log.write(&self.event);
    }
}

/// A request's audit event: a no-op when the server has no audit policy or the policy's level
/// for the request is `None`. Cheap to clone; clones fill in the same event (the admission
/// policies add their annotations through the request's [`crate::request::scope::Scope`]).
#[derive(Clone, Default)]
pub(crate) struct RequestAudit {
    draft: Option<Arc<Mutex<Draft>>>,
}

impl std::fmt::Debug for RequestAudit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestAudit")
            .field("enabled", &self.draft.is_some())
            .finish()
    }
}

impl RequestAudit {
    /// The audit of an authenticated request: the policy decides its level from `attributes`,
    /// and `RequestReceived` is written unless omitted.
    pub(crate) fn begin(
        log: Option<&Arc<AuditLog>>,
        incoming: &Incoming,
        attributes: &Attributes,
    ) -> RequestAudit {
        let audit = RequestAudit::start(log, incoming, attributes, false);
        audit.with(|draft| draft.write(Stage::RequestReceived));
        audit
    }

    /// The audit of a request whose authentication failed (`attributes` without a user).
    pub(crate) fn unauthenticated(
        log: Option<&Arc<AuditLog>>,
        incoming: &Incoming,
        attributes: &Attributes,
    ) -> RequestAudit {
        RequestAudit::start(log, incoming, attributes, true)
    }

    fn start(
        log: Option<&Arc<AuditLog>>,
        incoming: &Incoming,
        attributes: &Attributes,
        unauthenticated: bool,
    ) -> RequestAudit {
        let Some(log) = log else {
            return RequestAudit::default();
        };
        let decision = log.policy.decide(attributes);
        if decision.level == Level::None {
            return RequestAudit::default();
        }
        let mut event = Event::new(
            incoming.audit_id.clone(),
            decision.level.as_str(),
            incoming.received,
        );
        event.request_uri = incoming.request_uri.clone();
        event.verb = attributes.verb.clone();
        event.user = EventUser {
            username: attributes.user.name.clone(),
            uid: attributes.user.uid.clone(),
            groups: attributes.user.groups.clone(),
        };
        event.source_ips = incoming.source_ips.clone();
        event.user_agent = incoming.user_agent.clone();
        if !attributes.resource.is_empty() {
            event.object_ref = Some(ObjectRef {
                resource: attributes.resource.clone(),
                namespace: attributes.namespace.clone(),
                name: attributes.name.clone(),
                api_group: attributes.group.clone(),
                api_version: attributes.version.clone(),
                subresource: attributes.subresource.clone(),
                ..ObjectRef::default()
            });
        }
        let long_running = matches!(attributes.verb.as_str(), "watch" | "proxy")
            || matches!(
                attributes.subresource.as_str(),
                "attach" | "exec" | "proxy" | "log" | "portforward"
            );
        RequestAudit {
            draft: Some(Arc::new(Mutex::new(Draft {
                log: log.clone(),
                event,
                decision,
                received: incoming.received,
                long_running,
                unauthenticated,
            }))),
        }
    }

    fn with(&self, change: impl FnOnce(&mut Draft)) {
        if let Some(draft) = &self.draft {
            change(&mut draft.lock());
        }
    }

    /// Adds an annotation unless the key already has one (the first value stays).
    pub(crate) fn annotate(&self, key: &str, value: &str) {
        self.with(|draft| {
            draft
                .event
                .annotations
                .entry(key.to_string())
                .or_insert_with(|| value.to_string());
        });
    }

    /// [`RequestAudit::annotate`] for an annotation kept only in events of at least `level`
    /// (admission's `AddAnnotationWithLevel`: a webhook's patch from `Request` on).
    pub(crate) fn annotate_from(&self, level: Level, key: &str, value: &str) {
        let logged = self
            .draft
            .as_ref()
            .is_some_and(|d| d.lock().decision.level >= level);
        if logged {
            self.annotate(key, value);
        }
    }

    /// Records the authorizer's answer (`authorization.k8s.io/decision`: `allow` or `forbid`,
    /// and its reason).
    pub(crate) fn authorized(&self, allowed: bool, reason: &str) {
        let decision = if allowed { "allow" } else { "forbid" };
        self.annotate("authorization.k8s.io/decision", decision);
        self.annotate("authorization.k8s.io/reason", reason);
    }

    /// Records the request's body (already JSON for creates, updates and deletes; a patch as
    /// sent; the `DeleteOptions` of a delete or delete-collection): it completes `objectRef`,
    /// and is the event's `requestObject` from level `Request`.
    pub(crate) fn request_body(&self, verb: Verb, body: &Bytes) {
        if self.draft.is_none() || body.is_empty() {
            return;
        }
        let object = match verb {
            Verb::Create | Verb::Update => serde_json::from_slice::<Value>(body).ok(),
            Verb::Patch => serde_json::from_slice::<Value>(body)
                .ok()
                .or_else(|| serde_yaml::from_slice::<Value>(body).ok()),
            Verb::Delete | Verb::DeleteCollection => serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(delete_options),
            _ => None,
        };
        let Some(mut object) = object else { return };
        self.with(|draft| {
            if matches!(verb, Verb::Create | Verb::Update) {
                complete_object_ref(&mut draft.event, &object);
            }
            if draft.decision.level >= Level::Request {
                if draft.decision.omit_managed_fields {
                    strip_managed_fields(&mut object);
                }
                draft.event.request_object = Some(object);
            }
        });
    }

    /// Writes the last stages for `response` and returns it (with its `Audit-Id` header; a
    /// stream's body wrapped so that its end writes `ResponseComplete`).
    pub(crate) async fn finish(
        self,
        audit_id: &str,
        mut response: Response<BoxBody>,
    ) -> Response<BoxBody> {
        if let Ok(value) = HeaderValue::from_str(audit_id) {
            response.headers_mut().insert(AUDIT_ID_HEADER, value);
        }
        let Some(shared) = self.draft else {
            return response;
        };
        let code = response.status().as_u16();
        let (unauthenticated, long_running, level, verb) = {
            let draft = shared.lock();
            let verb = draft.event.verb.clone();
            let level = draft.decision.level;
            (draft.unauthenticated, draft.long_running, level, verb)
        };
        if unauthenticated {
            let mut draft = shared.lock();
            draft.event.response_status = Some(ResponseStatus::unauthorized());
            draft.write(Stage::ResponseStarted);
            return response;
        }
        // A stream's answer is not read (its end writes `ResponseComplete`); other answers are
        // read when the event shows them or their `Status`.
        let streams = long_running && code < 300;
        let wants_body = !streams
            && (level == Level::RequestResponse
                || code >= 300
                || matches!(verb.as_str(), "delete" | "deletecollection"));
        let mut answer = None;
        if wants_body {
            let (parts, body) = response.into_parts();
            let bytes = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(never) => match never {},
            };
            answer = decode_answer(&parts.headers, &bytes);
            response = Response::from_parts(parts, full(bytes));
        }
        shared.lock().answered(code, answer);
        if !streams {
            shared.lock().write(Stage::ResponseComplete);
            return response;
        }
        let (parts, body) = response.into_parts();
        let body = CompletesOnDrop {
            inner: body,
            draft: Some(shared),
        };
        Response::from_parts(parts, body.boxed_unsync())
    }
}

/// The answer's object: JSON, or protobuf decoded; `None` for other bodies (plain text).
fn decode_answer(headers: &HeaderMap, bytes: &Bytes) -> Option<Value> {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type.starts_with("application/json") {
        serde_json::from_slice(bytes).ok()
    } else if content_type.starts_with(kubegen_codec::PROTOBUF_MEDIA_TYPE) {
        kubegen_codec::decode_object(bytes).ok()
    } else {
        None
    }
}

/// A delete's body as the real server logs it: its `DeleteOptions` in the internal version.
fn delete_options(body: Value) -> Option<Value> {
    let Value::Object(mut options) = body else {
        return None;
    };
    options.remove("kind");
    options.remove("apiVersion");
    let mut logged = serde_json::Map::new();
    logged.insert("kind".into(), "DeleteOptions".into());
    logged.insert("apiVersion".into(), "meta.k8s.io/__internal".into());
    logged.extend(options);
    Some(Value::Object(logged))
}

/// Fills `objectRef`'s empty namespace, name, uid and resourceVersion from `object`'s metadata.
fn complete_object_ref(event: &mut Event, object: &Value) {
    let reference = event.object_ref.get_or_insert_with(ObjectRef::default);
    let meta = |field: &str| {
        object
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    for (slot, field) in [
        (&mut reference.namespace, "namespace"),
        (&mut reference.name, "name"),
        (&mut reference.uid, "uid"),
        (&mut reference.resource_version, "resourceVersion"),
    ] {
        if slot.is_empty() {
            *slot = meta(field);
        }
    }
}

/// Removes `metadata.managedFields` from an object, a list's items and a Table's rows.
fn strip_managed_fields(object: &mut Value) {
    fn strip(object: &mut Value) {
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
    }
    strip(object);
    if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(strip);
    }
    if let Some(rows) = object.get_mut("rows").and_then(Value::as_array_mut) {
        for row in rows {
            if let Some(inner) = row.get_mut("object") {
                strip(inner);
            }
        }
    }
}

/// A stream's body that writes the request's `ResponseComplete` when it ends or is dropped
/// (the client went away).
struct CompletesOnDrop {
    inner: BoxBody,
    draft: Option<Arc<Mutex<Draft>>>,
}

impl Body for CompletesOnDrop {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CompletesOnDrop {
    fn drop(&mut self) {
        if let Some(draft) = self.draft.take() {
            draft.lock().write(Stage::ResponseComplete);
        }
    }
}

/// For the admission plugins' tests: an audit of a `create` at level `Metadata`, kept in
/// memory, and the annotations its event carries so far.
#[cfg(test)]
impl RequestAudit {
    pub(crate) fn recording() -> RequestAudit {
        let policy = crate::audit::AuditPolicy::from_yaml(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
        )
        .unwrap();
        let log = Arc::new(AuditLog::open(policy, None).unwrap());
        let request = Request::post("/api/v1/namespaces/d/configmaps")
            .body(())
            .unwrap();
        let attributes = Attributes {
            verb: "create".into(),
            resource: "configmaps".into(),
            ..Attributes::default()
        };
        RequestAudit::begin(Some(&log), &Incoming::of(&request), &attributes)
    }

    pub(crate) fn annotations(&self) -> std::collections::BTreeMap<String, String> {
        self.draft
            .as_ref()
            .map(|d| d.lock().event.annotations.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_keep_their_first_value() {
        let audit = RequestAudit::recording();
        audit.annotate("k", "1");
        audit.annotate("k", "2");
        audit.authorized(false, "no");
        let want = [
            ("authorization.k8s.io/decision", "forbid"),
            ("authorization.k8s.io/reason", "no"),
            ("k", "1"),
        ];
        let got = audit.annotations();
        let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn source_ips_come_from_forwarding_headers_then_the_peer() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            HeaderValue::from_static("10.0.0.1, bad, 10.0.0.2"),
        );
        headers.insert("x-real-ip", HeaderValue::from_static("10.0.0.2"));
        let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        assert_eq!(
            source_ips(&headers, Some(peer)),
            ["10.0.0.1", "10.0.0.2", "127.0.0.1"]
        );
        assert!(source_ips(&HeaderMap::new(), None).is_empty());
    }

    #[test]
    fn managed_fields_leave_objects_lists_and_tables() {
        let mf = serde_json::json!([{"manager": "m"}]);
        let mut object = serde_json::json!({"metadata": {"name": "a", "managedFields": mf},
            "items": [{"metadata": {"managedFields": mf}}],
            "rows": [{"object": {"metadata": {"managedFields": mf}}}]});
        strip_managed_fields(&mut object);
        assert_eq!(
            object,
            serde_json::json!({"metadata": {"name": "a"}, "items": [{"metadata": {}}],
                "rows": [{"object": {"metadata": {}}}]})
        );
    }

    #[test]
    fn delete_options_are_logged_in_the_internal_version() {
        let body = serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1",
            "propagationPolicy": "Background"});
        assert_eq!(
            delete_options(body),
            Some(serde_json::json!({"kind": "DeleteOptions",
                "apiVersion": "meta.k8s.io/__internal", "propagationPolicy": "Background"}))
        );
    }
}
