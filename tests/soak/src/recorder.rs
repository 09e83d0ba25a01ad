//! The soak's event handler: replays every notification into its own model of the world, checks
//! that the sequence per key makes sense, and feeds the workqueue like a controller's handler.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_cache::{DeletedObject, EventHandler, ObjectKey};
use kubegen_workqueue::Queue;
use parking_lot::Mutex;

/// What the handlers were told, per key.
///
/// # Invariants
/// - A key is in `view` exactly when its last notification was an add or an update.
/// - Per key, notifications alternate: add, updates, delete, add, ... Anything else (an update or
///   delete of a key the handler does not know, an add of a key it already has) is counted in
///   `anomalies`, which the soak asserts to be zero.
pub struct Recorder {
    /// key -> resourceVersion of the last object the handler was given.
    view: Mutex<HashMap<String, String>>,
    /// Where each notification's key goes, as in a controller.
    queue: Queue<String>,
    /// Sequence violations, with a description of the first few.
    anomalies: Mutex<Vec<String>>,
    /// Counters of notifications.
    pub adds: AtomicU64,
    /// Updates, resyncs included.
    pub updates: AtomicU64,
    /// Deletes with the real final object.
    pub deletes: AtomicU64,
    /// Deletes inferred from a relist (`DeletedFinalStateUnknown`).
    pub tombstones: AtomicU64,
}

impl Recorder {
    /// A recorder that enqueues every notified key into `queue`.
    pub fn new(queue: Queue<String>) -> Arc<Recorder> {
        Arc::new(Recorder {
            view: Mutex::new(HashMap::new()),
            queue,
            anomalies: Mutex::new(Vec::new()),
            adds: AtomicU64::new(0),
            updates: AtomicU64::new(0),
            deletes: AtomicU64::new(0),
            tombstones: AtomicU64::new(0),
        })
    }

    /// The handlers' view: key -> resourceVersion.
    pub fn view(&self) -> HashMap<String, String> {
        self.view.lock().clone()
    }

    /// Sequence violations seen so far.
    pub fn anomalies(&self) -> Vec<String> {
        self.anomalies.lock().clone()
    }

    fn anomaly(&self, message: String) {
        let mut anomalies = self.anomalies.lock();
        if anomalies.len() < 20 {
            anomalies.push(message);
        }
    }

    fn present(&self, obj: &ConfigMap, expect_known: bool, what: &str) {
        let key = ObjectKey::of(obj).as_str().to_owned();
        let rv = obj.metadata.resource_version.clone().unwrap_or_default();
        let previous = self.view.lock().insert(key.clone(), rv.clone());
        if previous.is_some() != expect_known {
            self.anomaly(format!(
                "{what} of {key} at rv {rv}, previously {previous:?}"
            ));
        }
        self.queue.add(key);
    }
}

/// The handler registered on the informer (a thin `Arc` wrapper).
pub struct RecordingHandler(pub Arc<Recorder>);

impl EventHandler<ConfigMap> for RecordingHandler {
    fn on_add(&self, obj: &Arc<ConfigMap>, _is_in_initial_list: bool) {
        self.0.adds.fetch_add(1, Ordering::Relaxed);
        self.0.present(obj, false, "add");
    }

    fn on_update(&self, _old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.0.updates.fetch_add(1, Ordering::Relaxed);
        self.0.present(new, true, "update");
    }

    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        let recorder = &self.0;
        let key = match obj {
            DeletedObject::Known(known) => {
                recorder.deletes.fetch_add(1, Ordering::Relaxed);
                ObjectKey::of(known.as_ref()).as_str().to_owned()
            }
            DeletedObject::Tombstone { key, .. } => {
                recorder.tombstones.fetch_add(1, Ordering::Relaxed);
                key.as_str().to_owned()
            }
        };
        if recorder.view.lock().remove(&key).is_none() {
            recorder.anomaly(format!("delete of unknown key {key}"));
        }
        recorder.queue.add(key);
    }
}
