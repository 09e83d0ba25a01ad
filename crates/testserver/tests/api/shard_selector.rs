//! KEP-5866 `shardSelector` on lists, watches and delete-collections (`ServerOptions::
//! sharded_list_and_watch`), and its absence: a default server ignores the parameter, as a v1.36
//! server without the alpha `ShardedListAndWatch` gate does (checked on v1.36.2: a list with a
//! valid or a garbage `shardSelector` returns every object and no `shardInfo`).

use std::collections::BTreeSet;
use std::hash::Hasher;

use crate::common::*;
use kubegen_testserver::ServerOptions;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

const LOWER: &str = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const UPPER: &str = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

fn with_selector(path: &str, selector: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    let encoded = utf8_percent_encode(selector, NON_ALPHANUMERIC);
    format!("{path}{sep}shardSelector={encoded}")
}

fn uid_hash(object: &Value) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(object["metadata"]["uid"].as_str().unwrap().as_bytes());
    hasher.finish()
}

async fn seeded(sharded: bool) -> Harness {
    let mut options = ServerOptions::default();
    options.sharded_list_and_watch = sharded;
    options.controller_manager = false;
    let h = start_with(options).await;
    for i in 0..24 {
        let cm = configmap(&format!("cm-{i:02}"), json!({}));
        assert_eq!(h.http.post(CM, cm).await.code, 201);
    }
    h
}

#[tokio::test]
async fn a_server_without_the_gate_ignores_the_parameter() {
    let h = seeded(false).await;
    for selector in [LOWER, "garbage(("] {
        let list = h.http.get(&with_selector(CM, selector)).await;
        assert_eq!(list.code, 200);
        assert_eq!(names(&list.body).len(), 24);
        assert_eq!(list.body["metadata"].get("shardInfo"), None);
    }
}

#[tokio::test]
async fn two_halves_partition_the_list_by_uid_hash() {
    let h = seeded(true).await;
    let mut seen = BTreeSet::new();
    for (selector, upper) in [(LOWER, false), (UPPER, true)] {
        let list = h.http.get(&with_selector(CM, selector)).await;
        assert_eq!(list.code, 200, "{}", list.body);
        assert_eq!(
            list.body["metadata"]["shardInfo"],
            json!({"selector": selector})
        );
        for item in list.body["items"].as_array().unwrap() {
            assert_eq!(uid_hash(item) >= 1 << 63, upper);
            assert!(seen.insert(item["metadata"]["name"].as_str().unwrap().to_owned()));
        }
    }
    assert_eq!(seen.len(), 24, "every object is in exactly one half");
    let unsharded = h.http.get(CM).await;
    assert_eq!(unsharded.body["metadata"].get("shardInfo"), None);
}

#[tokio::test]
async fn the_echoed_selector_is_canonical_and_an_empty_parameter_is_no_selector() {
    let h = seeded(true).await;
    let raw = "shardRange(object.metadata.uid,\"0x0000000000000000\",'0x10000000000000000')";
    let list = h.http.get(&with_selector(CM, raw)).await;
    assert_eq!(names(&list.body).len(), 24);
    assert_eq!(
        list.body["metadata"]["shardInfo"]["selector"],
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
    );
    let empty = h.http.get(&format!("{CM}?shardSelector=")).await;
    assert_eq!(names(&empty.body).len(), 24);
    assert_eq!(empty.body["metadata"].get("shardInfo"), None);
}

#[tokio::test]
async fn a_bad_selector_is_a_500_without_reason_on_list_and_watch() {
    let h = seeded(true).await;
    let bad = "shardRange(object.metadata.uid, '0x0')";
    let want = "invalid shard selector: shardRange() requires exactly 3 arguments, got 2";
    for path in [CM.to_owned(), format!("{CM}?watch=true")] {
        let reply = h.http.get(&with_selector(&path, bad)).await;
        assert_status(&reply, 500, "");
        assert_eq!(reply.body["message"], want);
    }
    // Selector syntax is checked after the other options, as the store parses it last.
    let reply = h
        .http
        .get(&with_selector(&format!("{CM}?labelSelector=a+in+b"), bad))
        .await;
    assert_status(&reply, 400, "BadRequest");
}

#[tokio::test]
async fn a_sharded_watch_sees_only_its_range() {
    let h = seeded(true).await;
    let current = h.http.get(CM).await;
    let rv = current.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("{CM}?watch=true&resourceVersion={rv}");
    let mut lower = h.http.watch(&with_selector(&path, LOWER)).await;
    let mut created = Vec::new();
    for i in 0..8 {
        let reply = h
            .http
            .post(CM, configmap(&format!("new-{i}"), json!({})))
            .await;
        created.push(reply.body);
    }
    let expected: Vec<String> = created
        .iter()
        .filter(|o| uid_hash(o) < 1 << 63)
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    for name in &expected {
        let event = lower.next().await.unwrap();
        assert_eq!(summary(&event), ("ADDED".to_owned(), name.clone()));
    }
    lower
        .assert_quiet(std::time::Duration::from_millis(200))
        .await;
}

#[tokio::test]
async fn delete_collection_deletes_only_the_range() {
    let h = seeded(true).await;
    let upper = h.http.get(&with_selector(CM, UPPER)).await;
    let keep = names(&upper.body);
    let reply = h.http.delete(&with_selector(CM, LOWER)).await;
    assert_eq!(reply.code, 200);
    assert_eq!(names(&h.http.get(CM).await.body), keep);
}
