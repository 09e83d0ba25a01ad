use http::{HeaderMap, HeaderValue, StatusCode};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectList, WatchEvent};

use super::*;
use crate::error::from_error_response;

const LIST_PB: &[u8] = include_bytes!("../../codec/tests/fixtures/streams/list-configmaps-1.36.pb");
const LIST_JSON: &[u8] =
    include_bytes!("../../codec/tests/fixtures/streams/list-configmaps-1.36.json");
const WATCH_PB: &[u8] =
    include_bytes!("../../codec/tests/fixtures/streams/watch-deployments-1.36.pb");
const WATCH_JSON: &[u8] =
    include_bytes!("../../codec/tests/fixtures/streams/watch-deployments-1.36.json");
const NOT_FOUND_PB: &[u8] = include_bytes!("../../codec/tests/fixtures/streams/notfound-1.36.pb");

fn content_type(value: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(value));
    headers
}

fn configmaps() -> Option<ProtoKind> {
    ProtoKind::lookup("v1", "ConfigMap")
}

#[test]
fn protobuf_is_recognised_by_content_type_with_or_without_parameters() {
    assert!(is_protobuf(&content_type(
        "application/vnd.kubernetes.protobuf"
    )));
    assert!(is_protobuf(&content_type(
        "application/vnd.kubernetes.protobuf;stream=watch"
    )));
    assert!(!is_protobuf(&content_type("application/json")));
    assert!(!is_protobuf(&HeaderMap::new()));
}

fn decode_list(headers: &HeaderMap, body: &[u8]) -> Result<ObjectList<ConfigMap>> {
    let mut decoder = AnyListDecoder::<ConfigMap>::new(headers, configmaps(), "/l");
    for chunk in body.chunks(100) {
        decoder.feed(chunk)?;
    }
    decoder.finish()
}

#[test]
fn a_list_is_decoded_by_its_content_type_into_the_same_list() -> Result<()> {
    let json = decode_list(&content_type("application/json"), LIST_JSON)?;
    let protobuf = decode_list(&content_type(PROTOBUF_TYPE), LIST_PB)?;
    assert_eq!(protobuf.items, json.items);
    assert_eq!(protobuf.metadata, json.metadata);
    assert_eq!(protobuf.types, json.types);
    Ok(())
}

const PROTOBUF_TYPE: &str = "application/vnd.kubernetes.protobuf";

#[test]
fn items_are_taken_as_they_are_decoded_in_both_encodings() -> Result<()> {
    for (content, body) in [("application/json", LIST_JSON), (PROTOBUF_TYPE, LIST_PB)] {
        let whole = decode_list(&content_type(content), body)?;
        let mut decoder =
            AnyListDecoder::<ConfigMap>::new(&content_type(content), configmaps(), "/l");
        let (mut taken, mut before_the_end) = (Vec::new(), 0);
        let chunks: Vec<&[u8]> = body.chunks(100).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            decoder.feed(chunk)?;
            taken.extend(decoder.take_items_with_bytes().map(|(item, _)| item));
            if i + 1 < chunks.len() {
                before_the_end = taken.len();
            }
        }
        let rest = decoder.finish()?;
        assert!(rest.items.is_empty(), "{content}: every item was taken");
        assert_eq!(rest.metadata, whole.metadata, "{content}");
        assert_eq!(taken, whole.items, "{content}: the same items, in order");
        assert!(
            before_the_end > 0,
            "{content}: items are handed over before the body ends"
        );
    }
    Ok(())
}

#[test]
fn a_json_answer_to_a_protobuf_request_is_decoded_as_json() -> Result<()> {
    // A server that does not offer protobuf answers JSON with a JSON content type.
    let list = decode_list(&content_type("application/json"), LIST_JSON)?;
    assert_eq!(list.items.len(), 3);
    Ok(())
}

#[test]
fn a_protobuf_status_in_place_of_a_list_is_an_api_error() {
    let err = decode_list(&content_type(PROTOBUF_TYPE), NOT_FOUND_PB)
        .expect_err("a 404 Status body is an error");
    assert!(err.is_not_found(), "{err:?}");
}

