use std::sync::Arc;

use futures_util::FutureExt;
use k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::delta::{DeletedObject, Delta};
use crate::test_util::{cm, rv};

fn setup() -> (DeltaFifo<ConfigMap>, Indexer<ConfigMap>) {
    let known = Indexer::new();
    (DeltaFifo::new(known.clone()), known)
}

fn obj(name: &str, version: &str) -> Arc<ConfigMap> {
    Arc::new(cm("ns", name, version))
}

/// Pops one key without waiting, rendering its deltas as `Type:rv` (`Deleted~` for tombstones).
fn pop_now(fifo: &DeltaFifo<ConfigMap>) -> (String, Vec<String>) {
    let popped = fifo
        .pop(|key, deltas, _| {
            let rendered = deltas
                .iter()
                .map(|d| match d {
                    Delta::Deleted(DeletedObject::Tombstone { .. }) => {
                        format!("Deleted~:{}", rv(d.object()))
                    }
                    _ => format!("{}:{}", d.type_name(), rv(d.object())),
                })
                .collect();
            (key.to_string(), rendered)
        })
        .now_or_never()
        .flatten()
        .expect("a key was ready");
    fifo.check_invariants();
    popped
}

fn index(known: &Indexer<ConfigMap>, o: Arc<ConfigMap>) {
    known.insert(ObjectKey::of(o.as_ref()), o);
}

#[test]
fn keys_pop_in_first_queued_order() {
    let (fifo, _) = setup();
    fifo.add(obj("a", "1"));
    fifo.add(obj("b", "2"));
    fifo.update(obj("a", "3"));
    fifo.check_invariants();
    assert_eq!(
        pop_now(&fifo),
        ("ns/a".into(), vec!["Added:1".into(), "Updated:3".into()])
    );
    assert_eq!(pop_now(&fifo), ("ns/b".into(), vec!["Added:2".into()]));
    assert!(fifo.is_empty());
}

#[test]
fn trailing_deletes_collapse_preferring_known_object() {
    let (fifo, known) = setup();
    index(&known, obj("a", "1"));
    fifo.delete(obj("a", "2"));
    fifo.replace(vec![]); // queues a tombstone after the real delete
    fifo.check_invariants();
    assert_eq!(pop_now(&fifo).1, ["Deleted:2"]);

    fifo.replace(vec![]); // tombstone first (the key is still in the indexer) ...
    fifo.delete(obj("a", "3")); // ... then the real delete wins
    assert_eq!(pop_now(&fifo).1, ["Deleted:3"]);
}

#[test]
fn two_real_trailing_deletes_keep_the_older_object() {
    // client-go's isDeletionDup: of two real deletions the older is kept.
    let (fifo, known) = setup();
    index(&known, obj("a", "1"));
    fifo.delete(obj("a", "2"));
    fifo.delete(obj("a", "3"));
    fifo.check_invariants();
    assert_eq!(pop_now(&fifo).1, ["Deleted:2"]);
}

#[test]
fn two_trailing_tombstones_keep_the_newer() {
    let (fifo, known) = setup();
    index(&known, obj("a", "1"));
    fifo.replace(vec![]); // a tombstone with the cached state, rv 1
    let newer = Queued::Deleted {
        last: Stored::Decoded(obj("a", "4")),
        tombstone: true,
    };
    fifo.state.lock().queue(ObjectKey::from("ns/a"), newer);
    assert_eq!(pop_now(&fifo).1, ["Deleted~:4"]);
}

#[test]
fn delete_of_unknown_key_is_ignored() {
    let (fifo, _) = setup();
    fifo.delete(obj("ghost", "1"));
    fifo.check_invariants();
    assert!(fifo.is_empty());
}

#[test]
fn delete_of_queued_key_is_queued() {
    let (fifo, _) = setup();
    fifo.add(obj("a", "1"));
    fifo.delete(obj("a", "2"));
    assert_eq!(pop_now(&fifo).1, ["Added:1", "Deleted:2"]);
}

