//! Streaming decoders of protobuf list bodies and watch streams: items and events are decoded one
//! at a time as the bytes arrive, never the whole body at once.
//!
//! # List bodies
//! `k8s\0`, then a `runtime.Unknown` whose `raw` (field 2) is the `XxxList` message: `metadata = 1`
//! (a `ListMeta`) and `items = 2`, each item a length-delimited record. [`ListDecoder`] walks the
//! envelope and then the list's records as they come; an item lying wholly in the chunk at hand
//! (most of them) is decoded in place, one straddling chunks is copied until its last byte arrives.
//! Peak memory is the decoded items plus one raw item, like the client's JSON list decoder.
//!
//! # Watch streams
//! `application/vnd.kubernetes.protobuf;stream=watch`: each frame is a 4-byte big-endian length
//! and a `WatchEvent` message (no magic): `type = 1`, `object = 2` (a `RawExtension` whose bytes
//! are a whole protobuf body with its own envelope). Mirrors apimachinery's
//! `framer.LengthDelimitedFrameReader` + `protobuf.RawSerializer`, which the real servers write.
//!
//! Truncation and malformed records are [`CodecError`]s naming the byte where they were found.

use serde::Deserialize;

use crate::borrowed_envelope::BorrowedEnvelope;
use crate::envelope::MAGIC;
use crate::error::{CodecError, Result};
use crate::typed::{ProtoKind, from_body};
use crate::wire::{Data, Header, Reader, record_header};

/// Where a list decoder is in the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the 4-byte magic.
    Magic,
    /// Between the envelope's records.
    Envelope,
    /// Inside the list message, with this many bytes of it left.
    List { left: usize },
    /// Inside a `Status` (the server answered an error instead of a list), this many bytes long.
    Status { len: usize },
}

/// What one step over the input did.
enum Step {
    /// Consumed this many bytes.
    Used(usize),
    /// Cannot progress until this many bytes (from the same start) are at hand.
    Need(usize),
}

/// A list body as decoded by [`ListDecoder::finish`].
#[derive(Debug)]
pub struct DecodedList<T> {
    /// The envelope's `apiVersion`, e.g. `apps/v1`.
    pub api_version: String,
    /// The envelope's `kind`, e.g. `DeploymentList`, or `Status`.
    pub kind: String,
    /// The items not taken while decoding ([`ListDecoder::take_items`]), in body order.
    pub items: Vec<T>,
    metadata: Vec<u8>,
    status: Option<Vec<u8>>,
    proto: ProtoKind,
}

impl<T> DecodedList<T> {
    /// The list's `metadata` (a `ListMeta`: `resourceVersion`, `continue`, ...).
    ///
    /// # Errors
    /// [`CodecError::InvalidField`] when it does not decode as `M`.
    pub fn metadata<'de, M: Deserialize<'de>>(&'de self) -> Result<M> {
        self.proto.decode_list_meta(&self.metadata)
    }

    /// The `Status` the server sent instead of a list, decoded as `S`; `None` for a list.
    pub fn status<'de, S: Deserialize<'de>>(&'de self) -> Option<Result<S>> {
        let raw = self.status.as_deref()?;
        Some(crate::typed::decode_status(self.api_version.as_str(), raw))
    }
}

/// Incremental decoder of one protobuf list body into items of type `T`.
///
/// Feed it the body's chunks with [`ListDecoder::feed`], then call [`ListDecoder::finish`].
pub struct ListDecoder<T> {
    proto: ProtoKind,
    state: State,
    /// Bytes of a record (or header) that straddles chunks. Invariant: empty between records when
    /// the chunk at hand holds the rest.
    pending: Vec<u8>,
    /// Body bytes consumed so far, for error positions.
    offset: usize,
    envelope_api_version: String,
    envelope_kind: String,
    metadata: Vec<u8>,
    status: Option<Vec<u8>>,
    saw_list: bool,
    /// Decoded items not yet taken by [`ListDecoder::take_items`].
    items: Vec<T>,
    /// Set by [`keeping_messages`](ListDecoder::keeping_messages): each item's message bytes are
    /// kept too.
    keep_messages: bool,
    /// The message bytes of `items`, one each, when `keep_messages`. Invariant: empty or as long
    /// as `items`.
    item_messages: Vec<Box<[u8]>>,
    /// Items decoded so far, taken or not.
    decoded: usize,
}