#[test]
fn a_truncated_protobuf_list_is_a_decode_error_naming_the_list() {
    let err = decode_list(&content_type(PROTOBUF_TYPE), &LIST_PB[..LIST_PB.len() - 40])
        .expect_err("a truncated list is an error");
    assert!(matches!(err, Error::ProtobufDecode { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("decoding protobuf list /l: "),
        "{err}"
    );
}

#[test]
fn a_protobuf_error_response_becomes_the_servers_status() {
    let err = from_error_response(
        "GET",
        "/api/v1/namespaces/protoclient-fx/configmaps/nope",
        StatusCode::NOT_FOUND,
        &content_type(PROTOBUF_TYPE),
        NOT_FOUND_PB,
    );
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(
        err.status().map(|s| s.message.as_str()),
        Some("configmaps \"nope\" not found")
    );
}

fn names<K: kube_core::Resource>(events: &[WatchEvent<K>]) -> Vec<(String, Option<String>)> {
    events
        .iter()
        .map(|event| match event {
            WatchEvent::Added(o) => ("ADDED".into(), o.meta().resource_version.clone()),
            WatchEvent::Modified(o) => ("MODIFIED".into(), o.meta().resource_version.clone()),
            WatchEvent::Deleted(o) => ("DELETED".into(), o.meta().resource_version.clone()),
            WatchEvent::Bookmark(b) => {
                ("BOOKMARK".into(), Some(b.metadata.resource_version.clone()))
            }
            WatchEvent::Error(s) => ("ERROR".into(), Some(s.reason.clone())),
        })
        .collect()
}

#[test]
fn protobuf_watch_frames_give_the_events_of_the_json_stream() -> Result<()> {
    let mut watch = ProtobufWatch::new("/w");
    let mut events: Vec<WatchEvent<Deployment>> = Vec::new();
    for chunk in WATCH_PB.chunks(33) {
        watch.push(chunk);
        while let Some(event) = watch.next_event(false) {
            events.push(event?.0);
        }
    }
    assert!(watch.finish::<Deployment>().is_none());
    let mut json = crate::watch::WatchDecoder::new("/w");
    json.push(WATCH_JSON);
    let mut expected: Vec<WatchEvent<Deployment>> = Vec::new();
    while let Some(event) = json.next_event(false) {
        expected.push(event?.0);
    }
    assert_eq!(names(&events), names(&expected));
    let objects = |events: &[WatchEvent<Deployment>]| -> Vec<Deployment> {
        events
            .iter()
            .filter_map(|e| match e {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => Some(o.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(objects(&events), objects(&expected));
    Ok(())
}

#[test]
fn a_watch_cut_inside_a_frame_ends_with_a_decode_error() {
    let mut watch = ProtobufWatch::new("/w");
    watch.push(&WATCH_PB[..WATCH_PB.len() - 1]);
    while let Some(event) = watch.next_event::<Deployment>(false) {
        assert!(event.is_ok());
    }
    let last = watch.finish::<Deployment>();
    assert!(
        matches!(last, Some(Err(Error::ProtobufDecode { .. }))),
        "{last:?}"
    );
}

#[test]
fn kept_item_bytes_decode_to_the_items_in_both_encodings() -> Result<()> {
    for (content, body, chunk) in [
        ("application/json", LIST_JSON, 100),
        ("application/json", LIST_JSON, LIST_JSON.len()),
        (PROTOBUF_TYPE, LIST_PB, 100),
    ] {
        let whole = decode_list(&content_type(content), body)?;
        let mut decoder =
            AnyListDecoder::<ConfigMap>::new(&content_type(content), configmaps(), "/l")
                .keeping_bytes();
        let mut kept = Vec::new();
        for piece in body.chunks(chunk) {
            decoder.feed(piece)?;
            kept.extend(decoder.take_items_with_bytes());
        }
        decoder.finish()?;
        assert_eq!(kept.len(), whole.items.len(), "{content}");
        let wire = crate::wire_object::WireDecoder {
            proto: configmaps(),
        };
        for ((item, bytes), expected) in kept.iter().zip(&whole.items) {
            let bytes = bytes.as_ref().expect("bytes kept");
            let is_protobuf = matches!(bytes, WireObject::Protobuf(_));
            assert_eq!(is_protobuf, content == PROTOBUF_TYPE, "{content}");
            assert_eq!(item, expected, "{content}");
            assert_eq!(&wire.decode::<ConfigMap>(bytes)?, expected, "{content}");
        }
    }
    Ok(())
}

#[test]
fn kept_watch_bytes_decode_to_the_events_objects_in_both_encodings() -> Result<()> {
    let deployments = crate::wire_object::WireDecoder {
        proto: ProtoKind::lookup("apps/v1", "Deployment"),
    };
    let mut protobuf = ProtobufWatch::new("/w");
    protobuf.push(WATCH_PB);
    let mut json = crate::watch::WatchDecoder::new("/w");
    json.push(WATCH_JSON);
    let mut events = Vec::new();
    while let Some(event) = protobuf.next_event::<Deployment>(true) {
        events.push(event?);
    }
    while let Some(event) = json.next_event::<Deployment>(true) {
        events.push(event?);
    }
    let mut checked = 0;
    for (event, bytes) in events {
        match (event, bytes) {
            (
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o),
                Some(bytes),
            ) => {
                assert_eq!(deployments.decode::<Deployment>(&bytes)?, o);
                checked += 1;
            }
            (WatchEvent::Bookmark(_) | WatchEvent::Error(_), None) => {}
            (event, bytes) => panic!("{event:?} with bytes {:?}", bytes.is_some()),
        }
    }
    assert!(checked > 2, "{checked} objects checked");
    Ok(())
}
