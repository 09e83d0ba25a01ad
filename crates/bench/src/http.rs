//! A minimal plain-HTTP client for the harness itself: loading objects, fetching list pages for
//! the decode floor, and the "raw" transfer baseline.
//!
//! # Why not kubegen-client or kube-rs here
//! The baselines must not carry the cost of the clients they are compared with: the raw role is
//! "bytes over the same socket type, nothing else". So this speaks HTTP/1.1 through hyper directly,
//! keeps connections alive, and never decodes a body it does not have to.

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// Page size every list in the benchmarks uses (client-go's and kube-rs's default).
pub const PAGE_SIZE: usize = 500;

/// A keep-alive HTTP/1.1 client rooted at one server URL.
#[derive(Clone)]
pub struct RawClient {
    base: String,
    inner: Client<HttpConnector, Full<Bytes>>,
}

impl RawClient {
    /// A client for `base` (e.g. `http://127.0.0.1:43121`, no trailing slash needed).
    pub fn new(base: &str) -> RawClient {
        let inner = Client::builder(TokioExecutor::new()).build_http();
        RawClient {
            base: base.trim_end_matches('/').to_owned(),
            inner,
        }
    }

    /// Sends one request and collects the whole body. Returns the status and the body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes)> {
        let request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(body))
            .context("building request")?;
        let response = self
            .inner
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

    /// Fetches every page of the list at `collection` (no query string), 500 per page, and
    /// returns the raw page bodies. `keep` false discards each body after reading it (the raw
    /// transfer baseline) and returns only the byte count.
    pub async fn list_pages(&self, collection: &str, keep: bool) -> Result<(Vec<Bytes>, u64)> {
        let mut pages = Vec::new();
        let mut total = 0u64;
        let mut token = String::new();
        loop {
            let mut path = format!("{collection}?limit={PAGE_SIZE}");
            if !token.is_empty() {
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
    fn continue_after_items_is_found_by_the_full_decode() -> Result<()> {
        let page = br#"{"items":[],"metadata":{"continue":"tok"}}"#;
        assert_eq!(continue_token(page)?, "tok");
        Ok(())
    }
}
