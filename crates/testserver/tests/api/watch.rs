//! Watch semantics through raw HTTP: starting points, 410, bookmarks, streaming lists, selectors.

use std::time::Duration;

use crate::common::*;
use kubegen_testserver::ServerOptions;
use serde_json::json;

const QUIET: Duration = Duration::from_millis(300);

#[tokio::test]
async fn watch_without_resource_version_starts_with_synthetic_added_events() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    h.http.post(CM, configmap("b", json!({}))).await;
    for query in ["watch=true", "watch=true&resourceVersion=0"] {
        let mut watch = h.http.watch(&format!("{CM}?{query}")).await;
        assert_eq!(
            summary(&watch.next().await.unwrap()),
            ("ADDED".into(), "a".into())
        );
        assert_eq!(
            summary(&watch.next().await.unwrap()),
            ("ADDED".into(), "b".into())
        );
        watch.assert_quiet(QUIET).await;
    }
}

#[tokio::test]
async fn watch_from_a_resource_version_replays_only_later_events() {
    let h = start().await;
    let a = h.http.post(CM, configmap("a", json!({}))).await.body;
    h.http.post(CM, configmap("b", json!({}))).await;
    let mut changed = a.clone();
    changed["data"]["k"] = json!("2");
    h.http.put(&format!("{CM}/a"), changed).await;
    h.http.delete(&format!("{CM}/b")).await;
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={}", rv(&a)))
        .await;
    let events: Vec<_> = [watch.next().await, watch.next().await, watch.next().await]
        .into_iter()
        .map(|e| summary(&e.unwrap()))
        .collect();
    assert_eq!(
        events,
        vec![
            ("ADDED".into(), "b".into()),
            ("MODIFIED".into(), "a".into()),
            ("DELETED".into(), "b".into())
        ]
    );
    watch.assert_quiet(QUIET).await;
}

#[tokio::test]
async fn deleted_events_carry_a_new_resource_version() {
    let h = start().await;
    let a = h.http.post(CM, configmap("a", json!({}))).await.body;
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={}", rv(&a)))
        .await;
    h.http.delete(&format!("{CM}/a")).await;
    let event = watch.next().await.unwrap();
    assert_eq!(event["type"], "DELETED");
    assert!(rv(&event["object"]) > rv(&a));
}

#[tokio::test]
async fn watch_from_a_compacted_resource_version_gets_the_410_error_event() {
    let mut options = ServerOptions::default();
    options.history_size = 2;
    let h = start_with(options).await;
    let first = h.http.post(CM, configmap("a", json!({}))).await.body;
    for name in ["b", "c", "d"] {
        h.http.post(CM, configmap(name, json!({}))).await;
    }
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={}", rv(&first)))
        .await;
    let event = watch.next().await.unwrap();
    assert_eq!(event["type"], "ERROR");
    let status = &event["object"];
    assert_eq!(
        (
            status["kind"].as_str(),
            status["code"].as_u64(),
            status["reason"].as_str()
        ),
        (Some("Status"), Some(410), Some("Expired"))
    );
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("too old resource version: {} (", rv(&first)))
    );
    assert!(
        watch.next().await.is_none(),
        "the stream ends after the error"
    );
}

#[tokio::test]
async fn bookmarks_are_sent_on_demand_only_to_watches_that_allow_them() {
    // The bookmark carries the newest resourceVersion: no controller may write meanwhile (the
    // ServiceAccount controller's first writes can land after `rv0` is read).
    let h = start_without_controllers().await;
    let rv0 = h.server.api().resource_version();
    let mut with = h
        .http
        .watch(&format!(
            "{CM}?watch=1&resourceVersion={rv0}&allowWatchBookmarks=true"
        ))
        .await;
    let mut without = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={rv0}"))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.server.faults().send_bookmarks();
    let bookmark = with.next().await.unwrap();
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
    assert_eq!(bookmark["object"]["apiVersion"], "v1");
    assert_eq!(
        bookmark["object"]["metadata"]["resourceVersion"],
        rv0.to_string()
    );
    without.assert_quiet(QUIET).await;
    h.server.faults().set_bookmarks_enabled(false);
    h.server.faults().send_bookmarks();
    with.assert_quiet(QUIET).await;
}

