//! Object storage with one global resourceVersion and a bounded event history: the part of
//! kube-apiserver that etcd3 plus the watch cache provide (apiserver `pkg/storage/etcd3/store.go`,
//! `pkg/storage/cacher/watch_cache.go`).
//!
//! # Why keep serialized bytes
//! Lists of 100k objects must not deep-clone or re-serialize the store. Each object is kept as an
//! `Arc<Value>` (for patches, selectors, updates) next to its JSON bytes (for responses), so a list
//! page is a vector of cheap `Bytes` handles copied under the lock and written out after it.
//!
//! # Why a history of events
//! Watches resume from a resourceVersion, and paginated lists serve every page from the snapshot
//! of the first one. Both are answered from the last `capacity` events; anything older is
//! "compacted" and yields 410 Expired exactly like etcd compaction does on the real server.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::Value;

use crate::registry::ResourceKey;

/// `(namespace, name)`; the namespace is empty for cluster-scoped objects. Sorting by it gives the
/// same order as the real server's etcd keys.
pub(crate) type ObjectKey = (String, String);

/// One stored object version.
#[derive(Clone, Debug)]
pub(crate) struct Stored {
    /// The object. Invariant: `metadata.resourceVersion == rv.to_string()`.
    pub(crate) value: Arc<Value>,
    /// `value` serialized, `kind` and `apiVersion` first (as a real server writes them).
    /// Invariant: parses back to `value`.
    pub(crate) json: Bytes,
    /// Where `json` goes on after `kind` and `apiVersion`: `{` followed by `json[untyped_from..]`
    /// is the object without them. Invariant: `0 < untyped_from < json.len()`.
    untyped_from: usize,
    /// The resourceVersion of this version.
    pub(crate) rv: u64,
    /// The protobuf form, encoded by the first watcher that sends this version in protobuf and
    /// shared by every clone of it (kept as long as the version is, in the store or the
    /// history), as the watch cache serializes an event once for all its watchers (apiserver
    /// `pkg/storage/cacher/caching_object.go`). None inside: the kind has no protobuf form.
    protobuf: Arc<OnceLock<Option<Bytes>>>,
}

impl Stored {
    /// Stamps `rv` into `metadata.resourceVersion` and serializes.
    pub(crate) fn new(mut value: Value, rv: u64) -> Stored {
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let (json, untyped_from) = serialize(&value);
        Stored {
            value: Arc::new(value),
            json,
            untyped_from,
            rv,
            protobuf: Arc::default(),
        }
    }

    /// The protobuf form, made by `encode` on the first call for this version.
    pub(crate) fn protobuf(&self, encode: impl FnOnce(&Value) -> Option<Bytes>) -> Option<Bytes> {
        self.protobuf.get_or_init(|| encode(&self.value)).clone()
    }

    /// The object's JSON after its `kind` and `apiVersion`, without the opening `{`: a list of a
    /// built-in kind writes its items this way, `{` then these bytes (see `body::ListBody`).
    pub(crate) fn untyped_rest(&self) -> Bytes {
        self.json.slice(self.untyped_from..)
    }
}

/// The object's types, written first.
const TYPES: [&str; 2] = ["kind", "apiVersion"];

/// `value` as JSON with `kind` and `apiVersion` first, and where the rest of the object starts
/// (see [`Stored::untyped_rest`]). Serializing a `Value` into memory cannot fail.
fn serialize(value: &Value) -> (Bytes, usize) {
    let Some(object) = value.as_object() else {
        return (Bytes::from(value.to_string()), 1);
    };
    fn entry(out: &mut Vec<u8>, key: &str, value: &Value) {
        out.push(if out.is_empty() { b'{' } else { b',' });
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        let _ = serde_json::to_writer(&mut *out, value);
    }
    let mut out = Vec::with_capacity(512);
    for key in TYPES {
        if let Some(value) = object.get(key) {
            entry(&mut out, key, value);
        }
    }
    // The rest starts after the `,` that will follow the types, or at the `}` when nothing does.
    let untyped_from = out.len() + 1;
    for (key, value) in object {
        if !TYPES.contains(&key.as_str()) {
            entry(&mut out, key, value);
        }
    }
    if out.is_empty() {
        out.push(b'{');
    }
    out.push(b'}');
    let untyped_from = untyped_from.min(out.len() - 1);
    (Bytes::from(out), untyped_from)
}

impl Stored {
    /// The same object without `metadata.resourceVersion` (a dry-run create was never stored).
    pub(crate) fn without_resource_version(&self) -> Stored {
        let mut value = (*self.value).clone();
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        let (json, untyped_from) = serialize(&value);
        Stored {
            value: Arc::new(value),
            json,
            untyped_from,
            rv: 0,
            protobuf: Arc::default(),
        }
    }
}

