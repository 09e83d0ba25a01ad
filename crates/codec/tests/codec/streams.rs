//! The streaming decoders against real list bodies and watch streams (`tests/fixtures/streams`,
//! captured from kube-apiserver 1.15 and 1.36 with `Accept: application/vnd.kubernetes.protobuf`
//! and, for the same request, `application/json`): fed in chunks of every size, they give the same
//! items, list metadata and events as the server's JSON.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kubegen_codec::{ListDecoder, ProtoKind, WatchFrames};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::real_bodies::{as_from_go_1_15, fixture};

fn comparable(version: &str, value: &Value) -> Value {
    if version == "1.15" {
        as_from_go_1_15(value)
    } else {
        value.clone()
    }
}

/// Each of `items` as [`comparable`].
fn comparable_items(version: &str, items: &[Value]) -> Vec<Value> {
    items.iter().map(|v| comparable(version, v)).collect()
}

/// Decodes `body` fed in chunks of `chunk` bytes.
fn decode_list<T: DeserializeOwned>(
    proto: ProtoKind,
    body: &[u8],
    chunk: usize,
) -> kubegen_codec::Result<kubegen_codec::DecodedList<T>> {
    let mut decoder = ListDecoder::<T>::new(proto);
    for piece in body.chunks(chunk) {
        decoder.feed(piece)?;
    }
    decoder.finish()
}

fn check_list<K: DeserializeOwned + PartialEq + std::fmt::Debug>(
    resource: &str,
    api_version: &str,
    kind: &str,
) {
    let proto = ProtoKind::lookup(api_version, kind).unwrap();
    for version in ["1.15", "1.36"] {
        let stem = format!("streams/list-{resource}-{version}");
        let body = fixture(&format!("{stem}.pb"));
        let json: Value = serde_json::from_slice(&fixture(&format!("{stem}.json"))).unwrap();
        let typed_items: Vec<K> = serde_json::from_value(json["items"].clone()).unwrap();
        let meta: ListMeta = serde_json::from_value(json["metadata"].clone()).unwrap();
        assert!(!typed_items.is_empty(), "{stem}");
        for chunk in 1..=body.len() {
            let list = decode_list::<K>(proto, &body, chunk).unwrap();
            assert_eq!(list.items, typed_items, "{stem} in chunks of {chunk}");
            assert_eq!(list.metadata::<ListMeta>().unwrap(), meta, "{stem}");
            assert_eq!(list.kind, format!("{kind}List"));
            assert_eq!(list.api_version, api_version);
        }
        let values = decode_list::<Value>(proto, &body, 4096).unwrap();
        assert_eq!(
            comparable_items(version, &values.items),
            comparable_items(version, json["items"].as_array().unwrap()),
            "{stem} as JSON values"
        );
    }
}

#[test]
fn real_list_bodies_in_chunks_of_every_size_decode_like_their_json() {
    check_list::<ConfigMap>("configmaps", "v1", "ConfigMap");
    check_list::<Deployment>("deployments", "apps/v1", "Deployment");
    check_list::<Pod>("pods", "v1", "Pod");
    check_list::<Event>("events", "v1", "Event");
    check_list::<Lease>("leases", "coordination.k8s.io/v1", "Lease");
}

#[test]
fn real_partial_object_metadata_lists_decode_like_their_json_items_and_all() {
    let proto = ProtoKind::partial_object_metadata().unwrap();
    for version in ["1.15", "1.36"] {
        let stem = format!("streams/list-partialobjectmetadata-{version}");
        let body = fixture(&format!("{stem}.pb"));
        let json: Value = serde_json::from_slice(&fixture(&format!("{stem}.json"))).unwrap();
        let expected = comparable_items(version, json["items"].as_array().unwrap());
        assert!(
            expected
                .iter()
                .all(|item| item["kind"] == "PartialObjectMetadata"),
            "{stem}: a real server writes each item's kind"
        );
        for chunk in [1, 7, 64, body.len()] {
            let list = decode_list::<Value>(proto, &body, chunk).unwrap();
            assert_eq!(
                comparable_items(version, &list.items),
                expected,
                "{stem} in chunks of {chunk}"
            );
            assert_eq!(list.kind, "PartialObjectMetadataList");
            assert_eq!(list.api_version, "meta.k8s.io/v1");
        }
    }
}

#[test]
fn every_truncation_of_a_real_list_body_is_an_error() {
    let proto = ProtoKind::lookup("apps/v1", "Deployment").unwrap();
    let body = fixture("streams/list-deployments-1.36.pb");
    // Go ends the envelope with empty `contentEncoding` and `contentType` (2 bytes each).
    for end in 0..body.len() - 4 {
        let result = decode_list::<Deployment>(proto, &body[..end], 7);
        assert!(result.is_err(), "cut at {end} decoded");
    }
}

#[test]
fn a_list_body_that_is_a_status_is_reported_as_one() {
    let proto = ProtoKind::lookup("v1", "ConfigMap").unwrap();
    let body = fixture("streams/notfound-1.36.pb");
    let list = decode_list::<ConfigMap>(proto, &body, 5).unwrap();
    assert_eq!(list.kind, "Status");
    let status: Value = list.status().unwrap().unwrap();
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["code"], 404);
}

fn frames(body: &[u8], chunk: usize) -> Vec<(String, Value)> {
    let mut splitter = WatchFrames::new();
    let mut events = Vec::new();
    for piece in body.chunks(chunk) {
        splitter.push(piece);
        while let Some(frame) = splitter.next_frame() {
            let frame = frame.unwrap();
            events.push((
                frame.event_type.to_string(),
                frame.decode::<Value>().unwrap(),
            ));
        }
    }
    splitter.finish().unwrap();
    events
}

#[test]
fn real_watch_streams_in_chunks_of_every_size_decode_like_their_json() {
    for resource in ["configmaps", "deployments"] {
        for version in ["1.15", "1.36"] {
            let stem = format!("streams/watch-{resource}-{version}");
            let body = fixture(&format!("{stem}.pb"));
            let json = fixture(&format!("{stem}.json"));
            let expected: Vec<(String, Value)> = json
                .split(|b| *b == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| {
                    let event: Value = serde_json::from_slice(line).unwrap();
                    let kind = event["type"].as_str().unwrap().to_string();
                    (kind, comparable(version, &event["object"]))
                })
                .collect();
            assert!(expected.len() >= 2, "{stem}: {}", expected.len());
            for chunk in [1, 2, 3, 5, 64, 4096] {
                let events: Vec<(String, Value)> = frames(&body, chunk)
                    .into_iter()
                    .map(|(kind, object)| (kind, comparable(version, &object)))
                    .collect();
                assert_eq!(events, expected, "{stem} in chunks of {chunk}");
            }
        }
    }
}

#[test]
fn a_watch_stream_cut_inside_a_frame_is_an_error_naming_the_frame() {
    let body = fixture("streams/watch-configmaps-1.36.pb");
    let mut splitter = WatchFrames::new();
    splitter.push(&body[..body.len() - 3]);
    let mut complete = 0;
    while let Some(frame) = splitter.next_frame() {
        frame.unwrap();
        complete += 1;
    }
    let err = splitter.finish().unwrap_err().to_string();
    assert!(
        err.contains(&format!("the stream ended inside frame {}", complete + 1)),
        "{err}"
    );
}