#[tokio::test]
async fn send_initial_events_streams_state_then_the_initial_events_end_bookmark() {
    // No controller-manager: its writes would move the resourceVersion the bookmark carries.
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = start_with(options).await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let rv_now = h.server.api().resource_version();
    let path = format!(
        "{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    );
    let mut watch = h.http.watch(&path).await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "a".into())
    );
    let end = watch.next().await.unwrap();
    assert_eq!(end["type"], "BOOKMARK");
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(
        end["object"]["metadata"]["resourceVersion"],
        rv_now.to_string()
    );
    h.http.post(CM, configmap("b", json!({}))).await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "b".into())
    );
}

#[tokio::test]
async fn servers_without_streaming_lists_refuse_send_initial_events() {
    let mut options = ServerOptions::default();
    options.streaming_list = false;
    let h = start_with(options).await;
    let path = format!(
        "{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    );
    let refused = h.http.get(&path).await;
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    );
}

#[tokio::test]
async fn objects_leaving_or_entering_a_selector_are_deleted_or_added() {
    let h = start().await;
    let a = h
        .http
        .post(CM, configmap("a", json!({"app": "web"})))
        .await
        .body;
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&labelSelector=app%3Dweb"))
        .await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "a".into())
    );
    let patch = |app: &str| json!({"metadata": {"labels": {"app": app}}});
    let moved = h
        .http
        .patch(
            &format!("{CM}/a"),
            "application/merge-patch+json",
            patch("db"),
        )
        .await
        .body;
    let left = watch.next().await.unwrap();
    assert_eq!(summary(&left), ("DELETED".into(), "a".into()));
    assert_eq!(
        left["object"]["metadata"]["labels"]["app"], "web",
        "the previous state is sent"
    );
    assert_eq!(
        rv(&left["object"]),
        rv(&moved),
        "at the new resourceVersion"
    );
    h.http
        .post(CM, configmap("other", json!({"app": "db"})))
        .await;
    h.http
        .patch(
            &format!("{CM}/a"),
            "application/merge-patch+json",
            patch("web"),
        )
        .await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "a".into())
    );
    let _ = a;
}

#[tokio::test]
async fn namespaced_watches_only_see_their_namespace() {
    let h = start().await;
    h.http
        .post("/api/v1/namespaces", json!({"metadata": {"name": "other"}}))
        .await;
    let rv0 = h.server.api().resource_version();
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={rv0}"))
        .await;
    h.http
        .post(
            "/api/v1/namespaces/other/configmaps",
            configmap("x", json!({})),
        )
        .await;
    h.http.post(CM, configmap("y", json!({}))).await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "y".into())
    );
}

#[tokio::test]
async fn dropped_watches_end_cleanly() {
    let h = start().await;
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion=1"))
        .await;
    // No pause: a watch whose response is in is dropped, whenever its task gets to run.
    h.server.faults().drop_watches();
    assert!(watch.next().await.is_none());
    // New watches work again.
    let mut again = h.http.watch(&format!("{CM}?watch=1")).await;
    h.http.post(CM, configmap("a", json!({}))).await;
    assert_eq!(
        summary(&again.next().await.unwrap()),
        ("ADDED".into(), "a".into())
    );
}

#[tokio::test]
async fn stalled_watches_stay_open_and_deliver_after_resuming() {
    let h = start().await;
    let rv0 = h.server.api().resource_version();
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={rv0}"))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.server.faults().stall_watches(true);
    h.http.post(CM, configmap("a", json!({}))).await;
    watch.assert_quiet(QUIET).await;
    h.server.faults().stall_watches(false);
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "a".into())
    );
}

#[tokio::test]
async fn watch_on_a_named_object_sees_only_that_object() {
    let h = start().await;
    let rv0 = h.server.api().resource_version();
    let mut watch = h
        .http
        .watch(&format!(
            "/api/v1/watch/namespaces/default/configmaps/b?resourceVersion={rv0}"
        ))
        .await;
    h.http.post(CM, configmap("a", json!({}))).await;
    h.http.post(CM, configmap("b", json!({}))).await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "b".into())
    );
}

#[tokio::test]
async fn watch_query_on_one_object_is_a_get_and_the_watch_path_takes_any_name() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let reply = h.http.get(&format!("{CM}/a?watch=1")).await;
    assert_eq!(
        (reply.code, &reply.body["kind"]),
        (200, &json!("ConfigMap"))
    );
    let reply = h.http.get(&format!("{CM}/b?watch=1")).await;
    assert_status(&reply, 404, "NotFound");
    // A name holding the selector syntax's ',' and '=' opens a (quiet) watch, not a 400.
    let mut watch = h
        .http
        .watch("/api/v1/watch/namespaces/default/configmaps/a,b=c")
        .await;
    watch.assert_quiet(Duration::from_millis(100)).await;
}