/// Watch event types stored in the history (bookmarks and errors are never stored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The wire name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as the watch cache keeps it: the new state and the previous one (needed to tell
/// watchers with selectors that an object left their selection).
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) rv: u64,
    pub(crate) resource: ResourceKey,
    pub(crate) key: ObjectKey,
    pub(crate) kind: EventType,
    /// For `Deleted`: the last state, stamped with the deletion's resourceVersion.
    pub(crate) object: Stored,
    pub(crate) prev: Option<Stored>,
    /// See [`Event::departed`].
    departed: OnceLock<Stored>,
}

impl Event {
    /// `prev` stamped with this event's resourceVersion: the `DELETED` a watcher gets when the
    /// object leaves its selection, made once for all such watchers.
    pub(crate) fn departed(&self) -> Option<&Stored> {
        let prev = self.prev.as_ref()?;
        Some(
            self.departed
                .get_or_init(|| Stored::new((*prev.value).clone(), self.rv)),
        )
    }
}

/// The history no longer reaches back to the requested resourceVersion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Compacted {
    /// The oldest resourceVersion that can still be served.
    pub(crate) oldest: u64,
}

/// All objects of all resources plus the event history.
#[derive(Debug)]
pub(crate) struct Store {
    /// Last issued resourceVersion. Invariant: >= every stored and historical rv.
    rv: u64,
    /// Objects per resource, sorted by key.
    collections: HashMap<ResourceKey, BTreeMap<ObjectKey, Stored>>,
    /// Changes in ascending rv order. Invariant: every rv in here is > `compacted`, strictly
    /// ascending, and `history.len() <= capacity`.
    history: VecDeque<Arc<Event>>,
    /// Every change with rv > `compacted` is in `history`; reads at older versions get 410.
    compacted: u64,
    capacity: usize,
}

impl Store {
    /// An empty store keeping at most `capacity` events (at least 1).
    pub(crate) fn new(capacity: usize) -> Store {
        Store {
            rv: 0,
            collections: HashMap::new(),
            history: VecDeque::new(),
            compacted: 0,
            capacity: capacity.max(1),
        }
    }

    /// The newest resourceVersion.
    pub(crate) fn current_rv(&self) -> u64 {
        self.rv
    }

    /// The oldest resourceVersion still servable from history.
    pub(crate) fn compacted_rv(&self) -> u64 {
        self.compacted
    }