#[test]
fn replace_emits_tombstone_for_indexer_known_key() {
    let (fifo, known) = setup();
    index(&known, obj("gone", "1"));
    index(&known, obj("kept", "1"));
    fifo.replace(vec![obj("kept", "2")]);
    fifo.check_invariants();
    assert_eq!(
        pop_now(&fifo),
        ("ns/kept".into(), vec!["Replaced:2".into()])
    );
    assert_eq!(
        pop_now(&fifo),
        ("ns/gone".into(), vec!["Deleted~:1".into()])
    );
}

#[test]
fn replace_emits_tombstone_for_queue_only_key() {
    let (fifo, _) = setup();
    fifo.add(obj("queued", "5"));
    fifo.replace(vec![obj("other", "6")]);
    fifo.check_invariants();
    assert_eq!(
        pop_now(&fifo),
        (
            "ns/queued".into(),
            vec!["Added:5".into(), "Deleted~:5".into()]
        )
    );
    assert_eq!(
        pop_now(&fifo),
        ("ns/other".into(), vec!["Replaced:6".into()])
    );
}

#[test]
fn replace_queues_replaced_and_resync_queues_sync() {
    let (fifo, known) = setup();
    fifo.replace(vec![obj("a", "1")]);
    assert_eq!(pop_now(&fifo).1, ["Replaced:1"]);
    index(&known, obj("a", "1"));
    fifo.resync();
    assert_eq!(pop_now(&fifo).1, ["Sync:1"]);
}

#[test]
fn resync_skips_queued_keys() {
    let (fifo, known) = setup();
    index(&known, obj("a", "1"));
    index(&known, obj("b", "1"));
    fifo.update(obj("a", "2"));
    fifo.resync();
    fifo.check_invariants();
    assert_eq!(pop_now(&fifo), ("ns/a".into(), vec!["Updated:2".into()]));
    assert_eq!(pop_now(&fifo), ("ns/b".into(), vec!["Sync:1".into()]));
    assert!(fifo.is_empty());
}

#[test]
fn has_synced_after_initial_population_including_deletions() {
    let (fifo, _) = setup();
    assert!(!fifo.has_synced(), "nothing listed yet");
    fifo.replace(vec![obj("a", "1"), obj("b", "1")]);
    fifo.delete(obj("a", "2")); // a deletion inside the initial population does not add a key
    fifo.add(obj("c", "1")); // after the list: not part of the initial population
    assert!(!fifo.has_synced());
    let mut in_initial = vec![];
    for _ in 0..3 {
        fifo.pop(|_, _, initial| in_initial.push(initial))
            .now_or_never()
            .flatten()
            .expect("ready");
        in_initial.push(fifo.has_synced());
    }
    assert_eq!(in_initial, [true, false, true, true, false, true]);
}

#[test]
fn empty_initial_list_is_synced_at_once() {
    let (fifo, _) = setup();
    fifo.replace(vec![]);
    assert!(fifo.has_synced());
}

#[test]
fn events_before_the_first_replace_mark_the_queue_populated() {
    // client-go's rule: any add/update/delete counts as "populated", so a later Replace does
    // not set an initial population to wait for. The reflector always lists first.
    let (fifo, _) = setup();
    fifo.add(obj("early", "1"));
    fifo.replace(vec![obj("a", "1")]);
    assert!(fifo.has_synced());
}

#[tokio::test(start_paused = true)]
async fn pop_blocks_until_a_key_is_queued() {
    let (fifo, _) = setup();
    let fifo = Arc::new(fifo);
    let consumer = {
        let fifo = Arc::clone(&fifo);
        tokio::spawn(async move { fifo.pop(|key, _, _| key.to_string()).await })
    };
    tokio::task::yield_now().await;
    assert!(!consumer.is_finished());
    fifo.add(obj("a", "1"));
    assert_eq!(consumer.await.unwrap().as_deref(), Some("ns/a"));
}

