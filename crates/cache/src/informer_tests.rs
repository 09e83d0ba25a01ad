use std::sync::Mutex as StdMutex;

use k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::{
    delta::DeletedObject,
    list_watch::ListWatchErrorKind,
    scripted::{Script, Step, added, deleted, err, modified, page, status_410},
    sync::wait_for_cache_sync,
    test_util::{per_store_mode, rv},
};

/// Records every call as `verb name:rv`.
#[derive(Default)]
struct Recorder(StdMutex<Vec<String>>);

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn name(o: &ConfigMap) -> &str {
    o.metadata.name.as_deref().unwrap_or_default()
}

impl EventHandler<ConfigMap> for Recorder {
    fn on_add(&self, obj: &Arc<ConfigMap>, initial: bool) {
        let tag = if initial { " (initial)" } else { "" };
        self.0
            .lock()
            .unwrap()
            .push(format!("add {}:{}{tag}", name(obj), rv(obj)));
    }
    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("update {}:{}->{}", name(new), rv(old), rv(new)));
    }
    fn on_resync(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("resync {}:{}", name(new), rv(new)));
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        let tag = if obj.is_tombstone() {
            " (tombstone)"
        } else {
            ""
        };
        self.0.lock().unwrap().push(format!(
            "delete {}:{}{tag}",
            name(obj.object()),
            rv(obj.object())
        ));
    }
}

fn informer(
    script: &Arc<Script>,
    resync: Duration,
    store_mode: StoreMode,
) -> SharedIndexInformer<ConfigMap> {
    // These tests script lists and watches: no streaming list.
    let options = InformerOptions {
        resync,
        streaming_list: false,
        store_mode,
        ..InformerOptions::default()
    };
    SharedIndexInformer::new(Arc::clone(script), options)
}

