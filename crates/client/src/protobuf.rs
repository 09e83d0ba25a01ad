//! Protobuf on the wire for built-in kinds: what `get`, `list` and `watch` ask for, and how a
//! response is decoded by its `Content-Type`.
//!
//! # Why
//! A protobuf body is about a third of the JSON of the same objects and is decoded without parsing
//! text (numbers, escapes, key lookups by string), so a cache syncs with less client CPU; client-go
//! based controllers request it for every built-in kind (`ContentType` in `rest.Config`, which
//! kube-controller-manager and kubectl set). Custom resources have no protobuf form and always
//! use JSON.
//!
//! # How
//! A request for a built-in kind (one the codec has a schema for: `ProtoKind::lookup`) carries
//! `Accept: application/vnd.kubernetes.protobuf, application/json` (a watch asks for the
//! `;stream=watch` variant), so a server or proxy that cannot write protobuf answers JSON. The
//! response is decoded by its `Content-Type`, never by what was asked: protobuf bodies through
//! `kubegen_codec` (a list item by item as chunks arrive, a watch frame by frame), anything else as
//! JSON. Both decode into the same k8s-openapi types (the codec's tests compare them on real
//! servers' answers). [`WireFormat::Json`] turns protobuf off for a client or one resource client.
//!
//! Mirrors client-go `rest.ContentConfig` (`AcceptContentTypes`, `ContentType`) and the
//! negotiated decoding of `rest.Request.transformResponse` / `StreamWatcher`.
//!
//! # Differences from client-go
//! client-go sends protobuf only when the caller set `ContentType` in its config; kubegen defaults
//! to it for built-in kinds, as the controllers kubegen mirrors do, since the decoded objects are
//! the same and only the cost differs. Request bodies (create, update) stay JSON: the codec's
//! encoder goes through JSON values, which would cost more than it saves.

use http::HeaderMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube_core::{ObjectList, Status, TypeMeta, WatchEvent};
use kubegen_codec::{ProtoKind, WatchFrames};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::list_decoder::ListDecoder;
use crate::wire_object::WireObject;

/// Which encoding `get`, `list` and `watch` of built-in kinds ask for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WireFormat {
    /// Protobuf for built-in kinds (JSON for custom resources and for servers that answer JSON).
    #[default]
    Protobuf,
    /// JSON for everything.
    Json,
}

/// `Accept` of a get or list of a built-in kind.
pub(crate) const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";

/// `Accept` of a watch of a built-in kind.
pub(crate) const ACCEPT_PROTOBUF_WATCH: &str =
    "application/vnd.kubernetes.protobuf;stream=watch, application/json";

/// Whether a response is protobuf, by its `Content-Type`.
pub(crate) fn is_protobuf(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .starts_with(kubegen_codec::PROTOBUF_MEDIA_TYPE)
        })
}

fn decode_error(what: String) -> impl FnOnce(kubegen_codec::CodecError) -> Error {
    move |source| Error::ProtobufDecode { what, source }
}

/// Decodes a whole protobuf response (a `get`).
pub(crate) fn decode_object<K: DeserializeOwned>(body: &[u8], url: &str) -> Result<K> {
    kubegen_codec::from_body(body).map_err(decode_error(format!("response of GET {url}")))
}

/// A list body's decoder, chosen by the response's `Content-Type`.
pub(crate) enum AnyListDecoder<K> {
    Json(ListDecoder<K>),
    Protobuf(kubegen_codec::ListDecoder<K>, String),
}

impl<K: DeserializeOwned + Clone> AnyListDecoder<K> {
    /// The decoder for a response with `headers` to the list at `url`.
    pub(crate) fn new(headers: &HeaderMap, proto: Option<ProtoKind>, url: &str) -> Self {
        match proto {
            Some(proto) if is_protobuf(headers) => {
                AnyListDecoder::Protobuf(kubegen_codec::ListDecoder::new(proto), url.to_owned())
            }
            _ => AnyListDecoder::Json(ListDecoder::new(url)),
        }
    }

