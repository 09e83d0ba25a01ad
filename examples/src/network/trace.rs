//! The trace of each object's trip through an informer: reflector → DeltaFIFO → indexer →
//! handler, built from the cache crate's own `tracing` events (the same ones
//! `RUST_LOG=kubegen_cache=trace` prints), not from prints of our own.
//!
//! The cache crate emits, per object:
//! - `kubegen_cache::reflector` debug `"watch event"` (`key`, `event`, `rv`), and `"replace"`
//!   after a LIST;
//! - `kubegen_cache::delta_fifo` trace `"delta queued"` (`key`, `delta`);
//! - `kubegen_cache::informer` trace `"index update"` (`key`, `delta`), when the process loop pops
//!   the key and applies the delta to the indexer, just before it notifies the handlers.
//!
//! [`PipelineTrace::layer`] turns those into [`Step`]s; the example's handler adds the last step.
//! See docs/informer-internals.md for what each step does.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// How many steps a trace keeps (the newest): enough for a test or a tour, bounded for a
/// long-running process.
const KEPT_STEPS: usize = 4096;

/// A piece of the informer pipeline (docs/informer-internals.md, steps 2 to 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// LIST/WATCH against the API server (`reflector.rs`).
    Reflector,
    /// The queue of changes per key (`delta_fifo.rs`).
    DeltaFifo,
    /// The process loop popped the key and updated the cache (`informer.rs`, `indexer.rs`).
    Indexer,
    /// The event handler was called (`processor.rs`, then our handler).
    Handler,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Stage::Reflector => "reflector",
            Stage::DeltaFifo => "DeltaFIFO",
            Stage::Indexer => "indexer",
            Stage::Handler => "handler",
        };
        f.pad(name)
    }
}

/// One step of one object's trip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Where it happened.
    pub stage: Stage,
    /// The object's key (`namespace/name`); `None` for steps about a whole list.
    pub key: Option<String>,
    /// What happened, e.g. `WATCH Added rv 812` or `on_update`.
    pub what: String,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.key.as_deref().unwrap_or("*");
        write!(f, "[{:<9}] {key:<28} {}", self.stage, self.what)
    }
}

/// Whether a trace prints its steps as they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOutput {
    /// Print each step to stdout (the example binary).
    Print,
    /// Only keep them (tests).
    Quiet,
}

/// The newest steps of every object, shared by the tracing layer and the handler.
#[derive(Clone)]
pub struct PipelineTrace {
    output: TraceOutput,
    /// Invariant: at most [`KEPT_STEPS`] entries, oldest first.
    steps: Arc<Mutex<VecDeque<Step>>>,
    recorded: Arc<Notify>,
    /// The informer whose events are recorded ([`PipelineTrace::follow`]); others in the same
    /// process (the embedded server's controller-manager runs informers too) are left out.
    followed: Arc<Mutex<Option<String>>>,
}

impl PipelineTrace {
    /// An empty trace.
    pub fn new(output: TraceOutput) -> PipelineTrace {
        PipelineTrace {
            output,
            steps: Arc::default(),
            recorded: Arc::default(),
            followed: Arc::default(),
        }
    }

    /// Records only the events of the informer named `informer` (`SharedIndexInformer::name`).
    pub fn follow(&self, informer: &str) {
        *self.followed.lock() = Some(informer.to_owned());
    }

    /// Whether an event of the informer named `informer` belongs in the trace.
    fn follows(&self, informer: &str) -> bool {
        self.followed
            .lock()
            .as_deref()
            .is_none_or(|followed| followed == informer)
    }

    /// Records (and, with [`TraceOutput::Print`], prints) `step`.
    pub fn record(&self, step: Step) {
        if self.output == TraceOutput::Print {
            println!("{step}");
        }
        let mut steps = self.steps.lock();
        if steps.len() == KEPT_STEPS {
            steps.pop_front();
        }
        steps.push_back(step);
        drop(steps);
        self.recorded.notify_waiters();
    }

    /// The kept steps of `key`, oldest first.
    pub fn steps_of(&self, key: &str) -> Vec<Step> {
        let steps = self.steps.lock();
        steps
            .iter()
            .filter(|s| s.key.as_deref() == Some(key))
            .cloned()
            .collect()
    }

    /// Waits until `key` has at least `count` [`Stage::Handler`] steps.
    ///
    /// # Errors
    /// A message naming the key when `timeout` passes first.
    pub async fn wait_handler_calls(
        &self,
        key: &str,
        count: usize,
        timeout: Duration,
    ) -> Result<(), String> {
        let calls = || {
            let steps = self.steps_of(key);
            steps.iter().filter(|s| s.stage == Stage::Handler).count()
        };
        let wait = async {
            loop {
                let recorded = self.recorded.notified();
                if calls() >= count {
                    return;
                }
                recorded.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.map_err(|_| {
            format!(
                "{key}: {} handler calls after {timeout:?}, wanted {count}",
                calls()
            )
        })
    }

    /// A `tracing` layer that records the cache crate's pipeline events into this trace. It
    /// enables `kubegen_cache` events down to TRACE for itself only, whatever the other layers
    /// of the subscriber print.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let filter = Targets::new().with_target("kubegen_cache", Level::TRACE);
        CacheEvents(self.clone()).with_filter(filter)
    }
}

/// The layer behind [`PipelineTrace::layer`].
struct CacheEvents(PipelineTrace);

impl<S: Subscriber> Layer<S> for CacheEvents {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        // The reflector names its informer `reflector`, the DeltaFIFO and the process loop
        // `informer`.
        let informer = match fields.get("reflector") {
            "" => fields.get("informer"),
            name => name,
        };
        if !self.0.follows(informer) {
            return;
        }
        if let Some(step) = fields.step() {
            self.0.record(step);
        }
    }
}

/// The fields of one event, as text.
#[derive(Default)]
struct Fields(BTreeMap<&'static str, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }
}

impl Fields {
    fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    /// The step an event of the cache crate stands for; `None` for the events that are not
    /// part of an object's trip (reflector state changes, bookmarks, ...).
    fn step(&self) -> Option<Step> {
        let key = || Some(self.get("key").to_owned());
        let (stage, key, what) = match self.get("message") {
            "listing" => (
                Stage::Reflector,
                None,
                format!("LIST at rv {:?}", self.get("rv")),
            ),
            "replace" => (
                Stage::Reflector,
                None,
                format!(
                    "LIST done: Replace({} objects) at rv {}",
                    self.get("items"),
                    self.get("rv")
                ),
            ),
            "watch opened" => (
                Stage::Reflector,
                None,
                format!("WATCH from rv {}", self.get("rv")),
            ),
            "watch event" => (
                Stage::Reflector,
                key(),
                format!("WATCH {} rv {}", self.get("event"), self.get("rv")),
            ),
            "delta queued" => (
                Stage::DeltaFifo,
                key(),
                format!("queued {}", self.get("delta")),
            ),
            "index update" => (
                Stage::Indexer,
                key(),
                format!("popped, cache applies {}", self.get("delta")),
            ),
            _ => return None,
        };
        Some(Step { stage, key, what })
    }
}