impl<T: for<'de> Deserialize<'de>> ListDecoder<T> {
    /// A decoder of list bodies of the kind `proto`.
    pub fn new(proto: ProtoKind) -> Self {
        ListDecoder {
            proto,
            state: State::Magic,
            pending: Vec::new(),
            offset: 0,
            envelope_api_version: String::new(),
            envelope_kind: String::new(),
            metadata: Vec::new(),
            status: None,
            saw_list: false,
            items: Vec::new(),
            keep_messages: false,
            item_messages: Vec::new(),
            decoded: 0,
        }
    }

    /// The same decoder, also keeping a copy of each item's message bytes (what
    /// [`ProtoKind::decode`] decodes the item from) for
    /// [`take_items_with_messages`](Self::take_items_with_messages): a cache that keeps objects
    /// as bytes stores them instead of the decoded item.
    pub fn keeping_messages(mut self) -> Self {
        self.keep_messages = true;
        self
    }

    /// [`take_items`](Self::take_items), each item with its message bytes when
    /// [`keeping_messages`](Self::keeping_messages), else `None`.
    pub fn take_items_with_messages(&mut self) -> impl Iterator<Item = (T, Option<Box<[u8]>>)> {
        let messages = self.item_messages.drain(..).map(Some);
        self.items
            .drain(..)
            .zip(messages.chain(std::iter::repeat_with(|| None)))
    }

    /// Items decoded so far.
    pub fn items_decoded(&self) -> usize {
        self.decoded
    }

