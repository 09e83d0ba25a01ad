use k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::{
    store_mode::{StoreMode, WireCodec},
    test_util::{cm, labeled},
};

/// An empty indexer of each store mode; the byte-backed one keeps no decoded objects, so
/// every read decodes.
fn both_modes() -> [Indexer<ConfigMap>; 2] {
    [Indexer::new(), byte_backed(0)]
}

fn byte_backed(decoded_cache: usize) -> Indexer<ConfigMap> {
    let mode = StoreMode::Bytes { decoded_cache };
    Indexer::with_store(Arc::default(), ByteStore::for_mode(mode, WireCodec::json()))
}

fn by_label(label: &'static str) -> Indexers<ConfigMap> {
    let f: IndexFn<_> = Arc::new(move |o: &ConfigMap| {
        o.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(label))
            .cloned()
            .into_iter()
            .collect()
    });
    HashMap::from([(label.to_owned(), f)])
}

fn insert(idx: &Indexer<ConfigMap>, obj: ConfigMap) {
    let obj = Arc::new(obj);
    idx.insert(ObjectKey::of(obj.as_ref()), obj);
    idx.check_invariants();
}

#[test]
fn namespace_index_is_built_in() {
    for idx in both_modes() {
        insert(&idx, cm("a", "one", "1"));
        insert(&idx, cm("b", "two", "1"));
        insert(&idx, cm("a", "three", "1"));
        let mut names: Vec<_> = idx
            .index_keys(NAMESPACE_INDEX, "a")
            .unwrap()
            .iter()
            .map(|k| k.to_string())
            .collect();
        names.sort();
        assert_eq!(names, ["a/one", "a/three"]);
        assert_eq!(idx.by_index(NAMESPACE_INDEX, "b").unwrap().len(), 1);
    }
}

#[test]
fn cluster_scoped_objects_stay_out_of_namespace_index() {
    for idx in both_modes() {
        insert(&idx, cm("", "node-config", "1"));
        insert(&idx, cm("", "node-config", "2"));
        assert!(idx.index_values(NAMESPACE_INDEX).is_empty());
        assert!(idx.remove("node-config").is_some());
        idx.check_invariants();
    }
}

#[test]
fn update_moves_object_between_buckets() {
    for idx in both_modes() {
        idx.add_indexers(by_label("app")).unwrap();
        insert(&idx, labeled(cm("ns", "x", "1"), "app", "web"));
        insert(&idx, labeled(cm("ns", "x", "2"), "app", "db"));
        assert!(idx.index_keys("app", "web").unwrap().is_empty());
        assert_eq!(
            idx.index_keys("app", "db").unwrap(),
            [ObjectKey::from("ns/x")]
        );
        assert_eq!(idx.index_values("app"), ["db"]);
    }
}

#[test]
fn remove_drops_index_entries() {
    for idx in both_modes() {
        idx.add_indexers(by_label("app")).unwrap();
        insert(&idx, labeled(cm("ns", "x", "1"), "app", "web"));
        assert!(idx.remove("ns/x").is_some());
        idx.check_invariants();
        assert!(idx.index_values("app").is_empty());
        assert!(idx.index_values(NAMESPACE_INDEX).is_empty());
        assert!(idx.remove("ns/x").is_none());
    }
}

#[test]
fn add_indexers_after_start_indexes_existing_items() {
    for idx in both_modes() {
        insert(&idx, labeled(cm("ns", "x", "1"), "app", "web"));
        insert(&idx, cm("ns", "y", "1"));
        idx.add_indexers(by_label("app")).unwrap();
        idx.check_invariants();
        assert_eq!(
            idx.index_keys("app", "web").unwrap(),
            [ObjectKey::from("ns/x")]
        );
    }
}

#[test]
fn add_indexers_rejects_taken_name() {
    for idx in both_modes() {
        idx.add_indexers(by_label("app")).unwrap();
        assert!(
            matches!(idx.add_indexers(by_label("app")), Err(Error::IndexerConflict { name }) if name == "app")
        );
    }
}