#[tokio::test(start_paused = true)]
async fn pop_unblocks_on_close() {
    let (fifo, _) = setup();
    let fifo = Arc::new(fifo);
    let consumer = {
        let fifo = Arc::clone(&fifo);
        tokio::spawn(async move { fifo.pop(|_, _, _| ()).await })
    };
    tokio::task::yield_now().await;
    fifo.close();
    assert_eq!(consumer.await.unwrap(), None);
    fifo.add(obj("a", "1"));
    assert_eq!(
        fifo.pop(|_, _, _| ()).await,
        None,
        "a closed queue stays closed"
    );
}

#[test]
fn a_draining_queue_gives_back_the_room_of_a_large_list() {
    let (fifo, _known) = setup();
    let names: Vec<String> = (0..1000).map(|i| format!("cm-{i}")).collect();
    fifo.replace(names.iter().map(|name| obj(name, "1")).collect());
    assert!(fifo.state.lock().items.capacity() >= 1000);
    for _ in 0..500 {
        pop_now(&fifo);
    }
    assert!(
        fifo.state.lock().items.capacity() >= 1000,
        "a queue at half its room keeps it"
    );
    for _ in 0..400 {
        pop_now(&fifo);
        fifo.check_invariants();
    }
    {
        let state = fifo.state.lock();
        assert!(
            state.items.capacity() <= 4 * 100,
            "{}",
            state.items.capacity()
        );
        assert!(
            state.order.capacity() <= 4 * 100,
            "{}",
            state.order.capacity()
        );
    }
    for _ in 0..99 {
        pop_now(&fifo);
    }
    assert_eq!(fifo.len(), 1, "shrinking lost no key");
    pop_now(&fifo);
    let state = fifo.state.lock();
    assert!(state.items.capacity() <= FifoState::<ConfigMap>::IDLE_CAPACITY);
    assert!(state.order.capacity() <= FifoState::<ConfigMap>::IDLE_CAPACITY);
}

/// A queue over a byte-backed indexer.
fn byte_backed() -> (DeltaFifo<ConfigMap>, Indexer<ConfigMap>) {
    let bytes = crate::stored::ByteStore::for_mode(
        crate::StoreMode::Bytes { decoded_cache: 0 },
        crate::WireCodec::json(),
    );
    let known = Indexer::with_store(Arc::default(), bytes);
    (DeltaFifo::new(known.clone()), known)
}

/// Whether every queued delta holds bytes.
fn all_queued_encoded(fifo: &DeltaFifo<ConfigMap>) -> bool {
    let state = fifo.state.lock();
    state
        .items
        .values()
        .flatten()
        .all(|delta| matches!(delta.entry(), Stored::Encoded(_)))
}

#[test]
fn a_byte_backed_queue_holds_bytes_and_pops_the_same_objects() {
    let (fifo, known) = byte_backed();
    index(&known, obj("gone", "1"));
    fifo.replace(vec![obj("a", "2"), obj("b", "3")]);
    fifo.update(obj("a", "4"));
    fifo.resync();
    assert!(all_queued_encoded(&fifo), "a queued delta is decoded");
    assert_eq!(
        pop_now(&fifo),
        ("ns/a".into(), vec!["Replaced:2".into(), "Updated:4".into()])
    );
    assert_eq!(pop_now(&fifo), ("ns/b".into(), vec!["Replaced:3".into()]));
    assert_eq!(
        pop_now(&fifo),
        ("ns/gone".into(), vec!["Deleted~:1".into()])
    );
    assert!(fifo.is_empty());
}

#[test]
fn an_index_added_while_an_object_was_queued_files_it_when_stored() {
    let (fifo, known) = byte_backed();
    fifo.add(obj("a", "1"));
    let by_name: crate::IndexFn<ConfigMap> =
        Arc::new(|o: &ConfigMap| o.metadata.name.iter().cloned().collect());
    known
        .add_indexers(crate::Indexers::from([("by-name".to_owned(), by_name)]))
        .unwrap();
    let stored = fifo
        .pop_entries(|key, deltas, _| {
            for delta in deltas {
                known.insert_stored(key.clone(), delta.entry().clone());
            }
        })
        .now_or_never()
        .flatten();
    assert!(stored.is_some());
    let keys = known.index_keys("by-name", "a").unwrap();
    assert_eq!(keys, [ObjectKey::from("ns/a")]);
    known.check_invariants();
}
