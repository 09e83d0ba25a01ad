//! `kubegen-cache`: the informer machinery, kubegen's counterpart of client-go `tools/cache`.
//!
//! An *informer* gives a controller a local, always-up-to-date copy of one resource type and
//! tells it about every change, while costing the API server one LIST and one long WATCH.
//!
//! ```text
//! API server ──LIST (pages of 500) / WATCH──> Reflector          (reflector.rs)
//!            ──Replace / Add / Update / Delete──> DeltaFifo      (delta_fifo.rs)
//!            ──pop──> SharedIndexInformer: 1. Indexer (cache)    (informer.rs, indexer.rs)
//!                                          2. notify handlers    (processor.rs, handler.rs)
//! controller: handler enqueues "ns/name" → worker reads Lister  (lister.rs)
//! ```
//!
//! Read `docs/informer-internals.md` for one object's trip through these pieces, and
//! `examples/informer_trace.rs` to watch it happen.
//!
//! | client-go (`tools/cache`)              | kubegen-cache                         |
//! |----------------------------------------|---------------------------------------|
//! | `ListerWatcher`                        | [`ListWatch`], [`EventStream`]        |
//! | `Reflector`                            | `Reflector`, `State`: `pub(crate)`, see below |
//! | `DeltaFIFO`, `Delta`, `Deltas`         | [`DeltaFifo`], [`Delta`], [`Deltas`]  |
//! | `DeletedFinalStateUnknown`             | [`DeletedObject::Tombstone`]          |
//! | `Indexer`, `ThreadSafeStore`           | [`Indexer`]                           |
//! | `SharedIndexInformer`                  | [`SharedIndexInformer`]               |
//! | `ResourceEventHandler(Funcs)`          | [`EventHandler`], [`HandlerFns`]      |
//! | `FilteringResourceEventHandler`        | [`FilteringHandler`]                  |
//! | `GenericLister`                        | [`Lister`], [`NamespaceLister`]       |
//! | `metadatainformer`, `metadatalister`   | [`InformerFactory::metadata_informer_for`], [`MetadataLister`], [`MetadataListWatchSource`] |
//! | `WaitForCacheSync`                     | [`wait_for_cache_sync`]               |
//! | reflector metrics (removed upstream)   | [`InformerMetrics`]                   |
//! | `informers.SharedInformerFactory`      | [`InformerFactory`] over a [`ListWatchSource`] |
//! | `dynamicinformer`, `dynamiclister`     | [`InformerFactory::dynamic_informer_for`], `DynamicLister` (feature `client`, `dynamic.rs`) |
//! | `NewFilteredListWatchFromClient`       | `ClientListWatch`, `ClientListWatchSource` (feature `client`, `client_adapter.rs`: the only module that knows kubegen-client) |
//! | (none: a panic crashes the process)    | [`InformerStats`]                     |
//! | (none: objects are always decoded)     | [`StoreMode`], [`WireCodec`], [`WireBytes`], [`WireItem`] |
//!
//! # The reflector is internal
//! `Reflector` and its `State` enum (`reflector.rs`, `reflector/state.rs`) are `pub(crate)`: this
//! crate does not export them, and there is no way to build or step one from outside. Every
//! [`SharedIndexInformer`] builds its own reflector in [`SharedIndexInformer::new`] and spawns it
//! from [`SharedIndexInformer::start`] (or [`run`](SharedIndexInformer::run)). You configure it
//! through [`InformerOptions`] (`page_size`, `streaming_list`, `streaming_timeout`, `transform`,
//! `watch_error_handler`, `metrics`, `store_mode`) and observe it through the [`WatchErrorHandler`] (every
//! failed list or watch as a [`ListWatchError`]), [`InformerMetrics`],
//! [`SharedIndexInformer::stats`] and its `tracing` debug events (target
//! `kubegen_cache::reflector`, one per state transition). To see how it works, read the source
//! (`reflector/state.rs` draws the state machine) and `docs/informer-internals.md`, step 2.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `dynamic`, `metadata`, `client_adapter`
//! - `factory`, `sync`
//! - `informer`
//! - `reflector`, `processor`
//! - `delta_fifo`, `lister`, `handler`
//! - `indexer`, `stored`, `delta`, `health`, `metrics`
//! - `encoded`, `error`, `key`, `list_watch`, `store_mode`, `tasks`, `transform`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

#[cfg(feature = "client")]
mod client_adapter;
mod delta;
mod delta_fifo;
#[cfg(feature = "client")]
mod dynamic;
mod encoded;
mod error;
mod factory;
mod handler;
mod health;
mod indexer;
mod informer;
mod key;
mod list_watch;
mod lister;
mod metadata;
mod metrics;
mod processor;
mod reflector;
#[cfg(test)]
mod scripted;
mod store_mode;
mod stored;
mod sync;
mod tasks;
#[cfg(test)]
mod test_util;
mod transform;

#[cfg(feature = "client")]
pub use client_adapter::{ClientListWatch, ClientListWatchSource, ClientWatch, classify};
pub use delta::{DeletedObject, Delta, Deltas};
pub use delta_fifo::DeltaFifo;
#[cfg(feature = "client")]
pub use dynamic::DynamicLister;
pub use error::Error;
pub use factory::{
    FactoryOptions, InformerFactory, ListSelectors, ListWatchSource, MetaTransform,
    SHUTDOWN_TIMEOUT, TweakListOptions,
};
pub use handler::{EventHandler, FilteringHandler, HandlerFns, UpdateFilter, generation_changed};
pub use health::InformerStats;
pub use indexer::{IndexFn, Indexer, Indexers, NAMESPACE_INDEX};
pub use informer::{HandlerRegistration, InformerOptions, SharedIndexInformer};
pub use key::ObjectKey;
pub use list_watch::{
    EventStream, EventWithBytes, ListRequest, ListWatch, ListWatchError, ListWatchErrorKind,
    WatchRequest,
};
pub use lister::{Lister, NamespaceLister};
pub use metadata::{MetadataListWatchSource, MetadataLister};
pub use metrics::InformerMetrics;
pub use reflector::{WATCH_DEADLINE_MARGIN, WatchErrorHandler};
pub use store_mode::{
    CodecError, DEFAULT_DECODED_CACHE, StoreMode, WireBytes, WireCodec, WireItem,
};
pub use sync::{Synced, wait_for_cache_sync};
pub use transform::{Transform, strip_managed_fields};
