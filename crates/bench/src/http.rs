//! A minimal HTTP client for the harness itself: loading objects, fetching list pages for the
//! decode floor, and the "raw" transfer baseline.
//!
//! # Why not kubegen-client or kube-rs here
//! The baselines must not carry the cost of the clients they are compared with: the raw role is
//! "bytes over the same socket type, nothing else". So against a plain-HTTP test server this speaks
//! HTTP/1.1 through hyper directly, keeps connections alive, and never decodes a body it does not
//! have to.
//!
//! A real API server needs TLS and a bearer token from a kubeconfig: then the bytes go through
//! kubegen-client's transport ([`kubegen_client::Client::send`]: hyper + rustls, the same
//! connection setup every measured kubegen client pays), still without decoding the body.

use anyhow::{Context, Result, bail};
use std::path::Path;

use bytes::{Bytes, BytesMut};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// Page size every list in the benchmarks uses (client-go's and kube-rs's default).
pub const PAGE_SIZE: usize = 500;

/// A keep-alive client rooted at one server.
#[derive(Clone)]
pub struct RawClient {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    /// Plain HTTP/1.1 to a base URL (the test server).
    Plain {
        base: String,
        client: Box<Client<HttpConnector, Full<Bytes>>>,
    },
    /// kubegen-client's transport, configured from a kubeconfig (a real API server).
    Kubeconfig(kubegen_client::Client),
}

/// What a server says about itself at `/version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerVersion {
    /// The minor version (`"27+"` reads 27).
    pub minor: Option<u32>,
    /// `v1.36.2`, `v1.15.0-dev+1551bfe79a70`.
    pub git_version: Option<String>,
}

impl ServerVersion {
    /// The release the server was built from, without pre-release or build parts (`v1.15.0`
    /// for `v1.15.0-dev+1551bfe79a70`): a name for plots and files.
    pub fn release(&self) -> Option<String> {
        let version = self.git_version.as_deref()?;
        version.split(['-', '+']).next().map(str::to_owned)
    }
}

impl RawClient {
    /// A plain-HTTP client for `base` (e.g. `http://127.0.0.1:43121`, no trailing slash needed).
    pub fn new(base: &str) -> RawClient {
        let client = Client::builder(TokioExecutor::new()).build_http();
        let base = base.trim_end_matches('/').to_owned();
        RawClient {
            inner: Inner::Plain {
                base,
                client: Box::new(client),
            },
        }
    }

    /// A client for the server, TLS and credentials of the kubeconfig at `path` (its current
    /// context).
    ///
    /// # Errors
    /// The kubeconfig cannot be read or names no usable cluster.
    pub async fn from_kubeconfig(path: &Path) -> Result<RawClient> {
        let client = kubeconfig_client(path, None).await?;
        Ok(RawClient {
            inner: Inner::Kubeconfig(client),
        })
    }

    /// Sends one request and collects the whole body. Returns the status and the body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes)> {
        let (base, client) = match &self.inner {
            Inner::Plain { base, client } => (base, client),
            Inner::Kubeconfig(client) => return send_kubeconfig(client, method, path, body).await,
        };
        let request = Request::builder()
            .method(method)
            .uri(format!("{base}{path}"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(body))
            .context("building request")?;
        let response = client
            .request(request)
            .await
            .with_context(|| format!("sending to {path}"))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .context("reading response body")?
            .to_bytes();
        Ok((status, body))
    }

    /// GETs `path`, failing on a non-2xx status.
    pub async fn get(&self, path: &str) -> Result<Bytes> {
        let (status, body) = self.send(Method::GET, path, Bytes::new()).await?;
        if !status.is_success() {
            bail!("GET {path}: {status}: {}", String::from_utf8_lossy(&body));
        }
        Ok(body)
    }

    /// The server's `/version`, if it answers one.
    pub async fn version(&self) -> Option<ServerVersion> {
        let body = self.get("/version").await.ok()?;
        let version: serde_json::Value = serde_json::from_slice(&body).ok()?;
        let text = |field: &str| version.get(field)?.as_str().map(str::to_owned);
        Some(ServerVersion {
            minor: text("minor").and_then(|minor| minor.trim_end_matches('+').parse().ok()),
            git_version: text("gitVersion"),
        })
    }

    /// Fetches every page of the list at `collection` (no query string) as an informer's first
    /// list asks for it, `limit=500&resourceVersion=0` then the `continue` tokens, and returns the
    /// raw page bodies. `resourceVersion=0` lets a real server answer from its watch cache, which
    /// ignores the limit (v1.15 and v1.36 both send every object at once): the same request, and
    /// so the same work on the server, as the informers measured against it. `keep` false
    /// discards each body after reading it (the raw transfer baseline) and returns only the byte
    /// count.
    pub async fn list_pages(&self, collection: &str, keep: bool) -> Result<(Vec<Bytes>, u64)> {
        let mut pages = Vec::new();
        let mut total = 0u64;
        let mut token = String::new();
        loop {
            let mut path = format!("{collection}?limit={PAGE_SIZE}");
            if token.is_empty() {
                path.push_str("&resourceVersion=0");
            } else {
                path.push_str("&continue=");
                path.push_str(&token);
            }
            let page = self.get(&path).await?;
            total += page.len() as u64;
            token = continue_token(&page)?;
            if keep {
                pages.push(page);
            }
            if token.is_empty() {
                return Ok((pages, total));
            }
        }
    }
}

