//! [`ApiServer::new`] and [`ApiServer::handle`]: the whole server without a socket, the request
//! path drawn in `lib.rs`. The HTTP listener, the fake clientset and tests all call `handle`, so
//! every path exercises the same logic.
//!
//! Mirrors kube-apiserver's handler chain in miniature (`DefaultBuildHandlerChain`, then
//! `endpoints/installer.go`'s routes): authentication, authorization, (injected) latency,
//! routing, the request's [`Scope`] (verb, dry run, field manager, negotiated format), faults,
//! body decoding and field validation, then the one handler the verb and subresource name
//! (apiserver `endpoints/handlers/*.go`); admission and the kind's strategy run inside the write
//! handlers, as they run inside the real registry's `Create`/`Update`/`Delete`.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response};
use parking_lot::Mutex;

use crate::apiserver::{ApiServer, Inner};
use crate::audit::{AuditLog, Incoming, RequestAudit};
use crate::authz::{Attributes, Authorizer, UserInfo};
use crate::body::BoxBody;
use crate::encode;
use crate::encode::conversion::Conversion;
use crate::faults::{FaultRequest, Faults};
use crate::handlers;
use crate::handlers::{discovery, oidc, versioned, watch as watches};
use crate::kinds::{crd, namespace, strategy_for};
use crate::options::ServerOptions;
use crate::rbac::Rbac;
use crate::registry::ResourceDefinition;
use crate::request::negotiation;
use crate::request::negotiation::WireFormat;
use crate::request::query::Query;
use crate::request::requestinfo;
use crate::request::route::{self, Route, Target};
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::status::error_response;
use crate::storage::tokens::TokenKeys;
use crate::storage::{Storage, persist};
use crate::verb::Verb;
use crate::{fieldvalidation, openapi, rbac};

/// The largest request body a write accepts: 3 MiB, the real server's `MaxRequestBodyBytes`
/// default. A larger body gets 413 `RequestEntityTooLarge`; reads ignore their body, as there.
pub(crate) const MAX_REQUEST_BODY: usize = 3 * 1024 * 1024;

impl ApiServer {
    /// A server with the built-in resources and the namespaces every cluster has (`default`,
    /// `kube-system`, `kube-public`, `kube-node-lease`).
    ///
    /// An audit log file ([`ServerOptions::audit_log_path`]) that cannot be opened is logged
    /// as an error and the events are kept in memory only; [`crate::TestServer::try_start`]
    /// returns that error instead.
    pub fn new(opts: ServerOptions) -> ApiServer {
        let audit = open_audit(&opts).unwrap_or_else(|error| {
            tracing::error!(%error, "the audit log is kept in memory only");
            let policy = opts.audit_policy.clone();
            policy.and_then(|p| AuditLog::open(p, None).ok().map(Arc::new))
        });
        let api = ApiServer::empty(opts, audit);
        api.seed(false);
        api
    }

    /// [`ApiServer::new`], failing when the audit log file cannot be opened.
    ///
    /// # Errors
    /// [`Error::AuditLogFailed`](crate::Error::AuditLogFailed).
    pub(crate) fn try_new(opts: ServerOptions) -> Result<ApiServer, crate::Error> {
        let audit = open_audit(&opts)?;
        let api = ApiServer::empty(opts, audit);
        api.seed(false);
        Ok(api)
    }

    /// A server with the objects `dir` holds (a first start when it holds none): what
    /// [`crate::TestServer`] runs with [`ServerOptions::data_dir`].
    ///
    /// # Errors
    /// [`Error::DataDirFailed`](crate::Error::DataDirFailed) when the snapshot cannot be read,
    /// [`Error::AuditLogFailed`](crate::Error::AuditLogFailed) when the audit log cannot be
    /// opened.
    pub(crate) fn restored(opts: ServerOptions, dir: &Path) -> Result<ApiServer, crate::Error> {
        let audit = open_audit(&opts)?;
        let api = ApiServer::empty(opts, audit);
        let restored = {
            let mut state = api.inner.storage.lock();
            let restored = persist::restore(dir, &mut state, &api.inner.tokens)?;
            crd::register_stored(&mut state);
            restored
        };
        api.seed(restored);
        Ok(api)
    }

    /// Saves the objects and the token signing key into `dir` (see [`ServerOptions::data_dir`]).
    ///
    /// # Errors
    /// [`Error::DataDirFailed`](crate::Error::DataDirFailed) naming the file not written.
    pub(crate) fn save(&self, dir: &Path) -> Result<(), crate::Error> {
        let state = self.inner.storage.lock();
        persist::save(dir, &state, &self.inner.tokens)
    }

