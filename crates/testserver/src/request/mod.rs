//! The request side of the pipeline, before any handler runs (steps 1–5 of the map in `lib.rs`):
//! who asks (`authn`), what they ask in the authorizer's terms (`requestinfo`, with the `verb`
//! derived once), which endpoint the path names (`route`), the negotiated formats
//! (`negotiation`), and the immutable `scope` handed to handlers; plus the request's options as
//! handlers read them (`query` with its `selectors` and `shard_selector`, `delete_options`).

pub(crate) mod authn;
pub(crate) mod delete_options;
pub(crate) mod negotiation;
pub(crate) mod query;
pub(crate) mod requestinfo;
pub(crate) mod route;
pub(crate) mod scope;
pub(crate) mod selectors;
pub(crate) mod shard_selector;
pub(crate) mod verb;
