//! The HTTPS client that posts a review to a webhook: an `AdmissionReview` to an admission webhook
//! (`crate::admission::webhook`), a `ConversionReview` to a CRD's conversion webhook
//! (`crate::kinds::custom_resource::conversion`) — apiserver `pkg/util/webhook`'s client with its `caBundle` trust.
//! A connection per call over tokio-rustls with the `ring` provider, as kubegen-client connects;
//! failures are worded as the real server's Go client words them, since they reach the user in
//! the `InternalError` of a `failurePolicy: Fail` webhook.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Uri, header};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject as _};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Posts `body` to `url` trusting `ca_pem` (no bundle: nothing is trusted, as a webhook
/// without `caBundle` on a server with no system roots). Returns the response body of a 200.
///
/// # Errors
/// The Go client's wording of the failure, after `Post "<url>": ` where Go adds it.
pub(crate) async fn post(url: &str, ca_pem: Option<&[u8]>, body: Bytes) -> Result<Bytes, String> {
    let uri: Uri = url.parse().map_err(|e| format!("parse {url:?}: {e}"))?;
    let host = uri
        .host()
        .unwrap_or("")
        .trim_matches(['[', ']'])
        .to_string();
    let port = uri.port_u16().unwrap_or(443);
    let go = |why: String| format!("Post \"{url}\": {why}");
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| go(dial_error(&host, port, &e)))?;
    let tls = connector(ca_pem)?;
    let name = ServerName::try_from(host.clone()).map_err(|e| go(e.to_string()))?;
    let stream = tls
        .connect(name, tcp)
        .await
        .map_err(|e| go(tls_error(&e)))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| go(e.to_string()))?;
    tokio::spawn(connection);
    // The request line names the path alone (origin-form), as Go's client sends it: a webhook
    // server may route on it.
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    let request = Request::post(target)
        .header(header::HOST, uri.authority().map_or("", |a| a.as_str()))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, */*")
        .body(Full::new(body))
        .map_err(|e| go(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| go(e.to_string()))?;
    let status = response.status();
    let text = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/plain"));
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| go(e.to_string()))?
        .to_bytes();
    if status.is_success() {
        return Ok(bytes);
    }
    let message = if text {
        String::from_utf8_lossy(&bytes).trim().to_string()
    } else {
        String::new()
    };
    Err(generic_server_response(status.as_u16(), &message))
}

fn connector(ca_pem: Option<&[u8]>) -> Result<TlsConnector, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in ca_pem
        .map(CertificateDer::pem_slice_iter)
        .into_iter()
        .flatten()
        .flatten()
    {
        roots
            .add(cert)
            .map_err(|e| format!("unable to load root certificates: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// Go's `net.Dial` wording: `dial tcp 127.0.0.1:1: connect: connection refused`.
fn dial_error(host: &str, port: u16, error: &std::io::Error) -> String {
    let why = match error.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
        _ => error.to_string(),
    };
    format!("dial tcp {host}:{port}: {why}")
}

/// Go's `crypto/tls` wording of the common verification failure.
fn tls_error(error: &std::io::Error) -> String {
    let text = error.to_string();
    if text.contains("UnknownIssuer") {
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            .into();
    }
    format!("tls: {text}")
}

/// client-go's `NewGenericServerResponse` for a status that is not a `Status` body (the
/// message after `failed to call webhook: `).
fn generic_server_response(code: u16, message: &str) -> String {
    let server = if message.is_empty() {
        "unknown"
    } else {
        message
    };
    match code {
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "Unauthorized".into(),
        404 => "the server could not find the requested resource".into(),
        405 => "the server does not allow this method on the requested resource".into(),
        429 => "the server has received too many requests and has asked us to try again later"
            .into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        _ => format!("an error on the server ({server:?}) has prevented the request from succeeding"),
    }
}