    /// The initial content every cluster has: its namespaces (unless `restored`, when they come
    /// from the data directory) and, with RBAC, the bootstrap roles (created when missing).
    fn seed(&self, restored: bool) {
        if !restored {
            let mut state = self.inner.storage.lock();
            for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                namespace::create_initial(&mut state, ns);
            }
        }
        self.notify(self.inner.storage.resource_version());
        if self.inner.options.rbac {
            rbac::bootstrap(self);
        }
    }

    /// The server without any object.
    fn empty(opts: ServerOptions, audit: Option<Arc<AuditLog>>) -> ApiServer {
        let storage = Storage::new(opts.history_size);
        let authorizer: Arc<dyn Authorizer> = if opts.rbac {
            Arc::new(Rbac::new(storage.shared()))
        } else {
            opts.authorizer.clone()
        };
        ApiServer {
            inner: Arc::new(Inner {
                faults: Faults::new(storage.shared()),
                authorizer,
                tokens: TokenKeys::generate(),
                options: opts,
                storage,
                audit,
                address: Mutex::new("127.0.0.1:6443".into()),
            }),
        }
    }

    /// Handles one request. Watch responses stream (the body yields chunks as events happen).
    /// Every response carries the request's `Audit-Id`; with an audit policy the request's
    /// audit events are written (`audit/`).
    pub async fn handle(&self, request: Request<Bytes>) -> Response<BoxBody> {
        let method = request.method().clone();
        let path = request.uri().path().to_string();
        let incoming = Incoming::of(&request);
        let (result, audit) = self.dispatch(request, &incoming).await;
        let response = match result {
            Ok(response) => response,
            Err(error) => error_response(&error),
        };
        let response = audit.finish(&incoming.audit_id, response).await;
        tracing::debug!(%method, %path, status = response.status().as_u16(), "handled");
        response
    }

    /// Authenticates the request and starts its audit event, then serves it.
    async fn dispatch(
        &self,
        request: Request<Bytes>,
        incoming: &Incoming,
    ) -> (Result<Response<BoxBody>, ApiError>, RequestAudit) {
        let query = Query::parse(request.uri().query());
        let log = self.inner.audit.as_ref();
        let asked = |user: &UserInfo| {
            requestinfo::attributes(request.method(), request.uri().path(), &query, user)
        };
        let user = match self.authenticate(request.headers()) {
            Ok(user) => user,
            Err(error) => {
                let nobody = asked(&UserInfo::default());
                return (
                    Err(error),
                    RequestAudit::unauthenticated(log, incoming, &nobody),
                );
            }
        };
        let attributes = asked(&user);
        let audit = RequestAudit::begin(log, incoming, &attributes);
        let result = self.authorized(request, query, attributes, &audit).await;
        (result, audit)
    }

    /// Authorizes and routes an authenticated request.
    async fn authorized(
        &self,
        request: Request<Bytes>,
        query: Query,
        attributes: Attributes,
        audit: &RequestAudit,
    ) -> Result<Response<BoxBody>, ApiError> {
        let verb = requestinfo::authorize(self.inner.authorizer.as_ref(), &attributes, audit)?;
        let user = attributes.user;
        let latency = self.inner.faults.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        let path = request.uri().path();
        let route = route::parse(path, &self.inner.storage.lock().registry, &own_subresource)?;
        match route {
            Route::Resource(target) => {
                let scope = (verb, user, audit.clone());
                self.resource(request, target, query, scope).await
            }
            Route::OpenApi(endpoint) if request.method() == Method::GET => {
                openapi::serve(self, &endpoint, request.headers(), &query)
            }
            Route::OpenIdConfiguration if request.method() == Method::GET => {
                Ok(oidc::configuration(self))
            }
            Route::Jwks if request.method() == Method::GET => Ok(oidc::jwks(self)),
            other if request.method() == Method::GET => {
                discovery::serve(self, &other, request.headers())
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }

    /// A resource request: its scope is decided (verb, dry run, writer, negotiated format), then
    /// the handler the verb and subresource name runs. Every answer from negotiation on, error or
    /// not, is written in the negotiated format.
    async fn resource(
        &self,
        request: Request<Bytes>,
        target: Target,
        query: Query,
        (verb, user, audit): (Option<Verb>, UserInfo, RequestAudit),
    ) -> Result<Response<BoxBody>, ApiError> {
        let dry_run = match query.get("dryRun") {
            None | Some("") => false,
            Some("All") => true,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
                )));
            }
        };
        let verb = served_verb(request.method(), &target, verb)?;
        if let Some(sub) = target.subresource.as_deref()
            && strategy_for(&target.def).connects(sub)
        {
            // Faults act on streams too: a refused WebSocket sends exec and attach to SPDY.
            let fault_request = FaultRequest {
                verb,
                group: &target.def.group,
                plural: &target.def.plural,
                subresource: Some(sub),
                namespace: target.namespace.as_deref(),
                name: target.name.as_deref(),
            };
            if let Some(error) = self.inner.faults.take_failure(&fault_request) {
                return Err(error);
            }
            return handlers::pod_connect::serve(self, request, &target, (&query, &user)).await;
        }
        let writer = crate::apply::writer(request.headers(), &query);
        let (parts, body) = request.into_parts();
        let token_request = target
            .subresource
            .as_deref()
            .is_some_and(|sub| strategy_for(&target.def).requests_token(sub));
        let format = if token_request {
            // TokenRequests answer before content negotiation, in JSON.
            WireFormat::Json
        } else {
            negotiation::check_accept(&parts.headers, &target.def)?
        };
        let scope = Scope {
            target,
            verb,
            user,
            format,
            writer,
            dry_run,
            request_version: None,
            authorizer: self.inner.authorizer.clone(),
            audit,
        };
        if token_request {
            // kubectl sends the TokenRequest in protobuf.
            let body = negotiation::body_as_json(&parts.headers, body, &scope.def)?;
            scope.audit.request_body(verb, &body);
            return handlers::token::token_request(self, &scope, &body);
        }
        match self.negotiated(parts, body, &scope, query).await {
            Ok(response) => Ok(encode::in_format(response, format).await),
            Err(error) => Ok(encode::error_in_format(&error, format)),
        }
    }

    /// A resource request after content negotiation: faults, body limits and decoding, field
    /// validation, then the handler.
    async fn negotiated(
        &self,
        parts: http::request::Parts,
        body: Bytes,
        scope: &Scope,
        query: Query,
    ) -> Result<Response<BoxBody>, ApiError> {
        let verb = scope.verb;
        self.injected_failure(scope)?;
        let conversion = match verb {
            Verb::Get | Verb::List | Verb::Watch if scope.subresource.is_none() => {
                Conversion::from_request(&parts.headers, &query, &scope.def, verb)?
            }
            _ => None,
        };
        if !verb.is_read() && body.len() > MAX_REQUEST_BODY {
            return Err(ApiError::request_entity_too_large(&format!(
                "limit is {MAX_REQUEST_BODY}"
            )));
        }
        let body = match verb {
            Verb::Create | Verb::Update | Verb::Delete => {
                negotiation::body_as_json(&parts.headers, body, &scope.def)?
            }
            _ => body,
        };
        scope.audit.request_body(verb, &body);
        if let Some(review) = strategy_for(&scope.def).review() {
            return handlers::review::create(self, scope, review, &body);
        }
        if let Some(sub) = scope.subresource.as_deref()
            && strategy_for(&scope.def).binds(sub)
        {
            return handlers::binding::create(&self.inner.storage, scope, &body);
        }
        // A kind served in several versions (custom resources): the request is converted in,
        // the handlers run in the storage version; writes are computed in the request's
        // version, answers converted out to it.
        let edge = strategy_for(&scope.def).edge(&self.inner.storage.lock(), scope);
        let store = &self.inner.storage;
        if scope.subresource.as_deref() == Some("scale") {
            return match edge {
                Some(edge) => versioned::scale(store, &edge, &parts.headers, &body).await,
                None => handlers::scale::serve(store, scope, &parts.headers, &body),
            };
        }
        let warnings = match verb {
            Verb::Create | Verb::Update | Verb::Patch => {
                fieldvalidation::check(self, (scope, verb), &parts.headers, &body, &query)?
            }
            _ => Vec::new(),
        };
        let scope = edge.as_ref().map_or(scope, |edge| &edge.storage_scope);
        let mut response = match (verb, &edge) {
            (Verb::Create | Verb::Update | Verb::Patch, Some(edge)) => {
                versioned::write(store, edge, &parts.headers, &body).await
            }
            _ => {
                let request = (&parts.headers, &body, &query);
                self.handler(verb, scope, request, conversion).await
            }
        }?;
        if let Some(edge) = edge.filter(|edge| edge.converts_answers()) {
            response = edge.response(response, verb == Verb::Watch).await?;
        }
        fieldvalidation::add_warnings(&mut response, &warnings);
        Ok(response)
    }

    /// Runs the handler of `verb`.
    async fn handler(
        &self,
        verb: Verb,
        scope: &Scope,
        (headers, body, query): (&http::HeaderMap, &Bytes, &Query),
        conversion: Option<Conversion>,
    ) -> Result<Response<BoxBody>, ApiError> {
        match verb {
            Verb::Get => handlers::read::get(self, scope, conversion),
            Verb::List => handlers::read::list(self, scope, query, conversion).await,
            Verb::Watch => watches::start(self, scope, query, conversion).await,
            Verb::Create => handlers::create::create(&self.inner.storage, scope, body).await,
            Verb::Update => handlers::update::update(&self.inner.storage, scope, body).await,
            Verb::Patch => handlers::update::patch(&self.inner.storage, scope, headers, body).await,
            Verb::Delete => handlers::delete::delete(&self.inner.storage, scope, body, query).await,
            Verb::DeleteCollection => {
                handlers::delete::delete_collection(
                    &self.inner.storage,
                    scope,
                    query,
                    body,
                    self.inner.options.sharded_list_and_watch,
                )
                .await
            }
        }
    }

    /// A failure `Faults` holds for this request, if any.
    fn injected_failure(&self, scope: &Scope) -> Result<(), ApiError> {
        let fault_request = FaultRequest {
            verb: scope.verb,
            group: &scope.def.group,
            plural: &scope.def.plural,
            subresource: scope.subresource.as_deref(),
            namespace: scope.namespace.as_deref(),
            name: scope.name.as_deref(),
        };
        match self.inner.faults.take_failure(&fault_request) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// The audit log [`ServerOptions::audit_policy`] asks for, opened.
///
/// # Errors
/// [`Error::AuditLogFailed`](crate::Error::AuditLogFailed) when the file cannot be opened.
fn open_audit(opts: &ServerOptions) -> Result<Option<Arc<AuditLog>>, crate::Error> {
    let Some(policy) = opts.audit_policy.clone() else {
        return Ok(None);
    };
    let log = AuditLog::open(policy, opts.audit_log_path.as_deref())?;
    Ok(Some(Arc::new(log)))
}

/// The verb of a resource request, when the endpoint serves it; the real server's generic 405
/// (no route for the method) otherwise, as v1.36 answers `OPTIONS`, `PROPFIND`, `HEAD`, `PUT` on
/// a collection, `POST` on an object, `DELETE` on `/status` or `/scale`, `GET` on `/token`.
fn served_verb(method: &Method, target: &Target, verb: Option<Verb>) -> Result<Verb, ApiError> {
    let named = target.name.is_some();
    let verb = verb.ok_or_else(ApiError::method_not_allowed)?;
    // No HEAD routes (go-restful), and the `/watch/` prefix serves GET only.
    let routed = *method != Method::HEAD && (!target.watch_path || *method == Method::GET);
    let strategy = strategy_for(&target.def);
    let served = match target.subresource.as_deref() {
        None => match verb {
            Verb::Get | Verb::Update | Verb::Patch | Verb::Delete => named,
            Verb::List | Verb::DeleteCollection => !named,
            Verb::Create => !named,
            Verb::Watch => true,
        },
        Some("status" | "scale") => matches!(verb, Verb::Get | Verb::Update | Verb::Patch),
        Some(own) => strategy.subresources().contains(&(own, verb)),
    };
    let allowed = target.def.allows(verb) && strategy.verbs().contains(&verb);
    if !routed || !served || !allowed {
        return Err(ApiError::method_not_allowed());
    }
    Ok(verb)
}

/// Whether `def`'s kind adds the subresource `sub` (its strategy's), for the router.
fn own_subresource(def: &ResourceDefinition, sub: &str) -> bool {
    let served = strategy_for(def).subresources();
    served.iter().any(|(name, _)| *name == sub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header;
    use http_body_util::BodyExt;
    use serde_json::{Value, json};

    async fn call(
        api: &ApiServer,
        method: &str,
        path: &str,
        content_type: &str,
        body: Value,
    ) -> (u16, Value) {
        let bytes = if body.is_null() {
            Bytes::new()
        } else {
            Bytes::from(body.to_string())
        };
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, content_type)
            .body(bytes)
            .unwrap();
        let response = api.handle(request).await;
        let code = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        api.inner.storage.lock().check_invariants();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Drives every write path and checks the invariants after each request.
    #[tokio::test]
    async fn invariants_hold_after_every_kind_of_write() {
        let api = ApiServer::new(ServerOptions::default());
        api.inner.storage.lock().check_invariants();
        let json_ct = "application/json";
        let merge = "application/merge-patch+json";
        let crd = json!({
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "things", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": true, "storage": true}]},
        });
        let steps: Vec<(&str, &str, &str, Value, u16)> = vec![
            (
                "POST",
                "/api/v1/namespaces",
                json_ct,
                json!({"metadata": {"name": "t"}}),
                201,
            ),
            (
                "POST",
                "/api/v1/namespaces/t/configmaps",
                json_ct,
                json!({"metadata": {"name": "a", "finalizers": ["x/y"]}}),
                201,
            ),
            (
                "PUT",
                "/api/v1/namespaces/t/configmaps/a",
                json_ct,
                json!({"metadata": {"name": "a", "finalizers": ["x/y"]}, "data": {"k": "v"}}),
                200,
            ),
            (
                "PATCH",
                "/api/v1/namespaces/t/configmaps/a",
                merge,
                json!({"data": {"k": "w"}}),
                200,
            ),
            (
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                json_ct,
                crd,
                201,
            ),
            (
                "POST",
                "/apis/example.com/v1/namespaces/t/things",
                json_ct,
                json!({"metadata": {"name": "th"}}),
                201,
            ),
            ("DELETE", "/api/v1/namespaces/t", json_ct, Value::Null, 200),
            (
                "PATCH",
                "/api/v1/namespaces/t/configmaps/a",
                merge,
                json!({"metadata": {"finalizers": null}}),
                200,
            ),
            // Without a controller-manager (an `ApiServer` runs none) the namespace stays
            // Terminating: nothing deletes its content or calls `finalize`.
            ("GET", "/api/v1/namespaces/t", json_ct, Value::Null, 200),
            (
                "DELETE",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com",
                json_ct,
                Value::Null,
                200,
            ),
            (
                "DELETE",
                "/api/v1/namespaces/default/configmaps",
                json_ct,
                Value::Null,
                200,
            ),
        ];
        for (method, path, content_type, body, want) in steps {
            let (code, reply) = call(&api, method, path, content_type, body).await;
            assert_eq!(code, want, "{method} {path}: {reply}");
        }
    }

    #[tokio::test]
    async fn handle_never_panics_on_odd_requests() {
        let api = ApiServer::new(ServerOptions::default());
        for (method, path) in [
            ("GET", "/"),
            ("GET", "/api/v1/namespaces/default/configmaps/a/b/c"),
            ("OPTIONS", "/api/v1/pods"),
            ("PUT", "/api/v1/pods"),
            ("GET", "/apis//v1/x"),
            ("GET", "/api/v1/namespaces//configmaps"),
            ("POST", "/apis/apps/v1/deployments"),
            ("GET", "/api/v1/watch"),
        ] {
            let (code, _) = call(&api, method, path, "application/json", Value::Null).await;
            assert!((400..500).contains(&code), "{method} {path}: {code}");
        }
    }

    /// Asked v1.36: a method no route serves is the router's generic 405 (never another verb),
    /// on collections, objects, subresources and create-only kinds alike.
    #[tokio::test]
    async fn unserved_methods_get_the_generic_405() {
        let api = ApiServer::new(ServerOptions::default());
        let (code, _) = call(
            &api,
            "POST",
            "/apis/apps/v1/namespaces/default/deployments",
            "application/json",
            json!({"metadata": {"name": "d"}}),
        )
        .await;
        assert_eq!(code, 201);
        let want = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server does not allow this method on the requested resource",
            "reason": "MethodNotAllowed", "details": {}, "code": 405});
        for (method, path) in [
            ("OPTIONS", "/api/v1/namespaces/default/configmaps"),
            ("PROPFIND", "/api/v1/namespaces/default/configmaps"),
            ("OPTIONS", "/api/v1/namespaces/default/configmaps/x"),
            ("PROPFIND", "/api/v1/namespaces/default/configmaps/x"),
            ("HEAD", "/api/v1/namespaces/default/configmaps/x"),
            ("PUT", "/api/v1/namespaces/default/configmaps"),
            ("PATCH", "/api/v1/namespaces/default/configmaps"),
            ("POST", "/api/v1/namespaces/default/configmaps/x"),
            ("DELETE", "/api/v1/namespaces"),
            (
                "DELETE",
                "/apis/apps/v1/namespaces/default/deployments/d/status",
            ),
            (
                "POST",
                "/apis/apps/v1/namespaces/default/deployments/d/status",
            ),
            (
                "DELETE",
                "/apis/apps/v1/namespaces/default/deployments/d/scale",
            ),
            (
                "GET",
                "/api/v1/namespaces/default/serviceaccounts/default/token",
            ),
            (
                "GET",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            ),
            ("POST", "/api/v1"),
            ("POST", "/version"),
        ] {
            let (code, body) = call(&api, method, path, "application/json", Value::Null).await;
            assert_eq!((code, &body), (405, &want), "{method} {path}");
        }
    }
}