    /// Forgets the whole history (a forced compaction): reads and watches at any older
    /// resourceVersion now get 410.
    pub(crate) fn compact_now(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    /// Every stored object with its resource, for a snapshot (`crate::storage::persist`).
    pub(crate) fn objects(&self) -> impl Iterator<Item = (&ResourceKey, &Stored)> {
        self.collections
            .iter()
            .flat_map(|(resource, objects)| objects.values().map(move |o| (resource, o)))
    }

    /// Puts back an object as a snapshot held it, at its own resourceVersion, without an event.
    /// [`Store::restored_at`] then moves the store to the snapshot's resourceVersion.
    pub(crate) fn restore(&mut self, resource: ResourceKey, key: ObjectKey, value: Value, rv: u64) {
        self.rv = self.rv.max(rv);
        self.collections
            .entry(resource)
            .or_default()
            .insert(key, Stored::new(value, rv));
    }

    /// Ends a restore: the store continues at `rv` (at least every restored object's) with no
    /// history, so reads and watches at older versions get 410, as after etcd compaction.
    pub(crate) fn restored_at(&mut self, rv: u64) {
        self.rv = self.rv.max(rv);
        self.history.clear();
        self.compacted = self.rv;
    }

    /// The current version of one object.
    pub(crate) fn get(&self, resource: &ResourceKey, key: &ObjectKey) -> Option<&Stored> {
        self.collections.get(resource)?.get(key)
    }

    /// The objects of a resource at the current version.
    pub(crate) fn collection(
        &self,
        resource: &ResourceKey,
    ) -> Option<&BTreeMap<ObjectKey, Stored>> {
        self.collections.get(resource)
    }

    /// Stores a new object (the caller checked it does not exist) and records `ADDED`.
    pub(crate) fn insert(
        &mut self,
        resource: &ResourceKey,
        key: ObjectKey,
        value: Value,
    ) -> Stored {
        self.put(resource, key, value, EventType::Added)
    }

    /// Replaces an existing object and records `MODIFIED`.
    pub(crate) fn replace(
        &mut self,
        resource: &ResourceKey,
        key: ObjectKey,
        value: Value,
    ) -> Stored {
        self.put(resource, key, value, EventType::Modified)
    }

    /// Stores `value` at the next resourceVersion and records `event` (with the previous object,
    /// if any, so selector transitions can be computed).
    fn put(
        &mut self,
        resource: &ResourceKey,
        key: ObjectKey,
        value: Value,
        event: EventType,
    ) -> Stored {
        self.rv += 1;
        let stored = Stored::new(value, self.rv);
        let collection = self.collections.entry(resource.clone()).or_default();
        let prev = collection.insert(key.clone(), stored.clone());
        self.record(resource, key, event, stored.clone(), prev);
        stored
    }

    /// Removes an object and records `DELETED` carrying its last state at a new resourceVersion.
    pub(crate) fn remove(&mut self, resource: &ResourceKey, key: &ObjectKey) -> Option<Stored> {
        let prev = self.collections.get_mut(resource)?.remove(key)?;
        self.rv += 1;
        let last = Stored::new((*prev.value).clone(), self.rv);
        self.record(
            resource,
            key.clone(),
            EventType::Deleted,
            last.clone(),
            Some(prev),
        );
        Some(last)
    }

    fn record(
        &mut self,
        resource: &ResourceKey,
        key: ObjectKey,
        kind: EventType,
        object: Stored,
        prev: Option<Stored>,
    ) {
        let event = Event {
            rv: self.rv,
            resource: resource.clone(),
            key,
            kind,
            object,
            prev,
            departed: OnceLock::new(),
        };
        self.history.push_back(Arc::new(event));
        while self.history.len() > self.capacity {
            if let Some(oldest) = self.history.pop_front() {
                self.compacted = oldest.rv;
            }
        }
    }

    /// Events of `resource` with rv > `after`, plus the rv the scan covered (the current rv).
    pub(crate) fn events_after(
        &self,
        resource: &ResourceKey,
        after: u64,
    ) -> Result<(Vec<Arc<Event>>, u64), Compacted> {
        if after < self.compacted {
            return Err(Compacted {
                oldest: self.compacted,
            });
        }
        let start = self.history.partition_point(|e| e.rv <= after);
        let events = self
            .history
            .range(start..)
            .filter(|e| e.resource == *resource)
            .cloned()
            .collect();
        Ok((events, self.rv))
    }

    /// Every object of `resource` (in `namespace` when given) as it is now, in the store's order:
    /// what the server reads of its own configuration (webhooks, policies, their parameters).
    pub(crate) fn all(&self, resource: &ResourceKey, namespace: Option<&str>) -> Vec<Stored> {
        let keep = |_: &Stored| true;
        let query = ListQuery {
            namespace,
            at: None,
            after: None,
            limit: None,
            keep: &keep,
        };
        // A list of the newest revision is never compacted.
        self.list(resource, &query)
            .map(|(items, _)| items)
            .unwrap_or_default()
    }

    /// Objects of `resource` as of resourceVersion `at` (None: now), in `namespace` (None: all), with
    /// keys after `after`, in key order, passing `keep`, at most `limit` of them. Returns the items
    /// and whether more keys follow in the range.
    pub(crate) fn list(
        &self,
        resource: &ResourceKey,
        query: &ListQuery<'_>,
    ) -> Result<(Vec<Stored>, bool), Compacted> {
        let mut items = Vec::new();
        let mut more = false;
        self.scan(resource, query, &mut |stored| {
            if query.limit.is_some_and(|limit| items.len() >= limit) {
                more = true;
                return false;
            }
            if (query.keep)(stored) {
                items.push(stored.clone());
            }
            true
        })?;
        Ok((items, more))
    }

    /// How many objects [`Store::list`] with this query but without a limit would visit, selector
    /// ignored: the `remainingItemCount` after a page whose last key is `query.after`.
    pub(crate) fn count(
        &self,
        resource: &ResourceKey,
        query: &ListQuery<'_>,
    ) -> Result<usize, Compacted> {
        let mut count = 0;
        self.scan(resource, query, &mut |_| {
            count += 1;
            true
        })?;
        Ok(count)
    }

    /// Calls `visit` with each object of `query`'s range at its version, in key order, until it
    /// returns false. `limit` and `keep` are the caller's business.
    fn scan(
        &self,
        resource: &ResourceKey,
        query: &ListQuery<'_>,
        visit: &mut dyn FnMut(&Stored) -> bool,
    ) -> Result<(), Compacted> {
        let empty = BTreeMap::new();
        let current = self.collections.get(resource).unwrap_or(&empty);
        let overrides = match query.at {
            Some(at) if at < self.rv => self.states_at(resource, at)?,
            _ => BTreeMap::new(),
        };
        let ns_start;
        let start = match (query.after, query.namespace) {
            (Some(key), _) => Bound::Excluded(key),
            (None, Some(ns)) => {
                ns_start = (ns.to_string(), String::new());
                Bound::Included(&ns_start)
            }
            (None, None) => Bound::Unbounded,
        };
        let mut cur = current
            .range::<ObjectKey, _>((start, Bound::Unbounded))
            .peekable();
        let mut old = overrides
            .range::<ObjectKey, _>((start, Bound::Unbounded))
            .peekable();
        loop {
            // Merge the two sorted sequences; an override (the state at `at`) wins over the current state.
            let next = match (cur.peek(), old.peek()) {
                (None, None) => None,
                (Some((ck, _)), Some((ok, _))) if ck < ok => cur.next().map(|(k, s)| (k, Some(s))),
                (Some((ck, _)), Some((ok, _))) if ck == ok => {
                    cur.next();
                    old.next().map(|(k, s)| (k, s.as_ref()))
                }
                (Some(_), None) => cur.next().map(|(k, s)| (k, Some(s))),
                _ => old.next().map(|(k, s)| (k, s.as_ref())),
            };
            let Some((key, state)) = next else {
                return Ok(());
            };
            if query.namespace.is_some_and(|ns| key.0 != ns) {
                return Ok(());
            }
            let Some(stored) = state else { continue };
            if !visit(stored) {
                return Ok(());
            }
        }
    }

    /// For every key of `resource` changed after `at`: its state at `at` (None: did not exist).
    fn states_at(
        &self,
        resource: &ResourceKey,
        at: u64,
    ) -> Result<BTreeMap<ObjectKey, Option<Stored>>, Compacted> {
        let (events, _) = self.events_after(resource, at)?;
        let mut states = BTreeMap::new();
        for event in events {
            // The earliest change after `at` tells what the object looked like at `at`.
            states
                .entry(event.key.clone())
                .or_insert_with(|| match event.kind {
                    EventType::Added => None,
                    EventType::Modified | EventType::Deleted => event.prev.clone(),
                });
        }
        Ok(states)
    }

    /// Removes a whole resource's collection without events (used after its objects were deleted
    /// one by one, when a CRD goes away).
    pub(crate) fn drop_collection(&mut self, resource: &ResourceKey) {
        self.collections.remove(resource);
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        assert!(self.history.len() <= self.capacity);
        let mut last = self.compacted;
        for event in &self.history {
            assert!(
                event.rv > last,
                "history must be strictly ascending above the compaction point"
            );
            last = event.rv;
        }
        assert!(last <= self.rv);
        for collection in self.collections.values() {
            for stored in collection.values() {
                assert!(stored.rv <= self.rv);
                let rv = stored
                    .value
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str);
                assert_eq!(rv, Some(stored.rv.to_string().as_str()));
                let parsed: Value = serde_json::from_slice(&stored.json).unwrap();
                assert_eq!(parsed, *stored.value);
                let untyped = [&b"{"[..], &stored.untyped_rest()].concat();
                let mut expected = (*stored.value).clone();
                if let Some(object) = expected.as_object_mut() {
                    TYPES.iter().for_each(|key| drop(object.remove(*key)));
                }
                assert_eq!(serde_json::from_slice::<Value>(&untyped).unwrap(), expected);
            }
        }
    }
}

