//! [`InformerMetrics`]: what an informer does, in the process's one `prometheus_client` registry.
//!
//! client-go had reflector metrics (`reflector_lists_total`, ...) and removed them; its
//! per-handler buffers were never visible. Both questions come up when an informer misbehaves:
//! is it listing again and again (410s, errors), is its watch alive, and is one of its handlers
//! falling behind (its unbounded buffer growing without bound)?
//!
//! | series (label `informer`, plus `handler` for the backlog) | meaning |
//! |---|---|
//! | `informer_lists_total` | lists started, paged or streaming (a paged list counts once) |
//! | `informer_relists_total` | lists started after the store was first filled |
//! | `informer_watches_total` | watches opened (requests sent), a streaming list's included |
//! | `informer_last_sync_timestamp_seconds` | Unix time the reflector last applied a list, an event or a bookmark |
//! | `informer_handler_backlog` | notifications buffered for one handler and not yet handled |
//!
//! # How they are kept
//! All are counters and gauges (atomics) changed where the state changes: no lock on the event
//! path and nothing to compute at scrape time. A handler's backlog series is removed when the
//! handler is removed or the informer shuts down. The handler label is the registration's number
//! within its informer, in registration order.
//!
//! Informer names must be unique among the informers sharing one `InformerMetrics` (a factory
//! names each after its resource's plural): two informers with one name feed the same series.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

use crate::list_watch::ListWatchError;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InformerLabel {
    informer: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    informer: String,
    /// `list` or `watch`.
    step: &'static str,
    /// The server's `Status` reason (`Forbidden`, `Expired`, ...), or ours when there was no
    /// `Status` (`Interrupted`, `Transport`, ...).
    reason: String,
    /// The server's `Status` code, `""` without one.
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PanicLabels {
    informer: String,
    /// Which user code panicked: `transform`, `index` or `handler`.
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HandlerLabels {
    informer: String,
    handler: String,
}

/// The `informer_*` series of every informer built with it (see the module docs). Cheap to
/// clone: clones share the series. Give the same one to every informer of a process (through
/// [`InformerOptions::metrics`](crate::InformerOptions::metrics) or the factory's options) and
/// [`register`](Self::register) it once.
#[derive(Clone, Debug, Default)]
pub struct InformerMetrics {
    lists: Family<InformerLabel, Counter>,
    relists: Family<InformerLabel, Counter>,
    watches: Family<InformerLabel, Counter>,
    last_sync: Family<InformerLabel, Gauge<f64, AtomicU64>>,
    backlog: Family<HandlerLabels, Gauge>,
    panics: Family<PanicLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
}

impl InformerMetrics {
    /// Registers the seven `informer_*` families in `registry`. Call it once per process.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "informer_lists",
            "Lists started by an informer's reflector, paged or streaming",
            self.lists.clone(),
        );
        registry.register(
            "informer_relists",
            "Lists started after the informer's store was first filled (410 Gone, errors)",
            self.relists.clone(),
        );
        registry.register(
            "informer_watches",
            "Watches opened by an informer's reflector",
            self.watches.clone(),
        );
        registry.register(
            "informer_last_sync_timestamp_seconds",
            "Unix time the informer's reflector last applied a list, a watch event or a bookmark",
            self.last_sync.clone(),
        );
        registry.register(
            "informer_handler_backlog",
            "Notifications buffered for an event handler and not yet handled",
            self.backlog.clone(),
        );
        registry.register(
            "informer_user_code_panics",
            "Panics caught in a transform, index function or event handler (the object or notification was skipped)",
            self.panics.clone(),
        );
        registry.register(
            "informer_list_watch_errors",
            "Failed lists and watches of an informer's reflector, by the server's Status reason and code",
            self.errors.clone(),
        );
    }

    /// The panic counter of `code` (`transform`, `index` or `handler`) of `informer`.
    pub(crate) fn panics(&self, informer: &str, code: &'static str) -> Counter {
        self.panics.get_or_create_owned(&PanicLabels {
            informer: informer.to_owned(),
            code,
        })
    }

    /// The reflector-side series of the informer called `informer`, looked up once.
    pub(crate) fn reflector(&self, informer: &str) -> ReflectorMetrics {
        let label = InformerLabel {
            informer: informer.to_owned(),
        };
        ReflectorMetrics {
            informer: informer.to_owned(),
            errors: self.errors.clone(),
            lists: self.lists.get_or_create_owned(&label),
            relists: self.relists.get_or_create_owned(&label),
            watches: self.watches.get_or_create_owned(&label),
            last_sync: self.last_sync.get_or_create_owned(&label),
        }
    }

    /// The backlog gauge of handler number `handler` of `informer`.
    pub(crate) fn handler_backlog(&self, informer: &str, handler: u64) -> Gauge {
        self.backlog
            .get_or_create_owned(&handler_labels(informer, handler))
    }

    /// Drops the backlog series of a handler that is gone.
    pub(crate) fn remove_handler(&self, informer: &str, handler: u64) {
        self.backlog.remove(&handler_labels(informer, handler));
    }
}

fn handler_labels(informer: &str, handler: u64) -> HandlerLabels {
    HandlerLabels {
        informer: informer.to_owned(),
        handler: handler.to_string(),
    }
}

/// One informer's reflector series.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReflectorMetrics {
    informer: String,
    errors: Family<ErrorLabels, Counter>,
    lists: Counter,
    relists: Counter,
    watches: Counter,
    last_sync: Gauge<f64, AtomicU64>,
}

impl ReflectorMetrics {
    /// A list starts; `relist` when the store was filled before.
    pub(crate) fn list_started(&self, relist: bool) {
        self.lists.inc();
        if relist {
            self.relists.inc();
        }
    }

    /// A watch request is sent.
    pub(crate) fn watch_started(&self) {
        self.watches.inc();
    }

    /// A list or watch failed with `err` (`step` is `list` or `watch`).
    pub(crate) fn failed(&self, step: &'static str, err: &ListWatchError) {
        let (reason, code) = match err.status() {
            Some(status) if !status.reason.is_empty() => {
                (status.reason.clone(), status.code.to_string())
            }
            Some(status) => (format!("{:?}", err.kind()), status.code.to_string()),
            None => (format!("{:?}", err.kind()), String::new()),
        };
        self.errors
            .get_or_create(&ErrorLabels {
                informer: self.informer.clone(),
                step,
                reason,
                code,
            })
            .inc();
    }

    /// A list, an event or a bookmark was applied: the store is in step with the server now.
    pub(crate) fn synced(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        self.last_sync.set(now.as_secs_f64());
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