    /// Takes the items decoded since the last call, in body order. A caller that takes them after
    /// every [`feed`](Self::feed) holds at most a chunk's worth of items in the decoder, so it can
    /// shrink or drop each one (an informer's transform) before the next is decoded;
    /// [`finish`](Self::finish) then returns only the items not taken.
    pub fn take_items(&mut self) -> std::vec::Drain<'_, T> {
        self.items.drain(..)
    }

    /// Consumes one chunk of the body, decoding every item it completes.
    ///
    /// # Errors
    /// A [`CodecError`] naming the body offset and, for an item, its index and the JSON path.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<()> {
        loop {
            if self.pending.is_empty() {
                if chunk.is_empty() {
                    return Ok(());
                }
                match self.step(chunk)? {
                    Step::Used(used) => {
                        chunk = &chunk[used..];
                        self.offset += used;
                    }
                    Step::Need(_) => {
                        self.pending.extend_from_slice(chunk);
                        return Ok(());
                    }
                }
                continue;
            }
            let pending = std::mem::take(&mut self.pending);
            let step = self.step(&pending);
            self.pending = pending;
            match step? {
                Step::Used(used) => {
                    self.pending.drain(..used);
                    self.offset += used;
                }
                Step::Need(_) if chunk.is_empty() => return Ok(()),
                Step::Need(total) => {
                    let missing = total.saturating_sub(self.pending.len()).max(1);
                    let take = missing.min(chunk.len());
                    self.pending.extend_from_slice(&chunk[..take]);
                    chunk = &chunk[take..];
                }
            }
        }
    }

    fn malformed(&self, reason: impl std::fmt::Display) -> CodecError {
        CodecError::MessageDecodeFailed {
            message: format!("{}List", self.proto.message_name()),
            reason: format!("{reason} (at body byte {})", self.offset),
        }
    }

    /// One step at the start of `bytes`.
    fn step(&mut self, bytes: &[u8]) -> Result<Step> {
        match self.state {
            State::Magic if bytes.len() < MAGIC.len() => Ok(Step::Need(MAGIC.len())),
            State::Magic if !bytes.starts_with(&MAGIC) => Err(CodecError::MissingMagic),
            State::Magic => {
                self.state = State::Envelope;
                Ok(Step::Used(MAGIC.len()))
            }
            State::Envelope => self.envelope_step(bytes),
            State::List { left: 0 } => {
                self.state = State::Envelope;
                Ok(Step::Used(0))
            }
            State::List { left } => self.list_step(bytes, left),
            State::Status { len } if bytes.len() < len => Ok(Step::Need(len)),
            State::Status { len } => {
                self.status = Some(bytes[..len].to_vec());
                self.state = State::Envelope;
                Ok(Step::Used(len))
            }
        }
    }

    /// A record of the envelope: `raw` is entered, the others read whole.
    fn envelope_step(&mut self, bytes: &[u8]) -> Result<Step> {
        let header = record_header(bytes).map_err(|e| self.malformed(e))?;
        let Some((number, header)) = header else {
            return Ok(Step::Need(bytes.len() + 1));
        };
        let (head, body) = match header {
            Header::Len { header, body } => (header, body),
            Header::Scalar(len) if bytes.len() < len => return Ok(Step::Need(len)),
            Header::Scalar(len) => return Ok(Step::Used(len)),
        };
        if number == 2 {
            self.saw_list = true;
            self.state = if self.envelope_kind == "Status" {
                State::Status { len: body }
            } else {
                State::List { left: body }
            };
            return Ok(Step::Used(head));
        }
        let total = head.saturating_add(body);
        if bytes.len() < total {
            return Ok(Step::Need(total));
        }
        let value = &bytes[head..total];
        match number {
            1 => {
                let mut envelope = BorrowedEnvelope::default();
                envelope.read_type_meta(value)?;
                self.envelope_api_version = envelope.api_version.to_string();
                self.envelope_kind = envelope.kind.to_string();
            }
            3 if !value.is_empty() => {
                let encoding = String::from_utf8_lossy(value).into_owned();
                return Err(CodecError::UnsupportedEncoding(encoding));
            }
            _ => {}
        }
        Ok(Step::Used(total))
    }

    /// A record of the list message, `left` bytes of which remain.
    fn list_step(&mut self, bytes: &[u8], left: usize) -> Result<Step> {
        let window = &bytes[..bytes.len().min(left)];
        let header = record_header(window).map_err(|e| self.malformed(e))?;
        let Some((number, header)) = header else {
            if window.len() == left {
                return Err(self.malformed("the list message ends inside a record header"));
            }
            return Ok(Step::Need(bytes.len() + 1));
        };
        let (head, total) = match header {
            Header::Len { header, body } => (header, header.saturating_add(body)),
            Header::Scalar(len) => (len, len),
        };
        if total > left {
            return Err(self.malformed(format!(
                "a record of {total} bytes runs past the list message ({left} bytes left)"
            )));
        }
        if bytes.len() < total {
            return Ok(Step::Need(total));
        }
        let value = &bytes[head..total];
        match (number, header) {
            (1, Header::Len { .. }) => self.metadata = value.to_vec(),
            (2, Header::Len { .. }) => {
                let index = self.decoded;
                let item = self.proto.decode(value).map_err(|e| match e {
                    CodecError::InvalidField { path, reason } => CodecError::InvalidField {
                        path: format!("items[{index}].{path}"),
                        reason,
                    },
                    other => other,
                })?;
                self.items.push(item);
                if self.keep_messages {
                    self.item_messages.push(value.into());
                }
                self.decoded += 1;
            }
            _ => {}
        }
        self.state = State::List { left: left - total };
        Ok(Step::Used(total))
    }

    /// The body has ended: checks it was complete and returns the list.
    ///
    /// # Errors
    /// A [`CodecError`] when the body ended early (inside the magic, the envelope, the list or an
    /// item) or held no list at all.
    pub fn finish(self) -> Result<DecodedList<T>> {
        let complete = self.pending.is_empty()
            && matches!(self.state, State::Envelope | State::List { left: 0 })
            && self.saw_list;
        if !complete {
            return Err(self.malformed(format!(
                "the body ended early ({} bytes of an unfinished record, in {:?})",
                self.pending.len(),
                self.state
            )));
        }
        Ok(DecodedList {
            api_version: self.envelope_api_version,
            kind: self.envelope_kind,
            items: self.items,
            metadata: self.metadata,
            status: self.status,
            proto: self.proto,
        })
    }
}

