use std::sync::Mutex as StdMutex;

use futures_util::FutureExt;
use k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::{
    delta::{DeletedObject, Delta},
    indexer::Indexer,
    key::ObjectKey,
    scripted::{Script, Step, added, bookmark, deleted, err, modified, page, status_410},
    test_util::rv,
};

fn config(streaming: bool) -> ReflectorConfig<ConfigMap> {
    ReflectorConfig {
        name: "configmaps".into(),
        page_size: None,
        streaming_list: streaming,
        streaming_timeout: Duration::from_secs(10),
        transform: None,
        on_watch_error: None,
        panics: Arc::default(),
        metrics: crate::metrics::ReflectorMetrics::default(),
    }
}

/// Runs a reflector over `script` for `secs` of virtual time, with a consumer that pops the
/// FIFO into an indexer (as the informer would) and logs `key Type:rv` per delta.
async fn run(
    script: &Arc<Script>,
    config: ReflectorConfig<ConfigMap>,
    secs: u64,
) -> (Vec<String>, Indexer<ConfigMap>) {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new(indexer.clone()));
    let log = Arc::new(StdMutex::new(Vec::new()));
    let consumer = {
        let (fifo, indexer, log) = (Arc::clone(&fifo), indexer.clone(), Arc::clone(&log));
        tokio::spawn(async move {
            while let Some(()) = fifo
                .pop(|key, deltas, _| {
                    for d in deltas {
                        let tomb = matches!(d, Delta::Deleted(DeletedObject::Tombstone { .. }));
                        log.lock().unwrap().push(format!(
                            "{key} {}{}:{}",
                            d.type_name(),
                            if tomb { "~" } else { "" },
                            rv(d.object())
                        ));
                        match d {
                            Delta::Deleted(_) => drop(indexer.remove(key.as_str())),
                            other => drop(indexer.insert(key.clone(), Arc::clone(other.object()))),
                        }
                    }
                })
                .await
            {}
        })
    };
    let (stop, stopped) = watch::channel(false);
    let reflector =
        tokio::spawn(Reflector::new(Arc::clone(script), Arc::clone(&fifo), config).run(stopped));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.send_replace(true);
    reflector.await.unwrap();
    fifo.close();
    consumer.await.unwrap();
    fifo.check_invariants();
    let log = log.lock().unwrap().clone();
    (log, indexer)
}

