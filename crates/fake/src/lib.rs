//! The machinery behind kubegen's fake clientsets: a [`kubegen_client::Client`] for unit tests that
//! records every request as an [`Action`], lets [`reactors`](FakeClient::prepend_reactor) answer
//! first, and serves everything else with kubegen-testserver's in-process API server. The Rust
//! counterpart of client-go `k8s.io/client-go/testing` (`Fake`, `ObjectTracker`, `Action`,
//! `Reactor`), written once by hand; the generated `kubegen_clientset::fake` wraps it.
//!
//! Place in kubegen: clientset/fake (generated) -> **fake** -> client (the `Transport` seam) and
//! testserver (`ApiServer::handle`).
//!
//! # Differences from client-go
//! - The tracker is a real API server: optimistic concurrency, status subresource, generation,
//!   selectors and **watch replay from a resourceVersion**, so an informer that lists and then
//!   watches never misses an event created in between (client-go's fake loses them).
//! - Actions are one struct decoded from the HTTP request, not an interface per verb.
//! - No watch reactors: watches are served by the server (reactors may still fail them).
//!
//! | client-go (`testing`)          | kubegen                          | file            |
//! |--------------------------------|----------------------------------|-----------------|
//! | `Fake`, `NewSimpleClientset`   | [`FakeClient`], [`FakeClient::seed`] | `fake_client.rs`, `seed.rs` |
//! | `Action`, `GetVerb()`, ...     | [`Action`], [`Verb`] (the test server's) | `action.rs` |
//! | `PrependReactor`, `ReactionFunc` | [`FakeClient::prepend_reactor`], [`Reaction`] | `reactor.rs` |
//! | `ObjectTracker.Add`            | [`FakeClient::seed`]             | `seed.rs`       |
//! | `Actions()`, `ClearActions()`  | [`FakeClient::actions`], [`FakeClient::clear_actions`] | `fake_client.rs` |
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `seed`
//! - `fake_client`
//! - `reactor`
//! - `action`, `error`

mod action;
mod error;
mod fake_client;
mod reactor;
mod seed;

pub use action::Action;
pub use error::{Error, Result};
pub use fake_client::FakeClient;
pub use kubegen_testserver::Verb;
pub use reactor::{Reaction, conflict, internal_error, not_found};
pub use seed::StatusSubresource;