async fn settle(secs: u64) {
    tokio::time::sleep(Duration::from_secs(secs)).await;
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn indexer_is_updated_then_handlers_notified(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a", "b"], "10", None)).watch(Ok(vec![
        modified("a", "11"),
        deleted("b", "12"),
        added("c", "13"),
    ]));
    let inf = informer(&script, Duration::ZERO, mode);
    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    assert!(!inf.has_synced() && !reg.has_synced());
    inf.start();
    settle(1).await;
    assert!(inf.has_synced() && reg.has_synced());
    // The watch events arrived before the first pop: `a`'s deltas were merged, and keep a's place.
    assert_eq!(
        rec.take(),
        [
            "add a:10 (initial)",
            "update a:10->11",
            "add b:10 (initial)",
            "delete b:12",
            "add c:13"
        ]
    );
    let mut keys: Vec<_> = inf
        .indexer()
        .list_keys()
        .iter()
        .map(ToString::to_string)
        .collect();
    keys.sort();
    assert_eq!(keys, ["ns/a", "ns/c"]);
    inf.indexer().check_invariants();
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn relist_notifies_changes_and_tombstones_but_not_unchanged_objects(mode) {
    let script = Arc::new(Script::default());
    script
        .list(page(&["same", "changed", "gone"], "10", None))
        .watch(Ok(vec![Step::Pause(Duration::from_secs(1)), status_410()]))
        .list(Ok({
            let mut list = page(&["same", "new"], "20", None).unwrap();
            list.items[0].metadata.resource_version = Some("10".into()); // unchanged object
            list.items.push(crate::test_util::cm("ns", "changed", "15"));
            list
        }));
    let inf = informer(&script, Duration::ZERO, mode);
    let rec = Arc::new(Recorder::default());
    inf.add_event_handler(Arc::clone(&rec)).unwrap();
    inf.start();
    settle(5).await;
    let mut after_relist = rec.take().split_off(3);
    after_relist.sort();
    assert_eq!(
        after_relist,
        [
            "add new:20",
            "delete gone:10 (tombstone)",
            "update changed:10->15"
        ]
    );
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn late_handler_first_gets_every_cached_object(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a", "b"], "10", None)).watch(Ok(vec![]));
    let inf = informer(&script, Duration::ZERO, mode);
    inf.start();
    settle(1).await;
    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    settle(1).await;
    let mut calls = rec.take();
    calls.sort();
    assert_eq!(calls, ["add a:10 (initial)", "add b:10 (initial)"]);
    assert!(reg.has_synced());
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn resync_reaches_only_handlers_that_asked_for_it(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a"], "10", None)).watch(Ok(vec![]));
    let inf = informer(&script, Duration::from_secs(10), mode);
    let resyncing = Arc::new(Recorder::default());
    let quiet = Arc::new(Recorder::default());
    inf.add_event_handler(Arc::clone(&resyncing)).unwrap();
    inf.add_event_handler_with_resync_period(Arc::clone(&quiet), Duration::ZERO)
        .unwrap();
    inf.start();
    settle(25).await;
    assert_eq!(
        resyncing.take(),
        ["add a:10 (initial)", "resync a:10", "resync a:10"]
    );
    assert_eq!(quiet.take(), ["add a:10 (initial)"]);
    assert_eq!(script.calls().len(), 2, "a resync is not a relist");
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn removed_handler_is_not_notified(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a"], "10", None)).watch(Ok(vec![Step::Event(kube_core::WatchEvent::Bookmark(
        serde_json::from_value(serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "11"}}))
            .unwrap(),
    ))]));
    let inf = informer(&script, Duration::ZERO, mode);
    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    assert!(inf.remove_event_handler(&reg));
    assert!(!inf.remove_event_handler(&reg));
    inf.start();
    settle(1).await;
    assert!(rec.take().is_empty());
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn wait_for_cache_sync_rules(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a"], "10", None)).watch(Ok(vec![]));
    let ready = informer(&script, Duration::ZERO, mode);
    let stuck = informer(&Arc::new(Script::default()), Duration::ZERO, mode); // its list never answers
    let never = informer(&Arc::new(Script::default()), Duration::ZERO, mode);

    let err = wait_for_cache_sync(Duration::from_secs(1), &[&ready, &never])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotStarted { .. }), "{err}");

    ready.start();
    stuck.start();
    wait_for_cache_sync(Duration::from_secs(5), &[&ready])
        .await
        .unwrap();
    let err = wait_for_cache_sync(Duration::from_secs(5), &[&ready, &stuck])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::SyncTimeout { pending, .. } if pending == &["ConfigMap"]),
        "{err}"
    );
    ready.shutdown();
    stuck.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn wait_for_cache_sync_on_a_registration_of_a_never_started_informer_says_so(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a"], "10", None)).watch(Ok(vec![]));
    let inf = informer(&script, Duration::ZERO, mode);
    let reg = inf.add_event_handler(Recorder::default()).unwrap();
    let err = wait_for_cache_sync(Duration::from_secs(5), &[&reg])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotStarted { name } if name == "ConfigMap (handler registration)"),
        "{err}"
    );

    inf.start();
    wait_for_cache_sync(Duration::from_secs(5), &[&reg])
        .await
        .unwrap();
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn shutdown_stops_run_and_rejects_new_handlers(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a"], "10", None)).watch(Ok(vec![]));
    let inf = informer(&script, Duration::ZERO, mode);
    let running = tokio::spawn({
        let inf = inf.clone();
        async move { inf.run().await }
    });
    settle(1).await;
    inf.shutdown();
    tokio::time::timeout(Duration::from_secs(1), running)
        .await
        .expect("run returned")
        .unwrap();
    assert!(matches!(
        inf.add_event_handler(Arc::new(Recorder::default())),
        Err(Error::ShutDown { .. })
    ));
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn watch_error_handler_option_and_added_indexers_apply(mode) {
    let script = Arc::new(Script::default());
    script
        .list(Err(err(ListWatchErrorKind::Other)))
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![]));
    let errors = Arc::new(StdMutex::new(0));
    let seen = Arc::clone(&errors);
    let options = InformerOptions {
        streaming_list: false,
        watch_error_handler: Some(Arc::new(move |_: &crate::ListWatchError| {
            *seen.lock().unwrap() += 1
        })),
        transform: Some(Arc::new(crate::strip_managed_fields)),
        store_mode: mode,
        ..InformerOptions::default()
    };
    let by_name: crate::IndexFn<ConfigMap> =
        Arc::new(|o: &ConfigMap| o.metadata.name.iter().cloned().collect());
    let inf = SharedIndexInformer::new(Arc::clone(&script), options);
    inf.add_indexers(Indexers::from([("name".to_owned(), by_name)]))
        .unwrap();
    inf.start();
    settle(5).await;
    assert_eq!(*errors.lock().unwrap(), 1);
    assert_eq!(inf.lister().by_index("name", "a").len(), 1);
    inf.shutdown();
}
}

