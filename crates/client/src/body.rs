//! [`Body`]: the streaming response body every [`Transport`](crate::Transport) returns.
//!
//! One concrete type instead of a generic parameter, so `Client` stays object-safe over any
//! transport: the real one hands back hyper's `Incoming`, an in-process test server a boxed body
//! that yields chunks as watch events happen, a unit test a single `Bytes`.

use std::fmt;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;

/// The error a body may fail with while streaming.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A streaming HTTP response body.
pub struct Body {
    inner: Inner,
}

enum Inner {
    /// Everything at once (or nothing left).
    Full(Option<Bytes>),
    /// Any `http_body::Body`, boxed.
    Stream(UnsyncBoxBody<Bytes, BoxError>),
}

impl Body {
    /// An empty body.
    pub fn empty() -> Body {
        Body {
            inner: Inner::Full(None),
        }
    }

    /// A body that yields `bytes` as one chunk.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Body {
        let bytes = bytes.into();
        Body {
            inner: Inner::Full((!bytes.is_empty()).then_some(bytes)),
        }
    }

    /// Wraps any `http_body::Body` with `Bytes` chunks (hyper's `Incoming`, a test server's boxed
    /// body, a channel-backed stream). Trailers are ignored.
    pub fn new<B>(body: B) -> Body
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Body {
            inner: Inner::Stream(body.map_err(Into::into).boxed_unsync()),
        }
    }

    /// The next chunk of data; `None` at the end of the body.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, BoxError>> {
        match &mut self.inner {
            Inner::Full(bytes) => bytes.take().map(Ok),
            Inner::Stream(body) => loop {
                match body.frame().await? {
                    Ok(frame) => match frame.into_data() {
                        Ok(data) if data.is_empty() => continue,
                        Ok(data) => return Some(Ok(data)),
                        Err(_trailers) => continue,
                    },
                    Err(e) => return Some(Err(e)),
                }
            },
        }
    }

    /// Reads the whole body, failing once it exceeds `limit` bytes.
    pub async fn collect_limited(&mut self, limit: usize) -> Result<Vec<u8>, BoxError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.next_chunk().await {
            let chunk = chunk?;
            if out.len() + chunk.len() > limit {
                return Err(format!("response body larger than {limit} bytes").into());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::Full(bytes) => write!(
                f,
                "Body::Full({} bytes)",
                bytes.as_ref().map_or(0, Bytes::len)
            ),
            Inner::Stream(_) => f.write_str("Body::Stream"),
        }
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::empty()
    }
}
