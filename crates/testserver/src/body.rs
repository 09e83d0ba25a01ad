//! Response bodies: whole buffers, list bodies written out in 64 KiB chunks, and watch bodies fed by
//! a channel.
//!
//! # Why custom bodies
//! A 100k-object list must not be concatenated into one buffer under the store lock; the list body
//! holds cheap handles to each object's stored bytes and copies them into moderately sized chunks
//! only as hyper asks for more. A watch body yields one chunk per event as it happens.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use tokio::sync::mpsc;

/// The response body type of [`crate::ApiServer::handle`]: `Send`, not `Sync`.
pub type BoxBody = http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>;

/// A body holding one buffer.
pub(crate) fn full(bytes: Bytes) -> BoxBody {
    Full::new(bytes).boxed_unsync()
}

const CHUNK: usize = 64 * 1024;

/// `head`, then the items separated by commas, then `tail`, yielded in chunks of about 64 KiB.
pub(crate) struct ListBody {
    head: Option<Bytes>,
    items: std::vec::IntoIter<Bytes>,
    /// Written before each item: `{` when the items are objects cut after their opening brace.
    item_prefix: &'static [u8],
    first: bool,
    tail: Option<Bytes>,
}

impl ListBody {
    /// A body of whole items.
    pub(crate) fn boxed(head: Bytes, items: Vec<Bytes>, tail: Bytes) -> BoxBody {
        Self::with_prefix(head, items, b"", tail)
    }

    /// A body of objects given by their [`Stored::untyped_rest`](crate::storage::objects::Stored::untyped_rest):
    /// each is written as `{` and those bytes, without copying them first.
    pub(crate) fn boxed_untyped(head: Bytes, items: Vec<Bytes>, tail: Bytes) -> BoxBody {
        Self::with_prefix(head, items, b"{", tail)
    }

    fn with_prefix(
        head: Bytes,
        items: Vec<Bytes>,
        item_prefix: &'static [u8],
        tail: Bytes,
    ) -> BoxBody {
        ListBody {
            head: Some(head),
            items: items.into_iter(),
            item_prefix,
            first: true,
            tail: Some(tail),
        }
        .boxed_unsync()
    }
}

impl Body for ListBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let mut chunk = BytesMut::new();
        if let Some(head) = this.head.take() {
            chunk.extend_from_slice(&head);
        }
        while chunk.len() < CHUNK {
            let Some(item) = this.items.next() else { break };
            if !this.first {
                chunk.extend_from_slice(b",");
            }
            this.first = false;
            chunk.extend_from_slice(this.item_prefix);
            chunk.extend_from_slice(&item);
        }
        if chunk.len() < CHUNK
            && let Some(tail) = this.tail.take()
        {
            chunk.extend_from_slice(&tail);
        }
        if chunk.is_empty() {
            Poll::Ready(None)
        } else {
            Poll::Ready(Some(Ok(Frame::data(chunk.freeze()))))
        }
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.tail.is_none() && self.items.len() == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// A body that yields whatever the producer task sends, and ends when the sender is dropped.
pub(crate) struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    pub(crate) fn boxed(rx: mpsc::Receiver<Bytes>) -> BoxBody {
        ChannelBody { rx }.boxed_unsync()
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.get_mut()
            .rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

/// A JSON response.
pub(crate) fn json_response(code: StatusCode, body: Bytes) -> Response<BoxBody> {
    with_json_type(Response::builder().status(code), full(body))
}

/// Adds the JSON content type and builds.
pub(crate) fn with_json_type(builder: http::response::Builder, body: BoxBody) -> Response<BoxBody> {
    builder
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// Adds one `Warning: 299 - "<text>"` header per warning (apiserver `warning.AddWarning`).
pub(crate) fn add_warnings(response: &mut Response<BoxBody>, warnings: &[String]) {
    for text in warnings {
        let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn list_body_joins_items_with_commas() {
        let items = vec![
            Bytes::from_static(b"1"),
            Bytes::from_static(b"2"),
            Bytes::from_static(b"3"),
        ];
        let body = ListBody::boxed(Bytes::from_static(b"["), items, Bytes::from_static(b"]"));
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"[1,2,3]");
    }

    #[tokio::test]
    async fn list_body_splits_large_lists_into_chunks() {
        let item = Bytes::from(vec![b'x'; 1000]);
        let body = ListBody::boxed(
            Bytes::from_static(b"["),
            vec![item; 200],
            Bytes::from_static(b"]"),
        );
        let mut body = std::pin::pin!(body);
        let mut frames = 0;
        let mut total = 0;
        while let Some(frame) = body.frame().await {
            frames += 1;
            total += frame.unwrap().into_data().unwrap().len();
        }
        assert!(frames >= 3, "{frames}");
        assert_eq!(total, 2 + 200 * 1000 + 199);
    }

    #[tokio::test]
    async fn list_body_with_no_items_is_head_and_tail() {
        let body = ListBody::boxed(
            Bytes::from_static(b"["),
            Vec::new(),
            Bytes::from_static(b"]"),
        );
        assert_eq!(&body.collect().await.unwrap().to_bytes()[..], b"[]");
    }
}