    /// The same decoder, also keeping each item's bytes for
    /// [`take_items_with_bytes`](Self::take_items_with_bytes).
    pub(crate) fn keeping_bytes(self) -> Self {
        match self {
            AnyListDecoder::Json(decoder) => AnyListDecoder::Json(decoder.keeping_bytes()),
            AnyListDecoder::Protobuf(decoder, url) => {
                AnyListDecoder::Protobuf(decoder.keeping_messages(), url)
            }
        }
    }

    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        match self {
            AnyListDecoder::Json(decoder) => decoder.feed(chunk),
            AnyListDecoder::Protobuf(decoder, url) => decoder
                .feed(chunk)
                .map_err(decode_error(format!("list {url}"))),
        }
    }

    /// Takes the items decoded since the last call, each with its bytes when
    /// [`keeping_bytes`](Self::keeping_bytes).
    pub(crate) fn take_items_with_bytes(
        &mut self,
    ) -> Box<dyn Iterator<Item = (K, Option<WireObject>)> + '_> {
        match self {
            AnyListDecoder::Json(decoder) => Box::new(
                decoder
                    .take_items_with_bytes()
                    .map(|(item, bytes)| (item, bytes.map(WireObject::Json))),
            ),
            AnyListDecoder::Protobuf(decoder, _) => Box::new(
                decoder
                    .take_items_with_messages()
                    .map(|(item, bytes)| (item, bytes.map(WireObject::Protobuf))),
            ),
        }
    }

    /// The body has ended: the list, or the `Status` the server sent instead as [`Error::Api`].
    pub(crate) fn finish(self) -> Result<ObjectList<K>> {
        let (decoder, url) = match self {
            AnyListDecoder::Json(decoder) => return decoder.finish(),
            AnyListDecoder::Protobuf(decoder, url) => (decoder, url),
        };
        let list = decoder
            .finish()
            .map_err(decode_error(format!("list {url}")))?;
        if let Some(status) = list.status::<Status>() {
            let status = status.map_err(decode_error(format!("status of list {url}")))?;
            return Err(Error::Api {
                verb: "GET".into(),
                url,
                status: Box::new(status),
                retry_after: None,
            });
        }
        let metadata: ListMeta = list
            .metadata()
            .map_err(decode_error(format!("list {url}")))?;
        Ok(ObjectList {
            types: TypeMeta {
                api_version: list.api_version,
                kind: list.kind,
            },
            metadata,
            items: list.items,
        })
    }
}

/// Turns a protobuf watch stream into events.
#[derive(Debug)]
pub(crate) struct ProtobufWatch {
    frames: WatchFrames,
    url: String,
}

impl ProtobufWatch {
    pub(crate) fn new(url: &str) -> Self {
        ProtobufWatch {
            frames: WatchFrames::new(),
            url: url.to_owned(),
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.frames.push(chunk);
    }

    /// The next complete event, if any, with its object's message bytes when `keep_bytes` (and
    /// the event carries an object).
    pub(crate) fn next_event<K: DeserializeOwned>(
        &mut self,
        keep_bytes: bool,
    ) -> Option<Result<(WatchEvent<K>, Option<WireObject>)>> {
        let what = || format!("watch {}", self.url);
        let frame = match self.frames.next_frame()? {
            Ok(frame) => frame,
            Err(source) => return Some(Err(decode_error(what())(source))),
        };
        let has_object = matches!(frame.event_type, "ADDED" | "MODIFIED" | "DELETED");
        let bytes = match frame.message() {
            Ok(message) if keep_bytes && has_object => Some(WireObject::Protobuf(message.into())),
            Ok(_) => None,
            Err(source) if keep_bytes && has_object => {
                return Some(Err(decode_error(what())(source)));
            }
            Err(_) => None,
        };
        let event = match frame.event_type {
            "ADDED" => frame.decode().map(WatchEvent::Added),
            "MODIFIED" => frame.decode().map(WatchEvent::Modified),
            "DELETED" => frame.decode().map(WatchEvent::Deleted),
            "BOOKMARK" => frame.decode().map(WatchEvent::Bookmark),
            "ERROR" => frame.decode().map(|s| WatchEvent::Error(Box::new(s))),
            other => Err(kubegen_codec::CodecError::InvalidField {
                path: "type".into(),
                reason: format!("unknown watch event type {other:?}"),
            }),
        };
        Some(
            event
                .map(|event| (event, bytes))
                .map_err(decode_error(what())),
        )
    }

    /// The body ended: an error when it stopped inside a frame.
    pub(crate) fn finish<K>(&mut self) -> Option<Result<(WatchEvent<K>, Option<WireObject>)>> {
        let result = self.frames.finish();
        result
            .err()
            .map(|source| Err(decode_error(format!("watch {}", self.url))(source)))
    }
}

#[cfg(test)]
#[path = "protobuf_tests.rs"]
mod tests;