/// Parameters of [`Store::list`].
pub(crate) struct ListQuery<'a> {
    /// Serve the state as of this resourceVersion (None or >= current: now).
    pub(crate) at: Option<u64>,
    /// Only this namespace.
    pub(crate) namespace: Option<&'a str>,
    /// Start after this key (from a continue token).
    pub(crate) after: Option<&'a ObjectKey>,
    /// Page size.
    pub(crate) limit: Option<usize>,
    /// Selector filter.
    pub(crate) keep: &'a dyn Fn(&Stored) -> bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str) -> ObjectKey {
        ("ns".to_string(), name.to_string())
    }

    fn obj(name: &str, data: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns"}, "data": {"v": data}})
    }

    fn names(items: &[Stored]) -> Vec<String> {
        items
            .iter()
            .map(|s| s.value["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    fn all(_: &Stored) -> bool {
        true
    }

    #[test]
    fn every_write_gets_the_next_global_resource_version() {
        let mut store = Store::new(10);
        let cm = ResourceKey::new("", "v1", "configmaps");
        let a = store.insert(&cm, key("a"), obj("a", "1"));
        let b = store.replace(&cm, key("a"), obj("a", "2"));
        let c = store.remove(&cm, &key("a")).unwrap();
        assert_eq!((a.rv, b.rv, c.rv), (1, 2, 3));
        assert_eq!(c.value["metadata"]["resourceVersion"], "3");
        store.check_invariants();
    }

    #[test]
    fn a_version_is_encoded_once_and_its_departure_built_once_for_all_watchers() {
        let mut store = Store::new(10);
        let cm = ResourceKey::new("", "v1", "configmaps");
        store.insert(&cm, key("a"), obj("a", "1"));
        store.replace(&cm, key("a"), obj("a", "2"));
        let (events, _) = store.events_after(&cm, 1).unwrap();
        let event = &events[0];
        let encodes = std::cell::Cell::new(0);
        let encode = |_: &Value| {
            encodes.set(encodes.get() + 1);
            Some(Bytes::from_static(b"pb"))
        };
        // Each watcher sends its own clone of the event's object.
        for _ in 0..3 {
            let copy = event.object.clone();
            assert_eq!(copy.protobuf(encode), Some(Bytes::from_static(b"pb")));
        }
        assert_eq!(encodes.get(), 1);
        let departed = event.departed().unwrap();
        assert_eq!(departed.rv, 2);
        assert_eq!(departed.value["data"]["v"], "1");
        assert_eq!(departed.value["metadata"]["resourceVersion"], "2");
        assert!(std::ptr::eq(departed, event.departed().unwrap()));
    }

    #[test]
    fn history_beyond_capacity_is_compacted() {
        let mut store = Store::new(2);
        let cm = ResourceKey::new("", "v1", "configmaps");
        for i in 0..4 {
            store.insert(&cm, key(&format!("o{i}")), obj(&format!("o{i}"), "x"));
            store.check_invariants();
        }
        assert_eq!(store.compacted_rv(), 2);
        assert_eq!(
            store.events_after(&cm, 1).unwrap_err(),
            Compacted { oldest: 2 }
        );
        let (events, scanned) = store.events_after(&cm, 2).unwrap();
        assert_eq!(events.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(scanned, 4);
    }

    #[test]
    fn list_at_an_old_version_undoes_later_changes() {
        let mut store = Store::new(100);
        let cm = ResourceKey::new("", "v1", "configmaps");
        store.insert(&cm, key("a"), obj("a", "1"));
        store.insert(&cm, key("b"), obj("b", "1"));
        let snapshot = store.current_rv();
        store.replace(&cm, key("a"), obj("a", "2"));
        store.remove(&cm, &key("b"));
        store.insert(&cm, key("c"), obj("c", "1"));
        let query = ListQuery {
            namespace: None,
            at: Some(snapshot),
            after: None,
            limit: None,
            keep: &all,
        };
        let (items, more) = store.list(&cm, &query).unwrap();
        assert_eq!(names(&items), vec!["a", "b"]);
        assert_eq!(items[0].value["data"]["v"], "1");
        assert!(!more);
        store.check_invariants();
    }

    #[test]
    fn list_pages_report_whether_more_keys_follow() {
        let mut store = Store::new(100);
        let cm = ResourceKey::new("", "v1", "configmaps");
        for n in ["a", "b", "c"] {
            store.insert(&cm, key(n), obj(n, "1"));
        }
        let first = ListQuery {
            namespace: None,
            at: None,
            after: None,
            limit: Some(2),
            keep: &all,
        };
        let (items, more) = store.list(&cm, &first).unwrap();
        assert_eq!(
            (names(&items), more),
            (vec!["a".to_string(), "b".to_string()], true)
        );
        let after = key("b");
        let second = ListQuery {
            namespace: None,
            at: None,
            after: Some(&after),
            limit: Some(2),
            keep: &all,
        };
        let (items, more) = store.list(&cm, &second).unwrap();
        assert_eq!((names(&items), more), (vec!["c".to_string()], false));
    }

    #[test]
    fn list_at_a_compacted_version_fails() {
        let mut store = Store::new(1);
        let cm = ResourceKey::new("", "v1", "configmaps");
        store.insert(&cm, key("a"), obj("a", "1"));
        store.insert(&cm, key("b"), obj("b", "1"));
        store.insert(&cm, key("c"), obj("c", "1"));
        let query = ListQuery {
            namespace: None,
            at: Some(1),
            after: None,
            limit: None,
            keep: &all,
        };
        assert!(store.list(&cm, &query).is_err());
    }
}