#[test]
fn relist_resource_version_table() {
    let fifo = Arc::new(DeltaFifo::new(Indexer::new()));
    let mut r = Reflector::new(Arc::new(Script::default()), fifo, config(false));
    // (last synced, unavailable) -> list resourceVersion
    let table = [
        (("", false), "0"),
        (("42", false), "42"),
        (("42", true), ""),
        (("", true), ""),
    ];
    for ((last, unavailable), expected) in table {
        r.last_synced_rv = last.into();
        r.last_rv_unavailable = unavailable;
        assert_eq!(
            r.relist_resource_version(),
            expected,
            "last={last:?} unavailable={unavailable}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn resource_versions_advance_and_never_go_back() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![
            added("b", "11"),
            bookmark("15", false),
            Step::Fail(err(ListWatchErrorKind::Other)),
        ]))
        .list(page(&["a", "b"], "20", None))
        .watch(Ok(vec![status_410()]))
        .list(page(&["a"], "30", None))
        .watch(Ok(vec![]));
    run(&script, config(false), 60).await;
    assert_eq!(
        script.calls(),
        [
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="10""#,
            r#"list rv="15" limit=None continue=None"#, // other error: back off, relist at last RV
            r#"watch rv="20""#,
            r#"list rv="20" limit=None continue=None"#, // watch 410: the watch cache serves "20"
            r#"watch rv="30""#,
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn expired_or_too_large_list_retries_with_consistent_read() {
    for kind in [
        ListWatchErrorKind::Expired,
        ListWatchErrorKind::ResourceVersionTooLarge,
    ] {
        let script = Arc::new(Script::default());
        script.list(Err(err(kind))).list(page(&[], "5", None));
        run(&script, config(false), 10).await;
        assert_eq!(
            script.calls()[1],
            r#"list rv="" limit=Some(500) continue=None"#,
            "{kind:?}"
        );
        // At once, as client-go does: no backoff for a version the server does not have.
        let times = script.times();
        assert_eq!(times[1], times[0], "{kind:?}");
    }
}

#[test]
fn list_limit_table() {
    let fifo = Arc::new(DeltaFifo::new(Indexer::new()));
    let mut r = Reflector::new(Arc::new(Script::default()), fifo, config(false));
    // (explicit page size, first list was paginated, list resourceVersion) -> limit
    let table = [
        ((None, false, "0"), Some(500)), // the watch cache ignores it; etcd pages
        ((None, false, ""), Some(500)),  // consistent read from etcd
        ((None, false, "42"), None),     // "not older than": served by the watch cache
        ((None, true, "42"), Some(500)), // no watch cache for this resource: keep paging
        ((Some(100), false, "0"), Some(100)),
        ((Some(100), false, "42"), Some(100)), // explicit: always
    ];
    for ((explicit, paginated, version), expected) in table {
        r.config.page_size = explicit;
        r.paginated_result = paginated;
        assert_eq!(
            r.list_limit(version),
            expected,
            "explicit={explicit:?} paginated={paginated} rv={version:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn relist_at_saved_version_sends_no_limit_unless_first_list_was_paged() {
    // Unpaged first list: the relist at "12" leaves `limit` out, so the watch cache serves it
    // instead of an exact read from etcd that 410s once "12" is compacted.
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![
            added("b", "12"),
            Step::Fail(err(ListWatchErrorKind::Other)),
        ]))
        .list(page(&["a", "b"], "13", None));
    run(&script, config(false), 60).await;
    assert_eq!(
        script.calls(),
        [
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="10""#,
            r#"list rv="12" limit=None continue=None"#,
            r#"watch rv="13""#,
        ]
    );

    // Paged first list: no watch cache for this resource, every list is served by etcd: page.
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", Some("c1")))
        .list(page(&["b"], "10", None))
        .watch(Ok(vec![
            added("c", "12"),
            Step::Fail(err(ListWatchErrorKind::Other)),
        ]))
        .list(page(&["a", "b", "c"], "13", None));
    run(&script, config(false), 60).await;
    assert_eq!(
        script.calls()[3],
        r#"list rv="12" limit=Some(500) continue=None"#
    );
}

#[tokio::test(start_paused = true)]
async fn explicit_page_size_is_sent_with_every_list() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![
            added("b", "12"),
            Step::Fail(err(ListWatchErrorKind::Other)),
        ]))
        .list(page(&["a", "b"], "13", None));
    let mut config = config(false);
    config.page_size = Some(100);
    run(&script, config, 60).await;
    assert_eq!(
        script.calls()[2],
        r#"list rv="12" limit=Some(100) continue=None"#
    );
}

#[tokio::test(start_paused = true)]
async fn paged_list_follows_continue_tokens_into_one_replace() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a", "b"], "7", Some("c1")))
        .list(page(&["c"], "7", None));
    let (log, _) = run(&script, config(false), 1).await;
    assert_eq!(
        script.calls(),
        [
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"list rv="" limit=Some(500) continue=Some("c1")"#,
            r#"watch rv="7""#,
        ]
    );
    assert_eq!(
        log,
        ["ns/a Replaced:7", "ns/b Replaced:7", "ns/c Replaced:7"]
    );
}

#[tokio::test(start_paused = true)]
async fn expired_continue_token_falls_back_to_full_list() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "7", Some("c1")))
        .list(Err(err(ListWatchErrorKind::Expired)))
        .list(page(&["a", "b"], "9", None));
    let (log, _) = run(&script, config(false), 1).await;
    assert_eq!(script.calls()[2], r#"list rv="0" limit=None continue=None"#);
    assert_eq!(
        log,
        ["ns/a Replaced:9", "ns/b Replaced:9"],
        "page-1 items are not kept"
    );
}

#[tokio::test(start_paused = true)]
async fn watch_410_relists_at_last_synced_rv_and_emits_tombstones() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a", "b"], "10", None))
        .watch(Ok(vec![added("c", "11"), status_410()]))
        .list(page(&["a"], "20", None)) // b and c were deleted while we were not watching
        .watch(Ok(vec![]));
    let (log, indexer) = run(&script, config(false), 5).await;
    // client-go's rule: the events after "11" are gone, the state "not older than 11" is not;
    // no limit, so the API server's watch cache answers instead of etcd.
    assert_eq!(
        script.calls()[2],
        r#"list rv="11" limit=None continue=None"#
    );
    let times = script.times();
    assert_eq!(times[2], times[1], "relist at once");
    let mut log = log;
    log.sort();
    assert_eq!(
        log,
        [
            "ns/a Replaced:10",
            "ns/a Replaced:20",
            "ns/b Deleted~:10",
            "ns/b Replaced:10",
            "ns/c Added:11",
            "ns/c Deleted~:11"
        ]
    );
    assert_eq!(indexer.list_keys(), [ObjectKey::from("ns/a")]);
}