fn index_by(
    f: impl Fn(&ConfigMap) -> Vec<String> + Send + Sync + 'static,
) -> crate::IndexFn<ConfigMap> {
    Arc::new(f)
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn add_indexers_with_a_taken_name_is_an_error_and_loses_nothing(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a"], "10", None)).watch(Ok(vec![]));
    let inf = informer(&script, Duration::ZERO, mode);
    let by_name = index_by(|o| o.metadata.name.iter().cloned().collect());
    inf.add_indexers(Indexers::from([("name".to_owned(), by_name)]))
        .unwrap();
    let clashing = Indexers::from([
        ("zone".to_owned(), index_by(|_| vec!["z".to_owned()])),
        (crate::NAMESPACE_INDEX.to_owned(), index_by(|_| vec![])),
        ("name".to_owned(), index_by(|_| vec![])),
    ]);
    let err = inf.add_indexers(clashing).unwrap_err();
    assert!(
        matches!(&err, Error::IndexerConflict { name } if name == "name"),
        "first taken name in sorted order: {err}"
    );
    inf.start();
    settle(1).await;
    assert_eq!(inf.lister().by_index("name", "a").len(), 1, "kept");
    assert_eq!(
        inf.lister().by_index(crate::NAMESPACE_INDEX, "ns").len(),
        1,
        "kept"
    );
    assert!(
        matches!(
            inf.indexer().by_index("zone", "z"),
            Err(Error::IndexNotFound { .. })
        ),
        "nothing of the failed call was added"
    );
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn panics_in_transform_index_fn_and_handler_are_counted_and_the_informer_keeps_running(mode) {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a", "bad-transform", "bad-index"], "10", None))
        .watch(Ok(vec![added("bad-handler", "11"), added("b", "12")]));
    let options = InformerOptions {
        transform: Some(Arc::new(|o: ConfigMap| {
            assert_ne!(name(&o), "bad-transform", "transform bug");
            o
        })),
        streaming_list: false,
        store_mode: mode,
        ..InformerOptions::default()
    };
    let inf = SharedIndexInformer::new(Arc::clone(&script), options);
    let by_name = index_by(|o| {
        assert_ne!(name(o), "bad-index", "index bug");
        vec![name(o).to_owned()]
    });
    inf.add_indexers(Indexers::from([("name".to_owned(), by_name)]))
        .unwrap();
    let rec = Arc::new(Recorder::default());
    inf.add_event_handler(Arc::clone(&rec)).unwrap();
    let panicky = crate::HandlerFns::new().on_add(|o: &Arc<ConfigMap>, _| {
        assert_ne!(name(o), "bad-handler", "handler bug");
    });
    inf.add_event_handler(panicky).unwrap();
    inf.start();
    settle(2).await;
    wait_for_cache_sync(Duration::from_secs(1), &[&inf])
        .await
        .unwrap();
    assert_eq!(
        rec.take(),
        [
            "add a:10 (initial)",
            "add bad-index:10 (initial)",
            "add bad-handler:11",
            "add b:12"
        ],
        "only the object whose transform panicked is skipped"
    );
    assert!(
        inf.lister().get(Some("ns"), "bad-index").is_some(),
        "cached"
    );
    assert!(
        inf.lister().by_index("name", "bad-index").is_empty(),
        "but not indexed"
    );
    assert_eq!(
        inf.lister().by_index("name", "b").len(),
        1,
        "later objects indexed"
    );
    let stats = inf.stats();
    assert_eq!(
        (
            stats.transform_panics,
            stats.index_panics,
            stats.handler_panics
        ),
        (1, 1, 1)
    );
    assert!(stats.any_panics());
    inf.shutdown();
}
}

per_store_mode! {
#[tokio::test(start_paused = true)]
async fn shutdown_and_wait_leaves_no_task_behind(mode) {
    let alive = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let before = alive();
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![added("b", "11")]));
    let inf = informer(&script, Duration::from_secs(30), mode); // a resync timer too
    let rec = Arc::new(Recorder::default());
    let registrations = [
        inf.add_event_handler(Arc::clone(&rec)).unwrap(),
        inf.add_event_handler(Arc::clone(&rec)).unwrap(),
    ];
    inf.start();
    wait_for_cache_sync(
        Duration::from_secs(5),
        &[&inf, &registrations[0], &registrations[1]],
    )
    .await
    .unwrap();
    // process loop, reflector, resync timer, two handlers
    assert_eq!(alive(), before + 5);
    inf.shutdown_and_wait(Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        alive(),
        before,
        "every task ended before shutdown_and_wait returned"
    );
    assert_eq!(
        Arc::strong_count(&rec),
        1,
        "the handler tasks dropped their handler"
    );
    assert_eq!(
        Arc::strong_count(&script),
        1,
        "the reflector dropped its ListWatch"
    );
}
}