/// Splits a protobuf watch stream into frames as chunks arrive.
#[derive(Debug, Default)]
pub struct WatchFrames {
    /// Unconsumed bytes. Invariant: `buf[..start]` was handed out already.
    buf: Vec<u8>,
    start: usize,
    frames: u64,
}

/// One watch event as it lies in its frame.
#[derive(Clone, Copy, Debug)]
pub struct WatchFrame<'a> {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub event_type: &'a str,
    /// The whole protobuf body of the event's object (`k8s\0` + envelope).
    pub object: &'a [u8],
}

impl<'a> WatchFrame<'a> {
    /// The event's object decoded as `T` (with `apiVersion` and `kind` from its envelope).
    ///
    /// # Errors
    /// As [`from_body`].
    pub fn decode<T: Deserialize<'a>>(&self) -> Result<T> {
        from_body(self.object)
    }

    /// The object's message bytes (its envelope's `raw`), which [`ProtoKind::decode`] of the
    /// object's kind decodes: what a cache that keeps objects as bytes stores.
    ///
    /// # Errors
    /// As [`from_body`]: the object is not a protobuf body, or of a kind without a schema here,
    /// or its `raw` is compressed.
    pub fn message(&self) -> Result<&'a [u8]> {
        let envelope = BorrowedEnvelope::parse(self.object)?;
        envelope.plan()?;
        Ok(envelope.raw)
    }
}

impl WatchFrames {
    /// A splitter at the start of a stream.
    pub fn new() -> WatchFrames {
        WatchFrames::default()
    }

    /// Appends a chunk, first dropping the frames already handed out.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete frame, if the buffer holds one.
    ///
    /// # Errors
    /// [`CodecError::MessageDecodeFailed`] when the frame is not a `WatchEvent` (naming the
    /// frame's number in the stream).
    pub fn next_frame(&mut self) -> Option<Result<WatchFrame<'_>>> {
        let rest = &self.buf[self.start..];
        let (prefix, rest) = rest.split_first_chunk::<4>()?;
        let len = u32::from_be_bytes(*prefix) as usize;
        let frame = rest.get(..len)?;
        self.start += 4 + len;
        self.frames += 1;
        Some(
            watch_event(frame).map_err(|reason| CodecError::MessageDecodeFailed {
                message: "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent".into(),
                reason: format!("frame {}: {reason}", self.frames),
            }),
        )
    }

    /// The stream has ended: an error when it stopped inside a frame.
    ///
    /// # Errors
    /// [`CodecError::MessageDecodeFailed`] naming how many bytes of the frame were missing.
    pub fn finish(&self) -> Result<()> {
        let rest = &self.buf[self.start..];
        if rest.is_empty() {
            return Ok(());
        }
        let expected = match rest.split_first_chunk::<4>() {
            Some((prefix, _)) => format!("{} bytes", u32::from_be_bytes(*prefix) as usize + 4),
            None => "a 4-byte length".to_string(),
        };
        Err(CodecError::MessageDecodeFailed {
            message: "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent".into(),
            reason: format!(
                "the stream ended inside frame {}: {} bytes of {expected}",
                self.frames + 1,
                rest.len()
            ),
        })
    }
}

/// Reads a `WatchEvent` message: `type = 1`, `object = 2` (a `RawExtension`, `raw = 1`).
fn watch_event(frame: &[u8]) -> std::result::Result<WatchFrame<'_>, String> {
    let mut event = WatchFrame {
        event_type: "",
        object: &[],
    };
    let mut reader = Reader::new(frame);
    while let Some((number, data)) = reader.record().map_err(|e| e.to_string())? {
        match (number, data) {
            (1, Data::Len(text)) => {
                event.event_type = std::str::from_utf8(text).map_err(|e| e.to_string())?;
            }
            (2, Data::Len(object)) => {
                let mut fields = Reader::new(object);
                while let Some((n, d)) = fields.record().map_err(|e| e.to_string())? {
                    if let (1, Data::Len(raw)) = (n, d) {
                        event.object = raw;
                    }
                }
            }
            _ => {}
        }
    }
    if event.event_type.is_empty() {
        return Err("the event has no type".into());
    }
    Ok(event)
}
