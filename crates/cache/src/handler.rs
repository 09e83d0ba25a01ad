//! What a consumer plugs into an informer: event handlers, and ready-made wrappers around them.
//!
//! Mirrors client-go `tools/cache/controller.go` (`ResourceEventHandler`,
//! `ResourceEventHandlerFuncs`, `FilteringResourceEventHandler`) plus the `GenerationChanged`
//! predicate of controller-runtime.
//!
//! # Keep handlers short
//! Handlers run on their own task, one notification at a time, so a slow handler only delays
//! itself. Still, the intended pattern is: compute the key, push it onto a work queue, return.
//! The real work happens in the controller's workers, which read the `Lister`.

use std::sync::Arc;

use kube_core::Resource;

use crate::delta::DeletedObject;

/// Receives the notifications of one informer registration.
///
/// Every method has an empty default, so implement only what you need.
///
/// # Guarantees
/// - Notifications for one registration arrive in the order the informer processed them.
/// - A handler that panics is logged and keeps receiving later notifications; other handlers
///   are not affected.
pub trait EventHandler<K>: Send + Sync + 'static {
    /// The object appeared. `is_in_initial_list` is true for objects of the first full list
    /// (and for the replay of the cache a late-registered handler gets).
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }

    /// The object changed from `old` to `new`.
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }

    /// A periodic resync (or a relist that found the same resourceVersion) replayed the cached
    /// object: nothing changed on the server. Defaults to [`on_update`](Self::on_update), as in
    /// client-go; override it to tell the two apart.
    fn on_resync(&self, old: &Arc<K>, new: &Arc<K>) {
        self.on_update(old, new);
    }

    /// The object is gone. A [`DeletedObject::Tombstone`] means the deletion was inferred from a
    /// relist and the object is its last cached state.
    fn on_delete(&self, obj: &DeletedObject<K>) {
        let _ = obj;
    }
}

/// A shared handler is a handler: register `Arc::clone(&h)` and keep `h` to inspect it.
impl<K, H: EventHandler<K>> EventHandler<K> for std::sync::Arc<H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(obj, is_in_initial_list);
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new);
    }
    fn on_resync(&self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_resync(old, new);
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        (**self).on_delete(obj);
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&DeletedObject<K>) + Send + Sync>;
type UpdatePredicate<K> = Box<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// An [`EventHandler`] made of closures; unset ones do nothing.
///
/// ```
/// # use kubegen_cache::HandlerFns;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// let handler = HandlerFns::<ConfigMap>::new()
///     .on_add(|cm, _| println!("added {:?}", cm.metadata.name))
///     .on_delete(|gone| println!("deleted {:?}", gone.object().metadata.name));
/// ```
pub struct HandlerFns<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for HandlerFns<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> HandlerFns<K> {
    /// A handler that does nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the add callback (`object`, `is_in_initial_list`).
    pub fn on_add(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the update callback (`old`, `new`); resyncs call it too.
    pub fn on_update(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the delete callback.
    pub fn on_delete(mut self, f: impl Fn(&DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for HandlerFns<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}

/// Shows `inner` only the objects that pass `filter`, turning updates that cross the filter
/// boundary into adds and deletes.
///
/// # Guarantees
/// For an update `old → new`: both pass → `on_update`; only `new` passes → `on_add(new)`;
/// only `old` passes → `on_delete(Known(new))`; neither → nothing. Exactly client-go's
/// `FilteringResourceEventHandler`, so `inner` sees a consistent world in which objects enter
/// and leave the filtered set.
pub struct FilteringHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    inner: H,
}

impl<K, H> FilteringHandler<K, H> {
    /// Wraps `inner` behind `filter`.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, inner: H) -> Self {
        Self {
            filter: Box::new(filter),
            inner,
        }
    }
}

impl<K: Send + Sync + 'static, H: EventHandler<K>> FilteringHandler<K, H> {
    /// Routes an update (or resync) `old → new` by which side passes the filter.
    fn crossing(&self, old: &Arc<K>, new: &Arc<K>, both: impl FnOnce(&H)) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => both(&self.inner),
            (false, true) => self.inner.on_add(new, false),
            (true, false) => self.inner.on_delete(&DeletedObject::Known(Arc::clone(new))),
            (false, false) => {}
        }
    }
}

impl<K: Send + Sync + 'static, H: EventHandler<K>> EventHandler<K> for FilteringHandler<K, H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.inner.on_add(obj, is_in_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        self.crossing(old, new, |inner| inner.on_update(old, new));
    }
    fn on_resync(&self, old: &Arc<K>, new: &Arc<K>) {
        self.crossing(old, new, |inner| inner.on_resync(old, new));
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        if (self.filter)(obj.object()) {
            self.inner.on_delete(obj);
        }
    }
}

/// Drops the updates for which `keep(old, new)` is false; adds, deletes and resyncs pass.
///
/// With [`generation_changed`] this is how a controller avoids reconciling after its own status
/// writes: a status update does not bump `metadata.generation`.
pub struct UpdateFilter<K, H> {
    keep: UpdatePredicate<K>,
    inner: H,
}

