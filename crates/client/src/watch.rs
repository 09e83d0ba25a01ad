//! Watch responses: newline-delimited JSON events over a chunked body, decoded incrementally.
//!
//! Mirrors client-go `rest/watch` (`StreamWatcher`) and `pkg/watch`. Instead of a channel fed by a
//! goroutine, [`WatchStream::next`] is a plain `async fn` the caller drives, so a debugger can step
//! from the caller into the decoder.
//!
//! # Guarantees
//! - Events split across chunks, several events in one chunk, and arbitrarily large events are
//!   decoded the same way: bytes are buffered until a newline completes a line.
//! - A malformed line yields [`Error::WatchDecode`] naming its line number with a truncated excerpt,
//!   and the stream ends. Nothing here panics on server input.
//! - A stream that delivers no bytes for its idle timeout yields [`Error::WatchIdle`]: a silently
//!   dead TCP connection is noticed instead of waiting forever.
//! - A body that fails mid-stream (reset, unexpected EOF, HTTP/2 ping timeout) yields
//!   [`Error::WatchInterrupted`], distinct from a malformed event ([`Error::WatchDecode`]): the
//!   first means "re-watch from the last resourceVersion", the second that the server sent
//!   something we cannot understand.

use std::marker::PhantomData;
use std::time::Duration;

use kube_core::WatchEvent;
use serde::de::DeserializeOwned;

use crate::body::Body;
use crate::error::{Error, Result, error_chain, excerpt};
use crate::protobuf::ProtobufWatch;
use crate::wire_object::{ObjectHead, WireObject};

/// A decoded event with its object's bytes, when they were asked for.
type EventWithBytes<K> = (WatchEvent<K>, Option<WireObject>);

/// The object of a JSON watch event, in place.
#[derive(serde::Deserialize)]
struct EventObject<'a> {
    #[serde(borrow)]
    object: &'a serde_json::value::RawValue,
}

/// Splits a byte stream into lines and decodes each as a `WatchEvent<K>`.
#[derive(Debug)]
pub(crate) struct WatchDecoder {
    /// Unconsumed bytes. Invariant: `buf[..start]` is already decoded.
    buf: Vec<u8>,
    /// Start of the first undecoded line.
    start: usize,
    /// Bytes after `start` already searched for a newline (so a huge line is scanned once).
    scanned: usize,
    /// Lines decoded so far (for error messages).
    line: u64,
    url: String,
}

impl WatchDecoder {
    pub(crate) fn new(url: &str) -> WatchDecoder {
        WatchDecoder {
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            line: 0,
            url: url.to_owned(),
        }
    }

    /// Appends a chunk, first dropping the bytes of lines already decoded.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete event in the buffer, if any, with its object's bytes when
    /// `keep_bytes` (and the event carries an object).
    pub(crate) fn next_event<K: DeserializeOwned>(
        &mut self,
        keep_bytes: bool,
    ) -> Option<Result<EventWithBytes<K>>> {
        loop {
            let from = self.start + self.scanned;
            let Some(newline) = self.buf[from..].iter().position(|b| *b == b'\n') else {
                self.scanned = self.buf.len() - self.start;
                return None;
            };
            let end = from + newline;
            let line_start = self.start;
            self.start = end + 1;
            self.scanned = 0;
            self.line += 1;
            if self.buf[line_start..end].trim_ascii().is_empty() {
                continue;
            }
            return Some(self.decode(line_start, end, keep_bytes));
        }
    }

    /// The body ended: decodes a final line that had no trailing newline.
    pub(crate) fn finish<K: DeserializeOwned>(
        &mut self,
        keep_bytes: bool,
    ) -> Option<Result<EventWithBytes<K>>> {
        let (start, end) = (self.start, self.buf.len());
        self.start = end;
        self.scanned = 0;
        if self.buf[start..end].trim_ascii().is_empty() {
            return None;
        }
        self.line += 1;
        Some(self.decode(start, end, keep_bytes))
    }

    fn decode<K: DeserializeOwned>(
        &self,
        start: usize,
        end: usize,
        keep_bytes: bool,
    ) -> Result<EventWithBytes<K>> {
        let line = &self.buf[start..end];
        let error = |source| Error::WatchDecode {
            url: self.url.clone(),
            line: self.line,
            excerpt: excerpt(line),
            source,
        };
        let event: WatchEvent<K> = serde_json::from_slice(line).map_err(error)?;
        let has_object = matches!(
            event,
            WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Deleted(_)
        );
        if !(keep_bytes && has_object) {
            return Ok((event, None));
        }
        // A second pass over the line, which only finds where the object lies (no allocation).
        let object: EventObject<'_> = serde_json::from_slice(line).map_err(error)?;
        let bytes = WireObject::Json(object.object.get().as_bytes().into());
        Ok((event, Some(bytes)))
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        assert!(self.start <= self.buf.len());
        assert!(self.start + self.scanned <= self.buf.len());
        assert!(!self.buf[self.start..self.start + self.scanned].contains(&b'\n'));
    }
}

/// The decoder of a watch body, chosen by its `Content-Type`.
#[derive(Debug)]
pub(crate) enum EventDecoder {
    /// Newline-delimited JSON events.
    Json(WatchDecoder),
    /// Length-prefixed protobuf frames (`crate::protobuf`).
    Protobuf(ProtobufWatch),
}

impl EventDecoder {
    fn push(&mut self, chunk: &[u8]) {
        match self {
            EventDecoder::Json(decoder) => decoder.push(chunk),
            EventDecoder::Protobuf(decoder) => decoder.push(chunk),
        }
    }

