use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::decode_object;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/streams/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap()
}

/// A list body decoded with the list kind's schema: `metadata` and `items` (without TypeMeta).
fn decode_list(body: &[u8]) -> (Envelope, Value) {
    let envelope = Envelope::decode(body).unwrap();
    let schema = KindSchema::lookup(&envelope.api_version, &envelope.kind).unwrap();
    let list = schema.decode_json(&envelope.raw).unwrap();
    (envelope, list)
}

/// Re-encodes a decoded list with [`ListEncoder`].
fn reencode_list(envelope: &Envelope, list: &Value) -> Vec<u8> {
    let mut encoder =
        ListEncoder::new(&envelope.api_version, &envelope.kind, &list["metadata"]).unwrap();
    for item in list["items"].as_array().unwrap() {
        encoder.item(item).unwrap();
    }
    encoder.finish()
}

/// Splits a watch stream into its frames' `WatchEvent` message bytes.
fn frames(mut stream: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while !stream.is_empty() {
        let (length, rest) = stream.split_at(4);
        let length = u32::from_be_bytes(length.try_into().unwrap()) as usize;
        let (frame, rest) = rest.split_at(length);
        out.push(frame);
        stream = rest;
    }
    out
}

fn decode_event(message: &[u8]) -> Value {
    KindSchema::lookup("v1", "WatchEvent")
        .unwrap()
        .decode_json(message)
        .unwrap()
}

#[test]
fn real_lists_re_encode_to_the_same_objects() {
    for name in [
        "list-configmaps-1.15.bin",
        "list-configmaps-1.36.bin",
        "list-partialobjectmetadata-1.36.bin",
    ] {
        let (envelope, list) = decode_list(&fixture(name));
        assert_eq!(list["items"].as_array().unwrap().len(), 1, "{name}");
        let ours = reencode_list(&envelope, &list);
        let (our_envelope, our_list) = decode_list(&ours);
        assert_eq!(our_envelope.api_version, envelope.api_version, "{name}");
        assert_eq!(our_envelope.kind, envelope.kind, "{name}");
        assert_eq!(our_list, list, "{name}");
    }
}

#[test]
fn list_items_leave_out_their_type_meta_and_list_meta_keeps_continue_and_count() {
    let metadata = json!({"resourceVersion": "7", "continue": "abc", "remainingItemCount": 3});
    let mut encoder = ListEncoder::new("v1", "ConfigMapList", &metadata).unwrap();
    encoder
        .item(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}))
        .unwrap();
    let (envelope, list) = decode_list(&encoder.finish());
    assert_eq!(
        (envelope.api_version.as_str(), envelope.kind.as_str()),
        ("v1", "ConfigMapList")
    );
    assert_eq!(list["metadata"], metadata);
    assert_eq!(list["items"], json!([{"metadata": {"name": "a"}}]));
}

#[test]
fn a_list_of_a_custom_kind_is_an_unknown_kind() {
    let error = ListEncoder::new("example.com/v1", "ThingList", &json!({})).unwrap_err();
    assert!(error.is_unknown_kind(), "{error}");
}

#[test]
fn a_bad_item_is_an_error_naming_the_field_and_leaves_the_list_unchanged() {
    let mut encoder = ListEncoder::new("v1", "ConfigMapList", &json!({})).unwrap();
    let error = encoder.item(&json!({"metadata": {"name": 5}})).unwrap_err();
    assert!(error.to_string().starts_with("metadata.name"), "{error}");
    let (_, list) = decode_list(&encoder.finish());
    assert_eq!(list.get("items"), None);
}

#[test]
fn real_watch_frames_re_encode_to_the_same_events() {
    for name in ["watch-configmaps-1.15.bin", "watch-configmaps-1.36.bin"] {
        let stream = fixture(name);
        let real = frames(&stream);
        assert_eq!(real.len(), 1, "{name}");
        let event = decode_event(real[0]);
        assert_eq!(event["type"], "ADDED", "{name}");
        assert_eq!(event["object"]["kind"], "ConfigMap", "{name}");
        let ours = encode_watch_frame("ADDED", &event["object"]).unwrap();
        let our_frames = frames(&ours);
        assert_eq!(our_frames.len(), 1, "{name}");
        assert_eq!(decode_event(our_frames[0]), event, "{name}");
    }
}

#[test]
fn a_watch_frame_is_a_length_then_a_watch_event_without_magic() {
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let frame = encode_watch_frame("BOOKMARK", &object).unwrap();
    let length = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(length, frame.len() - 4);
    // Field 1 (type), length 8, "BOOKMARK".
    assert_eq!(&frame[4..14], b"\x0a\x08BOOKMARK");
    let event = decode_event(&frame[4..]);
    assert_eq!(event["object"], object);
}

#[test]
fn an_error_event_carries_a_status() {
    let status = json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 3 (10)", "reason": "Expired", "code": 410});
    let frame = encode_watch_frame("ERROR", &status).unwrap();
    let event = decode_event(&frame[4..]);
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
}

#[test]
fn real_status_errors_re_encode_to_the_same_status() {
    for name in ["status-notfound-1.15.bin", "status-notfound-1.36.bin"] {
        let real = decode_object(&fixture(name)).unwrap();
        assert_eq!(real["reason"], "NotFound", "{name}");
        let ours = encode_object(&real).unwrap();
        assert_eq!(decode_object(&ours).unwrap(), real, "{name}");
    }
}

proptest! {
    #[test]
    fn lists_of_config_maps_round_trip(
        data in proptest::collection::btree_map("[a-z]{1,8}", "[ -~]{0,16}", 0..4),
        names in proptest::collection::vec("[a-z]{1,10}", 0..5),
        remaining in proptest::option::of(0i64..1000),
    ) {
        let mut metadata = json!({"resourceVersion": "12"});
        if let Some(remaining) = remaining {
            metadata["remainingItemCount"] = remaining.into();
        }
        let items: Vec<Value> = names
            .iter()
            .map(|name| json!({"metadata": {"name": name}, "data": data}))
            .collect();
        let mut encoder = ListEncoder::new("v1", "ConfigMapList", &metadata).unwrap();
        for item in &items {
            encoder.item(item).unwrap();
        }
        let (_, list) = decode_list(&encoder.finish());
        prop_assert_eq!(&list["metadata"], &metadata);
        let decoded = list.get("items").cloned().unwrap_or(json!([]));
        let expected: Vec<Value> = items
            .into_iter()
            .map(|mut item| {
                if data.is_empty() {
                    item.as_object_mut().unwrap().remove("data");
                }
                item
            })
            .collect();
        prop_assert_eq!(decoded, Value::Array(expected));
    }
}

proptest! {
    #[test]
    fn watch_frames_round_trip(
        event_type in "(ADDED|MODIFIED|DELETED|BOOKMARK)",
        name in "[a-z]{1,10}",
        labels in proptest::collection::btree_map("[a-z]{1,8}", "[a-z0-9]{0,8}", 0..3),
    ) {
        let mut metadata = json!({"name": name, "resourceVersion": "5"});
        if !labels.is_empty() {
            metadata["labels"] = json!(labels);
        }
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata});
        let frame = encode_watch_frame(&event_type, &object).unwrap();
        let events = frames(&frame);
        prop_assert_eq!(events.len(), 1);
        let event = decode_event(events[0]);
        prop_assert_eq!(&event["type"], &json!(event_type));
        prop_assert_eq!(&event["object"], &object);
    }
}