#[test]
fn add_indexers_with_a_taken_name_adds_none_of_them() {
    for idx in both_modes() {
        idx.add_indexers(by_label("app")).unwrap();
        insert(&idx, labeled(cm("ns", "x", "1"), "tier", "web"));
        let mut both = by_label("tier");
        both.extend(by_label("app"));
        assert!(
            matches!(idx.add_indexers(both), Err(Error::IndexerConflict { name }) if name == "app")
        );
        assert!(matches!(
            idx.by_index("tier", "web"),
            Err(Error::IndexNotFound { .. })
        ));
        idx.check_invariants();
        assert!(
            idx.index_keys("app", "web").unwrap().is_empty(),
            "still there"
        );
    }
}

#[test]
fn panicking_index_fn_leaves_the_object_out_of_that_index_only() {
    let panics = Arc::new(PanicCounters::default());
    let idx = Indexer::with_panic_counters(Arc::clone(&panics));
    let picky: IndexFn<ConfigMap> = Arc::new(|o| {
        let name = o.metadata.name.clone().unwrap_or_default();
        assert_ne!(name, "bad", "index bug");
        vec![name]
    });
    idx.add_indexers(HashMap::from([("name".to_owned(), picky)]))
        .unwrap();
    insert(&idx, cm("ns", "good", "1"));
    insert(&idx, cm("ns", "bad", "1"));
    assert_eq!(panics.snapshot().index_panics, 1);
    assert!(idx.get_by_key("ns/bad").is_some(), "stored");
    assert_eq!(idx.index_keys(NAMESPACE_INDEX, "ns").unwrap().len(), 2);
    assert_eq!(idx.index_values("name"), ["good"]);
    assert!(idx.remove("ns/bad").is_some());
    idx.check_invariants();
    assert_eq!(panics.snapshot().index_panics, 2, "unfiling recomputes");
}

#[test]
fn unknown_index_is_an_error() {
    for idx in both_modes() {
        assert!(matches!(
            idx.by_index("nope", "x"),
            Err(Error::IndexNotFound { .. })
        ));
    }
}

#[test]
fn replace_rebuilds_content_and_indices() {
    for idx in both_modes() {
        idx.add_indexers(by_label("app")).unwrap();
        insert(&idx, labeled(cm("ns", "old", "1"), "app", "web"));
        let fresh = Arc::new(labeled(cm("ns", "new", "2"), "app", "db"));
        idx.replace([(ObjectKey::of(fresh.as_ref()), fresh)]);
        idx.check_invariants();
        assert_eq!(idx.list_keys(), [ObjectKey::from("ns/new")]);
        assert!(idx.index_keys("app", "web").unwrap().is_empty());
    }
}

/// An index function that counts its calls.
fn counting(calls: &Arc<std::sync::atomic::AtomicUsize>) -> Indexers<ConfigMap> {
    let calls = Arc::clone(calls);
    let f: IndexFn<ConfigMap> = Arc::new(move |o: &ConfigMap| {
        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        o.metadata
            .labels
            .iter()
            .flatten()
            .map(|(_, v)| v.clone())
            .collect()
    });
    HashMap::from([("values".to_owned(), f)])
}

#[test]
fn a_byte_backed_store_runs_index_functions_once_per_arriving_object() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (decoded, bytes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let [plain, encoded] = both_modes();
    plain.add_indexers(counting(&decoded)).unwrap();
    encoded.add_indexers(counting(&bytes)).unwrap();
    for idx in [&plain, &encoded] {
        let insert = |obj| drop(idx.insert(ObjectKey::from("ns/x"), Arc::new(obj)));
        insert(labeled(cm("ns", "x", "1"), "app", "web"));
        insert(labeled(cm("ns", "x", "2"), "app", "db"));
        assert!(idx.discard("ns/x"));
        assert!(idx.index_values("values").is_empty());
    }
    // Decoded: 1 + (old + new) + old again to unfile. Bytes: once per arrival.
    assert_eq!(decoded.load(Ordering::SeqCst), 4);
    assert_eq!(bytes.load(Ordering::SeqCst), 2);
}

