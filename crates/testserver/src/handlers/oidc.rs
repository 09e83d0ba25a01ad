//! The ServiceAccount issuer's OpenID Connect discovery: `/.well-known/openid-configuration` and
//! `/openid/v1/jwks`, what a workload-identity federation (a cloud's STS, Vault, SPIFFE) reads to
//! verify this cluster's ServiceAccount tokens. Mirrors apiserver
//! `pkg/serviceaccount/openidmetadata.go`: the same fields in the same order, the same content
//! types, and `Cache-Control: public, max-age=3600`. Who may read them is RBAC's
//! `system:service-account-issuer-discovery` (every ServiceAccount), as on v1.36.
//!
//! # Differences from the real server
//! - The key is P-256 (`ES256`, see `crate::jwt`), so the JWK has `crv`/`x`/`y` where the RSA
//!   key of the reference server has `n`/`e`.
//! - `jwks_uri` names the scheme the server serves (`http://` without TLS), where kube-apiserver
//!   always writes `https://` and its external address.

use bytes::Bytes;
use http::{Response, StatusCode, header};
use serde::Serialize;

use crate::apiserver::ApiServer;
use crate::body::{BoxBody, full};
use crate::jwt::{ALGORITHM, Jwk};
use crate::storage::tokens::ISSUER;

/// The discovery document, fields in the real server's order.
#[derive(Serialize)]
struct Configuration<'a> {
    issuer: &'a str,
    jwks_uri: String,
    response_types_supported: [&'a str; 1],
    subject_types_supported: [&'a str; 1],
    id_token_signing_alg_values_supported: [&'a str; 1],
}

#[derive(Serialize)]
struct KeySet {
    keys: Vec<Jwk>,
}

/// `GET /.well-known/openid-configuration`.
pub(crate) fn configuration(api: &ApiServer) -> Response<BoxBody> {
    let scheme = if api.inner.options.tls {
        "https"
    } else {
        "http"
    };
    let address = api.inner.address.lock().clone();
    let document = Configuration {
        issuer: ISSUER,
        jwks_uri: format!("{scheme}://{address}/openid/v1/jwks"),
        response_types_supported: ["id_token"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: [ALGORITHM],
    };
    respond("application/json", &document)
}

/// `GET /openid/v1/jwks`.
pub(crate) fn jwks(api: &ApiServer) -> Response<BoxBody> {
    let keys = KeySet {
        keys: vec![api.inner.tokens.key().jwk()],
    };
    respond("application/jwk-set+json", &keys)
}

fn respond(content_type: &str, document: &impl Serialize) -> Response<BoxBody> {
    let body = serde_json::to_vec(document).unwrap_or_default();
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CACHE_CONTROL, "public, max-age=3600")
        .header(header::CONTENT_TYPE, content_type)
        .body(full(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}