/// Blocks in `on_add` until told to go on: a handler stuck in synchronous code.
struct Stuck {
    release: StdMutex<std::sync::mpsc::Receiver<()>>,
    calls: std::sync::atomic::AtomicUsize,
}

impl EventHandler<ConfigMap> for Stuck {
    fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _ = self.release.lock().unwrap().recv();
    }
}

// Real time: a handler blocked in synchronous code blocks its worker thread, so this needs a
// second thread, and paused time cannot auto-advance while a thread is blocked.
per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_and_wait_aborts_a_handler_stuck_past_the_bound(mode) {
    let script = Arc::new(Script::default());
    script.list(page(&["a", "b"], "10", None)).watch(Ok(vec![]));
    let inf = informer(&script, Duration::ZERO, mode);
    let (release, blocked) = std::sync::mpsc::channel();
    let stuck = Arc::new(Stuck {
        release: StdMutex::new(blocked),
        calls: std::sync::atomic::AtomicUsize::new(0),
    });
    inf.add_event_handler(Arc::clone(&stuck)).unwrap();
    inf.start();
    while stuck.calls.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let err = inf
        .shutdown_and_wait(Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShutdownTimeout { tasks, .. } if tasks == &["handler #0"]),
        "{err}"
    );
    release.send(()).unwrap();
    for _ in 0..500 {
        if Arc::strong_count(&stuck) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        Arc::strong_count(&stuck),
        1,
        "the aborted task ended once the handler returned"
    );
    assert_eq!(
        stuck.calls.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "no notification after the abort"
    );
}
}

/// A ConfigMap with a managedFields entry, as a server that applied it would send it.
fn managed(name: &str, rv: &str) -> ConfigMap {
    let mut obj = crate::test_util::cm("ns", name, rv);
    obj.metadata.managed_fields = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            ..Default::default()
        },
    ]);
    obj
}

#[tokio::test(start_paused = true)]
async fn a_byte_backed_cache_stores_the_transformed_object() {
    let script = Arc::new(Script::default());
    let mut list = page(&[], "10", None).unwrap();
    list.items = vec![managed("a", "10")];
    script
        .list(Ok(list))
        .watch(Ok(vec![Step::Event(kube_core::WatchEvent::Added(
            managed("b", "11"),
        ))]));
    let options = InformerOptions {
        streaming_list: false,
        transform: Some(Arc::new(crate::strip_managed_fields)),
        store_mode: StoreMode::Bytes { decoded_cache: 0 },
        ..InformerOptions::default()
    };
    let inf = SharedIndexInformer::new(Arc::clone(&script), options);
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    inf.add_event_handler(
        crate::HandlerFns::new().on_add(move |o: &Arc<ConfigMap>, _| {
            sink.lock().unwrap().push(o.metadata.managed_fields.clone());
        }),
    )
    .unwrap();
    inf.start();
    wait_for_cache_sync(Duration::from_secs(5), &[&inf])
        .await
        .unwrap();
    settle(1).await;
    assert_eq!(
        *seen.lock().unwrap(),
        [None, None],
        "handlers see the transformed object"
    );
    let entries = inf.indexer().entries_where(|_, _| true);
    assert_eq!(entries.len(), 2);
    for (key, stored) in entries {
        assert!(
            matches!(stored, crate::stored::Stored::Encoded(_)),
            "{key} kept as bytes"
        );
        let read = inf.lister().get_by_key(key.as_str()).unwrap();
        assert_eq!(
            read.metadata.managed_fields, None,
            "{key}: the bytes are of the transformed object"
        );
    }
    inf.shutdown();
}
