//! The request side of the pipeline, before any handler runs (steps 2–5 of the map in `lib.rs`;
//! step 1, `crate::authn`, reads the server's tokens and sits above): what the user asks in the
//! authorizer's terms (`requestinfo`, with the `crate::verb` derived once), which endpoint the
//! path names (`route`), the negotiated formats (`negotiation`), and the immutable `scope` handed
//! to handlers; plus the request's options as handlers read them (`query` with its `selectors`
//! and `shard_selector`, `delete_options`). The kinds' strategies sit above (the pipeline
//! asks them which subresources a kind adds), the storage below (`crate::storage::State::existing`
//! finds the object a target names).

pub(crate) mod delete_options;
pub(crate) mod negotiation;
pub(crate) mod query;
pub(crate) mod requestinfo;
pub(crate) mod route;
pub(crate) mod scope;
pub(crate) mod selectors;
pub(crate) mod shard_selector;