#[tokio::test(start_paused = true)]
async fn watch_410_then_list_410_falls_back_to_a_consistent_read() {
    for relist_error in [
        ListWatchErrorKind::Expired,
        ListWatchErrorKind::ResourceVersionTooLarge,
    ] {
        let script = Arc::new(Script::default());
        script
            .list(page(&["a"], "10", None))
            .watch(Ok(vec![bookmark("12", false), status_410()]))
            .list(Err(err(relist_error)))
            .list(page(&["a"], "30", None))
            .watch(Ok(vec![]));
        run(&script, config(false), 5).await;
        assert_eq!(
            script.calls()[2..],
            [
                r#"list rv="12" limit=None continue=None"#,
                r#"list rv="" limit=Some(500) continue=None"#,
                r#"watch rv="30""#,
            ],
            "{relist_error:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn watch_refused_with_410_relists_at_last_synced_rv() {
    // The 410 can also be the answer to opening the watch (an HTTP error, not an ERROR event).
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Err(err(ListWatchErrorKind::Expired)))
        .list(page(&["a"], "20", None))
        .watch(Ok(vec![]));
    run(&script, config(false), 5).await;
    assert_eq!(
        script.calls()[1..],
        [
            r#"watch rv="10""#,
            r#"list rv="10" limit=None continue=None"#,
            r#"watch rv="20""#,
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn clean_close_rewatches_without_relist() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![added("b", "11"), Step::End]))
        .watch(Ok(vec![]));
    run(&script, config(false), 5).await;
    assert_eq!(
        script.calls(),
        [
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="10""#,
            r#"watch rv="11""#
        ]
    );
    let times = script.times();
    assert_eq!(times[2], times[1], "re-watch is immediate");
}

#[tokio::test(start_paused = true)]
async fn broken_watch_stream_rewatches_from_last_rv_without_relist() {
    // The connection resets (or hits its idle timeout) 30 s into the watch: the watch is over,
    // the version it reached is not.
    let script = Arc::new(Script::default());
    let broken = err(ListWatchErrorKind::Interrupted);
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![
            added("b", "11"),
            bookmark("15", false),
            Step::Pause(Duration::from_secs(30)),
            Step::Fail(broken),
        ]))
        .watch(Ok(vec![added("c", "16")]));
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let mut config = config(false);
    let sink = Arc::clone(&seen);
    config.on_watch_error = Some(Arc::new(move |e: &ListWatchError| {
        sink.lock().unwrap().push(e.kind())
    }));
    let (log, _) = run(&script, config, 60).await;
    assert_eq!(
        script.calls(),
        [
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="10""#,
            r#"watch rv="15""#,
        ]
    );
    let t = script.times();
    assert_eq!(
        t[2],
        t[1] + Duration::from_secs(30),
        "re-watch is immediate"
    );
    assert_eq!(*seen.lock().unwrap(), [ListWatchErrorKind::Interrupted]);
    assert_eq!(log, ["ns/a Replaced:10", "ns/b Added:11", "ns/c Added:16"]);
}

