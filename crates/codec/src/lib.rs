//! Kubernetes wire formats beyond plain JSON, in one place for the client and the test server.
//!
//! Today: the protobuf form of built-in kinds (`application/vnd.kubernetes.protobuf`), as client-go
//! and kubectl send it. A body is the magic `k8s\0`, then a `runtime.Unknown` envelope ([`Envelope`])
//! naming `apiVersion` and `kind` and carrying the object's message bytes; [`KindSchema`] turns those
//! bytes into the JSON a real API server would write for the same object, and back.
//!
//! Mirrors apimachinery `runtime/serializer/protobuf` (the envelope) and the gogo-generated
//! `Marshal`/`Unmarshal` plus Go's `encoding/json` of `k8s.io/api` types (the messages).
//!
//! Also: protobuf lists and watch frames ([`ListEncoder`], [`encode_watch_frame`]) and OpenAPI
//! documents as gnostic messages ([`openapi_to_protobuf`]), which the test server answers with.
//!
//! # Where the schema comes from
//! The upstream `generated.proto` files of k8s.io/api (every GA group version), apimachinery and
//! apiextensions-apiserver, vendored unchanged under `proto/`; messages are read and written with
//! prost-reflect's dynamic messages (and decoded into serde types by plans built from the same
//! descriptors). The few facts about JSON that the `.proto` files lack (Go JSON names that differ,
//! which zero values Go's JSON keeps) are derived from the upstream Go struct tags into
//! `proto/go-fields.txt`. Nothing is written per kind.
//!
//! Why not the `k8s-pb` crate: its prost-generated structs carry no descriptors and no JSON mapping,
//! so turning them into JSON (or k8s-openapi types) would take code per kind; a descriptor-driven
//! codec handles every kind, and a new Kubernetes release is a data update (`proto/update.sh`).
//!
//! # How the descriptors get into the crate
//! kubegen is used as a git dependency, so whatever this crate's build does, every user's build
//! does. The `.proto` files are therefore compiled once, by the tool `hack/proto-descriptors`
//! (protox, a protobuf compiler in Rust), into `descriptors/kubernetes.fds`, an encoded
//! `FileDescriptorSet` that is committed and embedded with `include_bytes!` (`src/schema.rs`).
//! Building the codec compiles no `.proto` file and needs neither protox nor `protoc`.
//! `scripts/update-codegen.sh` regenerates the file (deterministically: sorted file list, no
//! source info) and `hack/verify-codegen.sh` fails when it differs from what `proto/` compiles to.
//!
//! # Lists and watch streams
//! [`KindSchema`] works on one object's message bytes. A `XxxList` message is `metadata` plus
//! repeated `items`, each item an ordinary length-delimited field, and a protobuf watch stream is
//! length-prefixed `WatchEvent` frames whose `object` is an embedded envelope; [`ListDecoder`] and
//! [`WatchFrames`] hand each item or frame to the same per-object decoding.
//!
//! # Differences from client-go
//! - A zero scalar is written to JSON only where Go's JSON encoder writes it (per `go-fields.txt`),
//!   so the JSON matches what a real server answers; a `Quantity` keeps the text it was sent in,
//!   where Go would canonicalise it (`1000m` → `1`).
//! - Compressed envelopes (`contentEncoding`) are rejected: no Kubernetes release writes them.
//!
//! # Not covered yet
//! - Objects embedded in `RawExtension`s more than 4 envelopes deep are refused (real objects
//!   embed one level).
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `stream`, `stream_encode`, `openapi`
//! - `typed`
//! - `de`
//! - `de_special`
//! - `borrowed_envelope`, `envelope`
//! - `schema`
//! - `from_json`, `to_json`
//! - `wire`, `plan`
//! - `descriptors`, `error`, `go_duration`, `go_fields`, `special`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod borrowed_envelope;
mod de;
mod de_special;
mod descriptors;
mod envelope;
mod error;
mod from_json;
mod go_duration;
mod go_fields;
mod openapi;
mod plan;
mod schema;
mod special;
mod stream;
mod stream_encode;
mod to_json;
mod typed;
mod wire;

pub use envelope::{Envelope, MAGIC, PROTOBUF_MEDIA_TYPE, decode_object, encode_object};
pub use error::{CodecError, Result};
pub use openapi::{
    OPENAPI_V2_CONTENT_TYPE, OPENAPI_V2_MEDIA_TYPE, OPENAPI_V3_CONTENT_TYPE, OPENAPI_V3_MEDIA_TYPE,
    OpenApiVersion, openapi_to_protobuf,
};
pub use schema::KindSchema;
pub use stream::{DecodedList, ListDecoder, WatchFrame, WatchFrames};
pub use stream_encode::{
    ListEncoder, PROTOBUF_WATCH_MEDIA_TYPE, encode_watch_frame, watch_frame_of,
};
pub use typed::{ProtoKind, from_body};
