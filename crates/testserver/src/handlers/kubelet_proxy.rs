//! Reaching a kubelet: a Pod's log streamed back, and exec, attach and port-forward upgrades
//! passed through with the bytes spliced both ways.
//!
//! Mirrors apiserver `pkg/registry/generic/rest/streamer.go` (`LocationStreamer`: the kubelet's
//! body copied to the client, flushed as it comes when following) with `response_checker.go`
//! (a kubelet's 400 becomes `BadRequest` with its text, 500 `InternalError`, other codes the
//! generic `(... pods/log p)` message), and apimachinery `pkg/util/proxy/upgradeaware.go`
//! (`UpgradeAwareHandler.tryUpgrade`: the request sent on, the kubelet's answer returned as it
//! is, and after a `101` the two connections joined).
//!
//! Like kube-apiserver without `--kubelet-certificate-authority`, the kubelet's serving
//! certificate is not verified (a kubelet's is usually self-signed).

use std::sync::Arc;

use bytes::Bytes;
use http::header::{AUTHORIZATION, HOST};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_rustls::TlsConnector;

use crate::body::{BoxBody, ChannelBody};
use crate::status::ApiError;

/// The most of a kubelet's error body read (the response checker's `maxReadLength`).
const MAX_ERROR_BODY: usize = 50_000;

/// Where on a kubelet a stream is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    /// The Node's address.
    pub(crate) host: String,
    /// The kubelet's port.
    pub(crate) port: u16,
    /// `/containerLogs/...`, `/exec/...`, `/attach/...` or `/portForward/...`.
    pub(crate) path: String,
    /// The query, encoded.
    pub(crate) query: String,
}

impl Location {
    /// The URL, as errors name it.
    pub(crate) fn url(&self) -> String {
        format!(
            "https://{}:{}{}",
            self.host,
            self.port,
            self.path_and_query()
        )
    }

    fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, self.query)
        }
    }
}

/// An HTTP/1.1 connection to the kubelet at `location` (the connection task runs beside it).
async fn connect(
    location: &Location,
) -> Result<hyper::client::conn::http1::SendRequest<Empty<Bytes>>, String> {
    let tcp = TcpStream::connect((location.host.as_str(), location.port))
        .await
        .map_err(|e| format!("dial tcp {}:{}: {e}", location.host, location.port))?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::try_from(location.host.clone()).map_err(|e| e.to_string())?;
    let tls = connector()?
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls: {e}"))?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = connection.with_upgrades().await;
    });
    Ok(sender)
}

/// The kubelet's log at `location`, streamed; the log of Pod `name`.
///
/// # Errors
/// The kubelet's refusal as the response checker words it; 500 when it cannot be reached.
pub(crate) async fn stream_log(
    location: &Location,
    name: &str,
) -> Result<Response<BoxBody>, ApiError> {
    let url = location.url();
    let unreachable = |e: String| ApiError::internal(format!("Get \"{url}\": {e}"));
    let mut sender = connect(location).await.map_err(unreachable)?;
    let request = Request::get(location.path_and_query())
        .header(HOST, format!("{}:{}", location.host, location.port))
        .body(Empty::new())
        .map_err(|e| unreachable(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let status = response.status();
    let mut body = response.into_body();
    if !status.is_success() {
        let text = read_limited(&mut body).await;
        return Err(checked(status, &String::from_utf8_lossy(&text), name));
    }
    let (chunks, received) = mpsc::channel(16);
    tokio::spawn(async move {
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data()
                && chunks.send(data).await.is_err()
            {
                return;
            }
        }
    });
    let mut answer = Response::new(ChannelBody::boxed(received));
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    Ok(answer)
}

/// At most [`MAX_ERROR_BODY`] bytes of a kubelet's (error) answer.
async fn read_limited(body: &mut hyper::body::Incoming) -> Vec<u8> {
    let mut text = Vec::new();
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            text.extend_from_slice(&data);
        }
        if text.len() >= MAX_ERROR_BODY {
            text.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    text
}

/// A kubelet's non-2xx log answer as `GenericHttpResponseChecker.Check` turns it into a status.
fn checked(status: StatusCode, text: &str, name: &str) -> ApiError {
    match status.as_u16() {
        500 => ApiError::internal(text),
        400 => ApiError::bad_request(text),
        404 => ApiError::generic_server_response(
            404,
            &format!("the server could not find the requested resource ( pods/log {name})"),
        ),
        code => ApiError::generic_server_response(
            code,
            &format!(
                "an error on the server ({text:?}) has prevented the request from succeeding ( pods/log {name})"
            ),
        ),
    }
}

/// Sends the upgrade request `request` on to the kubelet at `location` and answers with the
/// kubelet's answer; after a `101`, joins the client's connection to the kubelet's.
///
/// # Errors
/// 500 `error dialing backend: ...` when the kubelet cannot be reached; 400 when the request
/// asks for no upgrade.
pub(crate) async fn upgrade<B>(
    location: &Location,
    request: &mut Request<B>,
) -> Result<Response<BoxBody>, ApiError> {
    let Some(client_side) = request.extensions_mut().remove::<OnUpgrade>() else {
        return Err(ApiError::bad_request("Upgrade request required".to_owned()));
    };
    let dial_failed = |e: String| ApiError::internal(format!("error dialing backend: {e}"));
    let mut sender = connect(location).await.map_err(dial_failed)?;
    let mut onward = Request::builder()
        .method(request.method().clone())
        .uri(location.path_and_query());
    for (name, value) in request.headers() {
        if name != AUTHORIZATION && name != HOST {
            onward = onward.header(name, value);
        }
    }
    let onward = onward
        .header(HOST, format!("{}:{}", location.host, location.port))
        .body(Empty::new())
        .map_err(|e| dial_failed(e.to_string()))?;
    let mut response = sender
        .send_request(onward)
        .await
        .map_err(|e| dial_failed(e.to_string()))?;
    let status = response.status();
    let mut answer = Response::builder().status(status);
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    if status != StatusCode::SWITCHING_PROTOCOLS {
        let body = read_limited(response.body_mut()).await;
        return answer
            .body(crate::body::full(Bytes::from(body)))
            .map_err(|e| ApiError::internal(e.to_string()));
    }
    let kubelet_side = hyper::upgrade::on(&mut response);
    tokio::spawn(async move {
        let (Ok(client), Ok(kubelet)) = (client_side.await, kubelet_side.await) else {
            return;
        };
        let (mut client, mut kubelet) = (TokioIo::new(client), TokioIo::new(kubelet));
        let _ = tokio::io::copy_bidirectional(&mut client, &mut kubelet).await;
    });
    answer
        .body(crate::body::full(Bytes::new()))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// A TLS connector that accepts any kubelet certificate (ring provider).
fn connector() -> Result<TlsConnector, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyKubeletCertificate(provider)))
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// Accepts any server certificate, still checking the handshake's signatures with it: the
/// API server's `InsecureSkipVerify` towards kubelets.
#[derive(Debug)]
struct AnyKubeletCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyKubeletCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