/// A kubegen client for the kubeconfig at `path`, reaching its server at `master` instead when
/// given (`--master`: a proxy in front of it, whose TLS is the server's own).
///
/// # Errors
/// The kubeconfig cannot be loaded or the client cannot be built from it.
pub async fn kubeconfig_client(
    path: &Path,
    master: Option<&str>,
) -> Result<kubegen_client::Client> {
    let mut options = kubegen_client::LoadOptions::default().kubeconfig_path(path);
    if let Some(master) = master {
        options = options.master_url(master);
    }
    let config = kubegen_client::Config::load(&options)
        .await
        .with_context(|| format!("loading kubeconfig {}", path.display()))?;
    kubegen_client::Client::new(config).context("building the kubegen client")
}

/// [`RawClient::send`] through kubegen-client: its error statuses come back as the status and the
/// error's text, so callers treat both transports alike.
async fn send_kubeconfig(
    client: &kubegen_client::Client,
    method: Method,
    path: &str,
    body: Bytes,
) -> Result<(StatusCode, Bytes)> {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(body)
        .context("building request")?;
    let mut response = match client.send(request).await {
        Ok(response) => response,
        Err(error) => {
            let code = error.code().unwrap_or(0);
            let status = StatusCode::from_u16(code).with_context(|| format!("{path}: {error}"))?;
            return Ok((status, Bytes::from(error.to_string())));
        }
    };
    let status = response.status();
    let mut collected = BytesMut::new();
    while let Some(chunk) = response.body_mut().next_chunk().await {
        let chunk = chunk.map_err(|e| anyhow::anyhow!("reading {path}: {e}"))?;
        collected.extend_from_slice(&chunk);
    }
    Ok((status, collected.freeze()))
}

/// The `metadata.continue` token of a list page, found without decoding the items: servers write
/// `metadata` before `items`, so the token (when present) sits near the start. Falls back to a full
/// skim of the page when it is not there.
pub fn continue_token(page: &[u8]) -> Result<String> {
    #[derive(serde::Deserialize)]
    struct Page {
        metadata: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "continue", default)]
        token: Option<String>,
    }
    let items_at = find(page, b"\"items\"").unwrap_or(page.len());
    let head = &page[..items_at];
    if let Some(start) = find(head, b"\"continue\":\"") {
        let rest = &head[start + b"\"continue\":\"".len()..];
        if let Some(end) = rest.iter().position(|byte| *byte == b'"') {
            let token = std::str::from_utf8(&rest[..end]).context("continue token is not UTF-8")?;
            return Ok(percent_encode(token));
        }
    }
    let metadata_first = find(head, b"\"metadata\"").is_some() && items_at < page.len();
    if metadata_first && find(head, b"\"continue\"").is_none() {
        return Ok(String::new());
    }
    let page: Page = serde_json::from_slice(page).context("decoding list metadata")?;
    Ok(page
        .metadata
        .token
        .map(|token| percent_encode(&token))
        .unwrap_or_default())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Encodes a continue token for a query string (tokens are base64, which may hold `+`, `/`, `=`).
fn percent_encode(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    for byte in token.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_token_is_read_from_metadata_and_encoded() -> Result<()> {
        let page = br#"{"kind":"ConfigMapList","metadata":{"resourceVersion":"9","continue":"ab+/="},"items":[]}"#;
        assert_eq!(continue_token(page)?, "ab%2B%2F%3D");
        Ok(())
    }

    #[test]
    fn missing_continue_token_means_last_page() -> Result<()> {
        let page = br#"{"metadata":{"resourceVersion":"9"},"items":[{"data":{"continue":"x"}}]}"#;
        assert_eq!(continue_token(page)?, "");
        Ok(())
    }

    #[test]
    fn a_release_drops_pre_release_and_build_parts() {
        let version = |v: &str| ServerVersion {
            minor: None,
            git_version: Some(v.to_owned()),
        };
        assert_eq!(version("v1.36.2").release().as_deref(), Some("v1.36.2"));
        assert_eq!(
            version("v1.15.0-dev+1551bfe79a70").release().as_deref(),
            Some("v1.15.0")
        );
        assert_eq!(
            version("v1.30.1+k3s1").release().as_deref(),
            Some("v1.30.1")
        );
    }

    #[test]
    fn continue_after_items_is_found_by_the_full_decode() -> Result<()> {
        let page = br#"{"items":[],"metadata":{"continue":"tok"}}"#;
        assert_eq!(continue_token(page)?, "tok");
        Ok(())
    }
}
