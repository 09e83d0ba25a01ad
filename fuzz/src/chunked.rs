//! A [`Transport`] that answers every request with one canned body, delivered in chunks whose
//! boundaries the test chooses: the fuzzing seam below `kubegen_client::Client`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use http::{Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::StreamBody;
use kubegen_client::{Body, Client, Transport};

/// Answers every request with `200 OK` and `chunks` as the body, one frame per chunk.
pub struct ChunkedTransport {
    chunks: Vec<Bytes>,
}

impl Transport for ChunkedTransport {
    fn send(
        &self,
        _request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<Response<Body>>> + Send + '_>> {
        let frames: Vec<Result<Frame<Bytes>, Infallible>> = self
            .chunks
            .iter()
            .cloned()
            .map(|chunk| Ok(Frame::data(chunk)))
            .collect();
        let body = Body::new(StreamBody::new(stream::iter(frames)));
        let mut response = Response::new(body);
        *response.status_mut() = StatusCode::OK;
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        Box::pin(async move { Ok(response) })
    }
}

/// A client whose every response is `bytes`, cut at the given offsets (sorted, deduplicated and
/// clamped here, so any `Vec<usize>` a strategy produces is valid).
pub fn client_returning(bytes: &[u8], cuts: &[usize]) -> Client {
    Client::with_transport(
        Arc::new(ChunkedTransport {
            chunks: split(bytes, cuts),
        }),
        "default",
    )
}

/// Splits `bytes` at `cuts` (each taken modulo `len + 1`); empty pieces are kept, as a server may
/// send empty frames too.
pub fn split(bytes: &[u8], cuts: &[usize]) -> Vec<Bytes> {
    let mut offsets: Vec<usize> = cuts.iter().map(|cut| cut % (bytes.len() + 1)).collect();
    offsets.sort_unstable();
    let mut chunks = Vec::with_capacity(offsets.len() + 1);
    let mut start = 0;
    for offset in offsets {
        chunks.push(Bytes::copy_from_slice(&bytes[start..offset]));
        start = offset;
    }
    chunks.push(Bytes::copy_from_slice(&bytes[start..]));
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_every_byte_in_order() {
        let chunks = split(b"abcdef", &[4, 1, 10, 4]);
        let joined: Vec<u8> = chunks.iter().flat_map(|chunk| chunk.to_vec()).collect();
        assert_eq!(joined, b"abcdef");
        assert_eq!(chunks.len(), 5);
        assert_eq!(&chunks[0][..], b"a");
    }
}