impl<K, H> UpdateFilter<K, H> {
    /// Wraps `inner`, forwarding only updates for which `keep(old, new)` holds.
    pub fn new(keep: impl Fn(&K, &K) -> bool + Send + Sync + 'static, inner: H) -> Self {
        Self {
            keep: Box::new(keep),
            inner,
        }
    }
}

impl<K: Send + Sync + 'static, H: EventHandler<K>> EventHandler<K> for UpdateFilter<K, H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.inner.on_add(obj, is_in_initial_list);
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if (self.keep)(old, new) {
            self.inner.on_update(old, new);
        }
    }
    fn on_resync(&self, old: &Arc<K>, new: &Arc<K>) {
        self.inner.on_resync(old, new);
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        self.inner.on_delete(obj);
    }
}

/// Whether an update changed the object's spec, judged by `metadata.generation`.
///
/// The API server bumps `generation` on spec changes only (for resources with a status
/// subresource), so status and metadata-only writes return false. Objects without a generation
/// fall back to comparing `resourceVersion`, i.e. every real change counts.
///
/// An "update" whose two sides have different `metadata.uid`s is a different object: it was
/// deleted and re-created under the same name while the watch was down, and a relist reports
/// the pair as an update. Its `generation` restarts at 1 and may well equal the old one, so a
/// uid change always counts as a change.
pub fn generation_changed<K: Resource>(old: &K, new: &K) -> bool {
    if let (Some(old_uid), Some(new_uid)) = (&old.meta().uid, &new.meta().uid)
        && old_uid != new_uid
    {
        return true;
    }
    match (old.meta().generation, new.meta().generation) {
        (Some(a), Some(b)) => a != b,
        _ => old.meta().resource_version != new.meta().resource_version,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::test_util::{cm, labeled};

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);
    impl EventHandler<ConfigMap> for Recorder {
        fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
            self.0
                .lock()
                .unwrap()
                .push(format!("add {}", crate::test_util::rv(obj)));
        }
        fn on_update(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
            self.0
                .lock()
                .unwrap()
                .push(format!("update {}", crate::test_util::rv(new)));
        }
        fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
            self.0
                .lock()
                .unwrap()
                .push(format!("delete {}", crate::test_util::rv(obj.object())));
        }
    }

    fn app(rv: &str, app: &str) -> Arc<ConfigMap> {
        Arc::new(labeled(cm("ns", "x", rv), "app", app))
    }

    #[test]
    fn filtering_handler_turns_boundary_crossings_into_add_and_delete() {
        let rec = Arc::new(Recorder::default());
        let h = FilteringHandler::new(
            |o: &ConfigMap| {
                o.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l["app"] == "web")
            },
            Arc::clone(&rec),
        );
        h.on_add(&app("1", "db"), false);
        h.on_update(&app("1", "db"), &app("2", "web"));
        h.on_update(&app("2", "web"), &app("3", "web"));
        h.on_update(&app("3", "web"), &app("4", "db"));
        h.on_update(&app("4", "db"), &app("5", "db"));
        h.on_delete(&DeletedObject::Known(app("6", "web")));
        assert_eq!(
            *rec.0.lock().unwrap(),
            ["add 2", "update 3", "delete 4", "delete 6"]
        );
    }

    #[test]
    fn generation_changed_ignores_status_writes() {
        let mut old = cm("ns", "x", "1");
        old.metadata.generation = Some(1);
        let mut status_write = cm("ns", "x", "2");
        status_write.metadata.generation = Some(1);
        let mut spec_write = cm("ns", "x", "3");
        spec_write.metadata.generation = Some(2);
        assert!(!generation_changed(&old, &status_write));
        assert!(generation_changed(&old, &spec_write));
        assert!(
            generation_changed(&cm("ns", "x", "1"), &cm("ns", "x", "2")),
            "no generation: RV decides"
        );
    }

    #[test]
    fn generation_changed_sees_a_recreated_object_with_the_same_generation() {
        let with = |rv: &str, uid: Option<&str>| {
            let mut o = cm("ns", "x", rv);
            o.metadata.generation = Some(1);
            o.metadata.uid = uid.map(str::to_owned);
            o
        };
        let old = with("1", Some("uid-1"));
        assert!(
            generation_changed(&old, &with("9", Some("uid-2"))),
            "deleted and re-created: a new object"
        );
        assert!(
            !generation_changed(&old, &with("2", Some("uid-1"))),
            "same object, status write"
        );
        assert!(
            !generation_changed(&old, &with("2", None)),
            "a missing uid proves nothing"
        );
    }

    #[test]
    fn update_filter_drops_unwanted_updates_only() {
        let rec = Arc::new(Recorder::default());
        let h = UpdateFilter::new(|_: &ConfigMap, _: &ConfigMap| false, Arc::clone(&rec));
        h.on_add(&app("1", "a"), false);
        h.on_update(&app("1", "a"), &app("2", "a"));
        h.on_resync(&app("2", "a"), &app("2", "a"));
        h.on_delete(&DeletedObject::Known(app("3", "a")));
        assert_eq!(*rec.0.lock().unwrap(), ["add 1", "update 2", "delete 3"]);
    }
}
