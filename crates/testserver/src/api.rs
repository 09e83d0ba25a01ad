//! [`ApiServer::new`] and [`ApiServer::handle`]: the whole server without a socket. The HTTP
//! listener, the fake clientset and tests all call `handle`, so every path exercises the same
//! logic. The struct and what handlers share through it live in `shared.rs`.
//!
//! Mirrors kube-apiserver's handler chain in miniature: authentication, (injected) latency and
//! faults, routing, then one handler per verb (apiserver `endpoints/handlers/*.go`).

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, header};
use parking_lot::Mutex;
use tokio::sync::watch;

use crate::authn::IssuedTokens;
use crate::authz::{Authorizer, UserInfo};
use crate::body::{BoxBody, full};
use crate::conversion::Conversion;
use crate::encoding;
use crate::faults::{FaultRequest, Faults};
use crate::handlers;
use crate::negotiation;
use crate::options::ServerOptions;
use crate::query::Query;
use crate::rbac::Rbac;
use crate::route::{self, Route, Target};
use crate::shared::{ApiServer, Inner, with_json_type};
use crate::state::State;
use crate::status::ApiError;
use crate::{authn, discovery, fieldvalidation, openapi, rbac, requestinfo, watch as watches};

/// The largest request body a write accepts: 3 MiB, the real server's `MaxRequestBodyBytes`
/// default. A larger body gets 413 `RequestEntityTooLarge`; reads ignore their body, as there.
pub(crate) const MAX_REQUEST_BODY: usize = 3 * 1024 * 1024;

impl ApiServer {
    /// A server with the built-in resources and the namespaces every cluster has (`default`,
    /// `kube-system`, `kube-public`, `kube-node-lease`).
    pub fn new(opts: ServerOptions) -> ApiServer {
        let state = Arc::new(Mutex::new(State::new(opts.history_size)));
        let authorizer: Arc<dyn Authorizer> = if opts.rbac {
            Arc::new(Rbac::new(state.clone()))
        } else {
            opts.authorizer.clone()
        };
        let api = ApiServer {
            inner: Arc::new(Inner {
                faults: Faults::new(state.clone()),
                authorizer,
                tokens: IssuedTokens::default(),
                options: opts,
                state,
                changes: watch::Sender::new(0),
                address: Mutex::new("127.0.0.1:6443".into()),
            }),
        };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            handlers::namespace::create_initial(&api, ns);
        }
        if api.inner.options.rbac {
            rbac::bootstrap(&api);
        }
        api
    }

    /// Handles one request. Watch responses stream (the body yields chunks as events happen).
    pub async fn handle(&self, request: Request<Bytes>) -> Response<BoxBody> {
        let method = request.method().clone();
        let path = request.uri().path().to_string();
        let response = match self.dispatch(request).await {
            Ok(response) => response,
            Err(error) => error_response(&error),
        };
        tracing::debug!(%method, %path, status = response.status().as_u16(), "handled");
        response
    }

    async fn dispatch(&self, request: Request<Bytes>) -> Result<Response<BoxBody>, ApiError> {
        let user = self.authenticate(request.headers())?;
        requestinfo::authorize(self, &request, &user)?;
        let latency = self.inner.faults.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        let route = route::parse(request.uri().path(), &self.inner.state.lock().registry)?;
        let query = Query::parse(request.uri().query());
        match route {
            Route::Resource(target) => self.resource(request, target, query, &user).await,
            Route::OpenApi(endpoint) if request.method() == Method::GET => {
                openapi::serve(self, &endpoint, request.headers(), &query)
            }
            other if request.method() == Method::GET => Ok(discovery::serve(self, &other)),
            _ => Err(ApiError::method_not_supported(
                crate::status::Qualified {
                    group: "",
                    resource: request.uri().path(),
                },
                request.method().as_str(),
            )),
        }
    }

    async fn resource(
        &self,
        request: Request<Bytes>,
        target: Target,
        query: Query,
        user: &UserInfo,
    ) -> Result<Response<BoxBody>, ApiError> {
        let mut target = target;
        target.dry_run = match query.get("dryRun") {
            None | Some("") => false,
            Some("All") => true,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
                )));
            }
        };
        if authn::is_token_request(&target) {
            return authn::token_request(self, &target, request.method(), request.body());
        }
        target.writer = crate::apply::Writer::from_request(request.headers(), &query);
        let verb = verb_of(request.method(), &target, &query)?;
        if !target.def.allows(verb) {
            return Err(ApiError::method_not_allowed());
        }
        let (parts, body) = request.into_parts();
        target.format = negotiation::check_accept(&parts.headers, &target.def)?;
        let format = target.format;
        match self
            .negotiated(parts, body, target, query, verb, user)
            .await
        {
            Ok(response) => Ok(encoding::in_format(response, format).await),
            Err(error) => Ok(encoding::error_in_format(&error, format)),
        }
    }

    /// A resource request after content negotiation: every answer, error or not, is written in
    /// the negotiated format by the caller.
    async fn negotiated(
        &self,
        parts: http::request::Parts,
        body: Bytes,
        target: Target,
        query: Query,
        verb: &'static str,
        user: &UserInfo,
    ) -> Result<Response<BoxBody>, ApiError> {
        let fault_request = FaultRequest {
            verb,
            group: &target.def.group,
            plural: &target.def.plural,
            subresource: target.subresource.as_deref(),
            namespace: target.namespace.as_deref(),
            name: target.name.as_deref(),
        };
        if let Some(error) = self.inner.faults.take_failure(&fault_request) {
            return Err(error);
        }
        let conversion = match verb {
            "get" | "list" | "watch" if target.subresource.is_none() => {
                Conversion::from_request(&parts.headers, &query, &target.def, verb)?
            }
            _ => None,
        };
        if !matches!(verb, "get" | "list" | "watch") && body.len() > MAX_REQUEST_BODY {
            return Err(ApiError::request_entity_too_large(&format!(
                "limit is {MAX_REQUEST_BODY}"
            )));
        }
        let body = match verb {
            "create" | "update" | "delete" => {
                negotiation::body_as_json(&parts.headers, body, &target.def)?
            }
            _ => body,
        };
        if handlers::review::is_review(&target.def) {
            return handlers::review::create(self, &target, &body, user);
        }
        if target.subresource.as_deref() == Some("scale") {
            return handlers::scale::serve(self, &target, verb, &parts.headers, &body);
        }
        let warnings = match verb {
            "create" | "update" | "patch" => {
                fieldvalidation::check(self, (&target, verb), &parts.headers, &body, &query)?
            }
            _ => Vec::new(),
        };
        let mut response = match verb {
            "get" => handlers::read::get(self, &target, conversion),
            "list" => handlers::read::list(self, &target, &query, conversion).await,
            "watch" => watches::start(self, &target, &query, conversion).await,
            "create" => handlers::create::create(self, &target, &body),
            "update" => handlers::update::update(self, &target, &body),
            "patch" => handlers::update::patch(self, &target, &parts.headers, &body),
            "delete" => handlers::delete::delete(self, &target, &body, &query),
            _ => handlers::delete::delete_collection(self, &target, &query, &body),
        }?;
        fieldvalidation::add_warnings(&mut response, &warnings);
        Ok(response)
    }
}

