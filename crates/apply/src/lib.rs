//! kubegen-apply: server-side apply without a server. `metadata.managedFields` kept by every
//! write, the merge of an apply configuration into the live object by the kind's schema, conflicts
//! worded as v1.36's, and the extraction of the fields one manager applied. Mirrors
//! structured-merge-diff v4 (`typed`, `merge`) and apiserver's `fieldmanager` (`internal/`
//! `managedfields.go`, `conflict.go`, `structuredmerge.go`), and kube-openapi's `schemaconv` for
//! reading schemas.
//!
//! # Why a crate of its own
//! It is a library, not a part of the request path: given a schema, a live object and a
//! configuration, it computes the object to store and its managedFields, with no I/O, no clock
//! (the caller passes `now`) and no server types. So it is tested here with a few lines of
//! OpenAPI written by hand, and its users depend on it, not on each other:
//!
//! ```text
//! kubegen-testserver (every write; the fake clientset serves through it) ─┐
//!                                                                          ├─> kubegen-apply ─> kubegen-fieldpath
//! kubegen-client     (extract: what a field manager applied)            ─┘
//! ```
//! A server adds what is its own: reading `fieldManager`, `force` and the `User-Agent` from the
//! request ([`Writer`]), decoding and checking the body against the URL ([`Config`]), finding the
//! kind's OpenAPI schema ([`Schema`]), converting between API versions, and answering each
//! [`Error`] with its `Status`.
//!
//! | structured-merge-diff / apiserver                   | here                               | file          |
//! |-----------------------------------------------------|------------------------------------|---------------|
//! | `fieldmanager.FieldManager` (`Update`)              | [`Tracker`], [`Endpoint`]          | `tracker.rs`  |
//! | `merge.Updater.Apply` (merge, `prune`, conflicts)   | [`Tracker::apply`], [`Merged`]     | `applier.rs`  |
//! | `Updater.prune` across versions (`ToFieldSet`, `RemoveItems`, `EnsureNamedFieldsAreMembers`) | [`Tracker::field_set`], [`Tracker::without`], [`Tracker::with_named_fields`] | `versions.rs` |
//! | `typed.TypedValue` walks, `typed.Comparison`        | [`Comparison`]                     | `merge.rs`    |
//! | kube-openapi `schemaconv`                           | [`Schema`], [`resolve`]            | `schema.rs`   |
//! | `managedFields` entries, `BuildManagerIdentifier`   | [`Entry`], [`managed_fields`]      | `managed.rs`  |
//! | `NewConflictError`                                  | [`Error::Conflicts`], [`Conflict`] | `error.rs`    |
//! | `PatchOptions.FieldManager`, `Force`, `prefixFromUserAgent` | [`Writer`]                 | `writer.rs`   |
//! | `managedfields.ExtractInto`                         | [`extract`]                        | `extract.rs`  |
//!
//! # Example
//! ```
//! use kubegen_apply::{Config, Endpoint, Schema, Tracker, Writer};
//! use serde_json::json;
//!
//! let components = json!({"ConfigMap": {"type": "object", "properties": {
//!     "data": {"type": "object", "additionalProperties": {"type": "string"}}}}});
//! let components = components.as_object().expect("an object");
//! let schema = Schema::openapi(components, components.get("ConfigMap"));
//! let writer = Writer { field_manager: Some("me".into()), ..Writer::default() };
//! let endpoint = Endpoint { api_version: "v1".into(), ..Endpoint::default() };
//! let tracker = Tracker::new(schema, endpoint, &writer, "2026-01-01T00:00:00Z");
//! let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
//!                     "data": {"a": "1"}});
//! let stored = tracker
//!     .apply(None, &Config::new(config, "/x; /v1, Kind=ConfigMap".into()), "me")
//!     .expect("applies");
//! assert_eq!(stored["metadata"]["managedFields"][0]["fieldsV1"], json!({"f:data": {"f:a": {}}}));
//! ```
//!
//! # Differences from the real server
//! - No `ancient-changes` compaction of more than ten `Update` managers.
//! - A configuration the schema cannot type (an associative element without its key, duplicate
//!   keys, an object in a set) is refused naming the path, where the real server's message
//!   differs.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `applier`, `versions`, `extract`
//! - `tracker`
//! - `merge`, `managed`, `writer`, `config`
//! - `schema`, `error`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod applier;
mod config;
mod error;
mod extract;
mod managed;
mod merge;
mod schema;
mod tracker;
mod versions;
mod writer;

pub use applier::Merged;
pub use config::Config;
pub use error::{Conflict, Error};
pub use extract::extract;
pub use managed::{Entry, managed_fields};
pub use merge::Comparison;
pub use schema::{Schema, resolve};
pub use tracker::{Elsewhere, Endpoint, Tracker};
pub use writer::Writer;
