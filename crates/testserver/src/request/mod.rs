//! The request side of the pipeline, before any handler runs: who asks (`authn`), what they ask
//! in the authorizer's terms (`requestinfo`), which endpoint the path names (`route`), the verb
//! (`verb`), the query (`query`, `selectors`), the negotiated formats (`negotiation`), and the
//! scope handed to handlers (`scope`).

pub(crate) mod authn;
pub(crate) mod delete_options;
pub(crate) mod negotiation;
pub(crate) mod query;
pub(crate) mod requestinfo;
pub(crate) mod route;
pub(crate) mod scope;
pub(crate) mod selectors;
pub(crate) mod verb;