/// The Kubernetes verb of a request (apiserver `RequestInfoFactory`).
fn verb_of(method: &Method, target: &Target, query: &Query) -> Result<&'static str, ApiError> {
    let has_name = target.name.is_some();
    let status = target.subresource.is_some();
    let verb = match *method {
        // `?watch` makes a list a watch; on one object it is ignored (a get), as the real server
        // does. One object is watched through the legacy `/watch/` path.
        Method::GET if target.watch_path || (!has_name && query.flag("watch")) => "watch",
        Method::GET if has_name => "get",
        Method::GET => "list",
        Method::POST if !has_name => "create",
        Method::PUT if has_name => "update",
        Method::PATCH if has_name => "patch",
        Method::DELETE if has_name && !status => "delete",
        Method::DELETE if !has_name => "deletecollection",
        _ => {
            return Err(ApiError::method_not_supported(
                target.qualified(),
                method.as_str(),
            ));
        }
    };
    if status && !matches!(verb, "get" | "update" | "patch") {
        return Err(ApiError::method_not_supported(target.qualified(), verb));
    }
    // A namespace's `finalize` is written, never read or patched.
    if target.subresource.as_deref() == Some("finalize") && verb != "update" {
        return Err(ApiError::method_not_supported(target.qualified(), verb));
    }
    Ok(verb)
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
        api.inner.state.lock().check_invariants();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Drives every write path and checks the invariants after each request.
    #[tokio::test]
    async fn invariants_hold_after_every_kind_of_write() {
        let api = ApiServer::new(ServerOptions::default());
        api.inner.state.lock().check_invariants();
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
}