    fn next_event<K: DeserializeOwned>(
        &mut self,
        keep_bytes: bool,
    ) -> Option<Result<EventWithBytes<K>>> {
        match self {
            EventDecoder::Json(decoder) => decoder.next_event(keep_bytes),
            EventDecoder::Protobuf(decoder) => decoder.next_event(keep_bytes),
        }
    }

    fn finish<K: DeserializeOwned>(
        &mut self,
        keep_bytes: bool,
    ) -> Option<Result<EventWithBytes<K>>> {
        match self {
            EventDecoder::Json(decoder) => decoder.finish(keep_bytes),
            EventDecoder::Protobuf(decoder) => decoder.finish(),
        }
    }
}

/// The events of one watch request, in server order.
///
/// Drive it with [`WatchStream::next`]. Dropping it closes the request.
pub struct WatchStream<K> {
    body: Body,
    url: String,
    decoder: EventDecoder,
    /// Longest wait for the next chunk before the connection is declared dead.
    idle_timeout: Option<Duration>,
    /// Set once the body has ended or failed: no more reads.
    done: bool,
    /// Set once an `Err` was returned: no more events, even ones already buffered.
    failed: bool,
    _kind: PhantomData<fn() -> K>,
}

impl<K> std::fmt::Debug for WatchStream<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream")
            .field("url", &self.url)
            .field("idle_timeout", &self.idle_timeout)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<K: DeserializeOwned> WatchStream<K> {
    /// A stream decoding `body`, the JSON response of the watch at `url`.
    pub(crate) fn new(body: Body, url: &str, idle_timeout: Option<Duration>) -> WatchStream<K> {
        Self::with_decoder(
            body,
            url,
            idle_timeout,
            EventDecoder::Json(WatchDecoder::new(url)),
        )
    }

    /// A stream decoding `body` with `decoder`.
    pub(crate) fn with_decoder(
        body: Body,
        url: &str,
        idle_timeout: Option<Duration>,
        decoder: EventDecoder,
    ) -> WatchStream<K> {
        WatchStream {
            body,
            url: url.to_owned(),
            decoder,
            idle_timeout,
            done: false,
            failed: false,
            _kind: PhantomData,
        }
    }

    /// Next event; `None` when the server closed the stream cleanly; an `Err` ends the stream
    /// (later calls return `None`).
    ///
    /// A `WatchEvent::Error(status)` is an event, not an `Err`: the server sends it (typically a
    /// 410 Expired) and then closes the stream.
    pub async fn next(&mut self) -> Option<Result<WatchEvent<K>>> {
        let next = self.next_event(false).await?;
        Some(next.map(|(event, _)| event))
    }

    /// [`next`](Self::next), with the bytes of the event's object (`None` for a bookmark or an
    /// error): its slice of the event line (JSON) or its envelope's message (protobuf), copied.
    /// A byte-backed cache keeps these instead of the decoded object.
    pub async fn next_with_bytes(&mut self) -> Option<Result<(WatchEvent<K>, Option<WireObject>)>> {
        self.next_event(true).await
    }

    /// [`next_with_bytes`](Self::next_with_bytes), with the event's object decoded only as an
    /// [`ObjectHead`] (name, namespace, resourceVersion, labels; the rest skipped, see
    /// `wire_object.rs`): a byte-backed cache keeps the bytes and decodes them when read.
    /// Bookmarks and errors are decoded as by [`next`](Self::next).
    pub async fn next_head_with_bytes(
        &mut self,
    ) -> Option<Result<(WatchEvent<ObjectHead>, Option<WireObject>)>> {
        self.next_event(true).await
    }

    /// The next event, its object decoded as `T` (the stream's kind, or a part of it).
    async fn next_event<T: DeserializeOwned>(
        &mut self,
        keep_bytes: bool,
    ) -> Option<Result<EventWithBytes<T>>> {
        loop {
            if self.failed {
                return None;
            }
            if let Some(event) = self.decoder.next_event(keep_bytes) {
                self.failed = event.is_err();
                return Some(event);
            }
            if self.done {
                return None;
            }
            match self.read_chunk().await {
                Ok(Some(chunk)) => self.decoder.push(&chunk),
                Ok(None) => {
                    self.done = true;
                    let last = self.decoder.finish(keep_bytes);
                    self.failed = last.as_ref().is_some_and(Result::is_err);
                    return last;
                }
                Err(e) => {
                    (self.done, self.failed) = (true, true);
                    return Some(Err(e));
                }
            }
        }
    }

    async fn read_chunk(&mut self) -> Result<Option<bytes::Bytes>> {
        let url = &self.url;
        let next = match self.idle_timeout {
            None => self.body.next_chunk().await,
            Some(after) => match tokio::time::timeout(after, self.body.next_chunk()).await {
                Ok(next) => next,
                Err(_) => {
                    return Err(Error::WatchIdle {
                        url: url.clone(),
                        after,
                    });
                }
            },
        };
        match next {
            None => Ok(None),
            Some(Ok(chunk)) => Ok(Some(chunk)),
            // Once the response has started, a failing body is always the connection going away
            // (hyper reports resets, truncated chunks, GOAWAY and ping timeouts here), never a
            // problem with the request: report it as the watch ending, not as a failed request.
            Some(Err(e)) => Err(Error::WatchInterrupted {
                url: url.clone(),
                message: error_chain(e.as_ref()),
            }),
        }
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