#[tokio::test(start_paused = true)]
async fn watch_broken_at_once_backs_off_before_rewatching() {
    let script = Arc::new(Script::default());
    script
        .list(page(&[], "10", None))
        .watch(Ok(vec![Step::Fail(err(ListWatchErrorKind::Interrupted))]))
        .watch(Ok(vec![]));
    run(&script, config(false), 10).await;
    assert_eq!(
        script.calls()[1..],
        [r#"watch rv="10""#, r#"watch rv="10""#]
    );
    let t = script.times();
    assert!(t[2] - t[1] >= Duration::from_millis(800), "no spinning");
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_backs_off_and_rewatches_at_same_rv() {
    let script = Arc::new(Script::default());
    let throttled =
        err(ListWatchErrorKind::TooManyRequests).with_retry_after(Some(Duration::from_secs(5)));
    script
        .list(page(&[], "10", None))
        .watch(Err(throttled))
        .watch(Err(err(ListWatchErrorKind::Unavailable)))
        .watch(Ok(vec![]));
    run(&script, config(false), 60).await;
    assert_eq!(
        script.calls()[1..],
        [r#"watch rv="10""#, r#"watch rv="10""#, r#"watch rv="10""#]
    );
    let t = script.times();
    assert!(
        t[2] - t[1] >= Duration::from_secs(5),
        "Retry-After honoured: {:?}",
        t[2] - t[1]
    );
    let second = t[3] - t[2];
    assert!(
        second >= Duration::from_millis(1600) && second <= Duration::from_millis(3200),
        "doubled: {second:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn watch_closing_at_once_backs_off() {
    let script = Arc::new(Script::default());
    script
        .list(page(&[], "10", None))
        .watch(Ok(vec![Step::End]))
        .watch(Ok(vec![]));
    run(&script, config(false), 10).await;
    let t = script.times();
    assert_eq!(script.calls().len(), 3);
    assert!(t[2] - t[1] >= Duration::from_millis(800));
}

#[tokio::test(start_paused = true)]
async fn silent_watch_is_abandoned_after_timeout_plus_margin() {
    // One silent watch; the next watch call finds nothing scripted and hangs, so exactly two
    // watches are made however short the random timeouts fall.
    let script = Arc::new(Script::default());
    script.list(page(&[], "10", None)).watch(Ok(vec![]));
    run(&script, config(false), 700).await;
    assert_eq!(
        script.calls()[1..],
        [r#"watch rv="10""#, r#"watch rv="10""#]
    );
    let t = script.times();
    let timeout = Duration::from_secs(script.watch_timeouts()[0].into());
    assert_eq!(t[2] - t[1], timeout + WATCH_DEADLINE_MARGIN);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_replaces_at_initial_events_end_and_keeps_watching() {
    let script = Arc::new(Script::default());
    script.watch(Ok(vec![
        added("a", "3"),
        added("b", "4"),
        bookmark("9", true),
        added("c", "10"),
    ]));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(script.calls(), [r#"watch rv="" initial-events"#]);
    assert_eq!(log, ["ns/a Replaced:3", "ns/b Replaced:4", "ns/c Added:10"]);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_falls_back_to_list_when_server_ignores_it() {
    // An old server ignores sendInitialEvents: it sends the Added events but no end bookmark.
    let script = Arc::new(Script::default());
    script
        .watch(Ok(vec![added("a", "3")]))
        .list(page(&["a"], "5", None))
        .watch(Ok(vec![Step::Pause(Duration::from_secs(5)), status_410()]))
        .list(page(&["a"], "7", None));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(
        script.calls(),
        [
            r#"watch rv="" initial-events"#,
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="5""#,
            r#"list rv="5" limit=None continue=None"#, // streaming stays off for good
            r#"watch rv="7""#,
        ]
    );
    assert_eq!(log, ["ns/a Replaced:5", "ns/a Replaced:7"]);
    let t = script.times();
    assert_eq!(
        t[1] - t[0],
        Duration::from_secs(10),
        "waited streaming_timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn streaming_list_is_not_tried_on_a_server_that_predates_it() {
    // A 1.15 server would ignore sendInitialEvents and never end the initial phase: it gets a
    // paged list at once, and keeps getting them.
    let script = Arc::new(Script::default());
    script
        .serves_streaming(false)
        .list(page(&["a"], "5", None))
        .watch(Ok(vec![status_410()]))
        .list(page(&["a"], "7", None));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(
        script.calls(),
        [
            "version",
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="5""#,
            r#"list rv="5" limit=None continue=None"#,
            r#"watch rv="7""#,
        ]
    );
    assert_eq!(log, ["ns/a Replaced:5", "ns/a Replaced:7"]);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_on_a_server_that_serves_it_waits_for_the_end_bookmark() {
    // A large initial set over a slow link: the phase outlasts streaming_timeout, and the
    // reflector still waits for the bookmark rather than throwing the streamed objects away.
    let script = Arc::new(Script::default());
    script.serves_streaming(true).watch(Ok(vec![
        added("a", "3"),
        Step::Pause(Duration::from_secs(30)),
        added("b", "4"),
        bookmark("9", true),
    ]));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(script.calls(), ["version", r#"watch rv="" initial-events"#]);
    assert_eq!(log, ["ns/a Replaced:3", "ns/b Replaced:4"]);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_falls_back_at_its_deadline_although_events_keep_coming() {
    // A pre-1.27 server: the current state as Added events, then live events every 4 s and
    // never the end bookmark. No gap reaches streaming_timeout (10 s); the phase as a whole does.
    let script = Arc::new(Script::default());
    let mut live = vec![added("a", "3")];
    for (i, name) in ["b", "c", "d", "e", "f"].iter().enumerate() {
        live.push(Step::Pause(Duration::from_secs(4)));
        live.push(added(name, &(4 + i).to_string()));
    }
    script
        .watch(Ok(live))
        .list(page(&["a", "b", "c"], "6", None))
        .watch(Ok(vec![]));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(
        script.calls(),
        [
            r#"watch rv="" initial-events"#,
            r#"list rv="0" limit=Some(500) continue=None"#,
            r#"watch rv="6""#
        ]
    );
    let t = script.times();
    assert_eq!(t[1] - t[0], Duration::from_secs(10), "one deadline");
    assert_eq!(
        log,
        ["ns/a Replaced:6", "ns/b Replaced:6", "ns/c Replaced:6"],
        "nothing of the abandoned stream reaches the queue"
    );
}

#[tokio::test(start_paused = true)]
async fn streaming_list_replaces_each_key_once_with_its_latest_object() {
    let script = Arc::new(Script::default());
    script.watch(Ok(vec![
        added("a", "3"),
        added("b", "4"),
        modified("a", "5"), // changed during the initial phase
        deleted("b", "6"),
        added("c", "7"),
        bookmark("9", true),
    ]));
    let (log, indexer) = run(&script, config(true), 60).await;
    assert_eq!(log, ["ns/a Replaced:5", "ns/c Replaced:7"]);
    let mut keys = indexer.list_keys();
    keys.sort();
    assert_eq!(keys, [ObjectKey::from("ns/a"), ObjectKey::from("ns/c")]);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_rejected_falls_back_at_once() {
    let script = Arc::new(Script::default());
    script
        .watch(Err(err(ListWatchErrorKind::Invalid)))
        .list(page(&[], "5", None))
        .watch(Ok(vec![Step::Fail(err(ListWatchErrorKind::Other))]))
        .list(page(&[], "6", None));
    run(&script, config(true), 60).await;
    let calls = script.calls();
    assert_eq!(calls[1], r#"list rv="0" limit=Some(500) continue=None"#);
    assert_eq!(
        calls[3], r#"list rv="5" limit=None continue=None"#,
        "streaming stays off"
    );
}

#[tokio::test(start_paused = true)]
async fn streaming_list_transient_failure_lists_once_and_streams_again_on_the_next_relist() {
    // A 5xx, or a stream that breaks or closes before initial-events-end, is not a server
    // without streaming lists: this relist falls back to a paged list, the next one streams.
    let broken = [
        Err(err(ListWatchErrorKind::Other)),
        Ok(vec![
            added("x", "3"),
            Step::Fail(err(ListWatchErrorKind::Interrupted)),
        ]),
        Ok(vec![added("x", "3"), Step::End]),
    ];
    for first in broken {
        let script = Arc::new(Script::default());
        script
            .watch(first)
            .list(page(&["a"], "5", None))
            .watch(Ok(vec![Step::Pause(Duration::from_secs(5)), status_410()]))
            .watch(Ok(vec![added("b", "8"), bookmark("9", true)]));
        let (log, _) = run(&script, config(true), 60).await;
        assert_eq!(
            script.calls(),
            [
                r#"watch rv="" initial-events"#,
                r#"list rv="0" limit=Some(500) continue=None"#,
                r#"watch rv="5""#,
                r#"watch rv="5" initial-events"#, // at the last synced version
            ]
        );
        assert_eq!(
            log,
            ["ns/a Replaced:5", "ns/b Replaced:8", "ns/a Deleted~:5"]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn streaming_list_throttled_or_refused_backs_off_and_streams_again() {
    let throttled =
        err(ListWatchErrorKind::TooManyRequests).with_retry_after(Some(Duration::from_secs(5)));
    let script = Arc::new(Script::default());
    script
        .watch(Err(throttled))
        .watch(Err(err(ListWatchErrorKind::Unavailable)))
        .watch(Ok(vec![added("a", "3"), bookmark("4", true)]));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(script.calls(), [r#"watch rv="" initial-events"#; 3]);
    let t = script.times();
    assert!(
        t[1] - t[0] >= Duration::from_secs(5),
        "Retry-After honoured"
    );
    assert!(
        t[2] - t[1] >= Duration::from_millis(1600),
        "backoff doubled"
    );
    assert_eq!(log, ["ns/a Replaced:3"]);
}

#[tokio::test(start_paused = true)]
async fn streaming_list_at_an_expired_version_streams_again_from_empty_rv() {
    let script = Arc::new(Script::default());
    script
        .watch(Ok(vec![added("a", "3"), bookmark("9", true), status_410()]))
        .watch(Err(err(ListWatchErrorKind::Expired)))
        .watch(Ok(vec![added("a", "12"), bookmark("15", true)]));
    let (log, _) = run(&script, config(true), 60).await;
    assert_eq!(
        script.calls(),
        [
            r#"watch rv="" initial-events"#,
            r#"watch rv="9" initial-events"#, // watch 410: stream again at the last version
            r#"watch rv="" initial-events"#,  // that answered 410 too: "" at once
        ]
    );
    let t = script.times();
    assert_eq!(
        t[2], t[1],
        "no backoff for a version the server does not have"
    );
    assert_eq!(log, ["ns/a Replaced:3", "ns/a Replaced:12"]);
}

#[tokio::test(start_paused = true)]
async fn panicking_transform_skips_the_object_and_the_reflector_keeps_going() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a", "bad-1", "c"], "1", None))
        .watch(Ok(vec![added("bad-2", "2"), added("d", "3")]));
    let mut config = config(false);
    let panics = Arc::clone(&config.panics);
    config.transform = Some(Arc::new(|o: ConfigMap| {
        let name = o.metadata.name.clone().unwrap_or_default();
        assert!(!name.starts_with("bad"), "cannot transform {name}");
        o
    }));
    let (log, _) = run(&script, config, 5).await;
    assert_eq!(log, ["ns/a Replaced:1", "ns/c Replaced:1", "ns/d Added:3"]);
    assert_eq!(panics.snapshot().transform_panics, 2);
}

#[tokio::test(start_paused = true)]
async fn transform_runs_before_objects_reach_the_queue() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "1", None))
        .watch(Ok(vec![added("b", "2")]));
    let mut config = config(false);
    config.transform = Some(Arc::new(|mut o: ConfigMap| {
        o.metadata.resource_version = Some("transformed".into());
        o
    }));
    let (log, _) = run(&script, config, 1).await;
    assert_eq!(log, ["ns/a Replaced:transformed", "ns/b Added:transformed"]);
}

#[tokio::test(start_paused = true)]
async fn watch_error_hook_sees_every_failure() {
    let script = Arc::new(Script::default());
    script
        .list(Err(err(ListWatchErrorKind::Other)))
        .list(page(&[], "1", None))
        .watch(Err(err(ListWatchErrorKind::TooManyRequests)));
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let mut config = config(false);
    let sink = Arc::clone(&seen);
    config.on_watch_error = Some(Arc::new(move |e: &ListWatchError| {
        sink.lock().unwrap().push(e.kind())
    }));
    run(&script, config, 10).await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ListWatchErrorKind::Other,
            ListWatchErrorKind::TooManyRequests
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn resync_loop_resyncs_only_when_a_handler_is_due() {
    let ticks = Arc::new(StdMutex::new(0));
    let due = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (t, d) = (Arc::clone(&ticks), Arc::clone(&due));
    let task = tokio::spawn(resync_loop(
        Duration::from_secs(10),
        move || d.load(std::sync::atomic::Ordering::SeqCst),
        move || *t.lock().unwrap() += 1,
    ));
    tokio::time::sleep(Duration::from_secs(25)).await;
    assert_eq!(*ticks.lock().unwrap(), 0);
    due.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(*ticks.lock().unwrap(), 2);
    task.abort();
    assert!(
        resync_loop(Duration::ZERO, || true, || ())
            .now_or_never()
            .is_none(),
        "zero period never resyncs"
    );
}