#[test]
fn a_byte_backed_store_keeps_bytes_and_reads_equal_objects() {
    let idx = byte_backed(0);
    idx.add_indexers(by_label("app")).unwrap();
    let mut obj = labeled(cm("ns", "x", "1"), "app", "web");
    obj.metadata.managed_fields = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            operation: Some("Apply".into()),
            fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                serde_json::json!({"f:data": {"f:a": {}}}),
            )),
            ..Default::default()
        },
    ]);
    obj.data = Some([("a".to_owned(), "b".to_owned())].into());
    let arrived = Arc::new(obj.clone());
    idx.insert(ObjectKey::of(&obj), Arc::clone(&arrived));
    idx.check_invariants();
    let entries = idx.entries_where(|_, _| true);
    assert!(matches!(entries[..], [(_, Stored::Encoded(_))]));
    let read = idx.get_by_key("ns/x").unwrap();
    assert!(!Arc::ptr_eq(&read, &arrived), "decoded from the bytes");
    assert_eq!(*read, obj, "managedFields and data intact");
    assert_eq!(*idx.by_index("app", "web").unwrap()[0], obj);
    assert_eq!(idx.list().len(), 1);
}

#[test]
fn a_byte_backed_store_remembers_a_bounded_number_of_decoded_objects() {
    let idx = byte_backed(2);
    assert_eq!(idx.decoded_cache_capacity(), Some(2));
    assert_eq!(Indexer::<ConfigMap>::new().decoded_cache_capacity(), None);
    for name in ["a", "b", "c"] {
        insert(&idx, cm("ns", name, "1"));
    }
    let first = idx.get_by_key("ns/a").unwrap(); // pushed out by "c": decoded now
    assert!(
        Arc::ptr_eq(&idx.get_by_key("ns/a").unwrap(), &first),
        "decoded once"
    );
    let c = idx.get_by_key("ns/c").unwrap();
    assert!(Arc::ptr_eq(&idx.get_by_key("ns/c").unwrap(), &c));
    // An update replaces the remembered object: the next read sees the new state.
    insert(&idx, cm("ns", "a", "2"));
    assert_eq!(crate::test_util::rv(&idx.get_by_key("ns/a").unwrap()), "2");
}

#[test]
fn a_byte_backed_store_counts_an_index_panic_once() {
    let panics = Arc::new(PanicCounters::default());
    let mode = StoreMode::Bytes { decoded_cache: 0 };
    let idx = Indexer::with_store(
        Arc::clone(&panics),
        ByteStore::for_mode(mode, WireCodec::json()),
    );
    let picky: IndexFn<ConfigMap> = Arc::new(|o| {
        assert_ne!(o.metadata.name.as_deref(), Some("bad"), "index bug");
        vec![]
    });
    idx.add_indexers(HashMap::from([("name".to_owned(), picky)]))
        .unwrap();
    insert(&idx, cm("ns", "bad", "1"));
    assert!(idx.discard("ns/bad"));
    assert_eq!(
        panics.snapshot().index_panics,
        1,
        "unfiling reads the kept values"
    );
}

#[test]
fn an_undecodable_entry_is_an_error_naming_it_and_left_out_of_lists() {
    let codec: WireCodec<ConfigMap> = WireCodec::new(
        |obj| serde_json::to_vec(obj).map_err(Into::into),
        |_| Err("truncated".into()),
    );
    let mode = StoreMode::Bytes { decoded_cache: 0 };
    let idx = Indexer::with_store(Arc::default(), ByteStore::for_mode(mode, codec));
    idx.insert(ObjectKey::from("ns/x"), Arc::new(cm("ns", "x", "1")));
    let err = idx.try_get_by_key("ns/x").unwrap_err();
    assert!(matches!(&err, Error::Undecodable { key, .. } if key == "ns/x"));
    assert!(idx.get_by_key("ns/x").is_none());
    assert!(idx.list().is_empty());
    assert!(idx.by_index(NAMESPACE_INDEX, "ns").unwrap().is_empty());
    assert_eq!(idx.len(), 1, "still cached");
    assert_eq!(idx.try_get_by_key("ns/y").unwrap(), None);
}
