use http::{HeaderMap, HeaderValue};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::{Resource, WatchEvent};

use super::*;
use crate::protobuf::{AnyListDecoder, ProtobufWatch};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const JSON: &str = "application/json";

fn content_type(value: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(value));
    headers
}

/// What the head of an object with `meta` must read.
fn head_of(meta: &ObjectMeta) -> HeadMeta {
    HeadMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        resource_version: meta.resource_version.clone(),
        labels: meta.labels.clone(),
    }
}

/// Decodes `body` (a list response in `content`) as `T`, item by item, keeping each one's bytes.
fn list_as<T: DeserializeOwned + Clone>(
    content: &'static str,
    proto: Option<ProtoKind>,
    body: &[u8],
) -> Result<Vec<(T, Option<WireObject>)>> {
    let mut decoder = AnyListDecoder::<T>::new(&content_type(content), proto, "/l").keeping_bytes();
    let mut items = Vec::new();
    for chunk in body.chunks(333) {
        decoder.feed(chunk)?;
        items.extend(decoder.take_items_with_bytes());
    }
    decoder.finish()?;
    Ok(items)
}

/// Every fixture list of `K`, in JSON and protobuf, read as heads: each head equals the full
/// object's metadata, and the kept bytes decode to the full object.
fn heads_match_the_full_objects<K>(api_version: &str, kind: &str, lists: &[(&[u8], &[u8])])
where
    K: DeserializeOwned + Clone + Resource + PartialEq + std::fmt::Debug,
{
    let proto = ProtoKind::lookup(api_version, kind);
    assert!(proto.is_some(), "{kind} has a protobuf form");
    let wire = WireDecoder { proto };
    for (json, protobuf) in lists {
        for (content, body) in [(JSON, *json), (PROTOBUF, *protobuf)] {
            let full = list_as::<K>(content, proto, body).expect("the full list decodes");
            let heads = list_as::<ObjectHead>(content, proto, body).expect("the heads decode");
            assert!(!full.is_empty(), "{kind} {content}: a fixture with items");
            assert_eq!(heads.len(), full.len(), "{kind} {content}");
            for ((head, bytes), (obj, _)) in heads.iter().zip(&full) {
                assert_eq!(head.metadata, head_of(obj.meta()), "{kind} {content}");
                let bytes = bytes.as_ref().expect("bytes kept");
                assert_eq!(&wire.decode::<K>(bytes).expect("decodes"), obj, "{kind}");
                assert_eq!(&wire.decode::<ObjectHead>(bytes).expect("decodes"), head);
            }
        }
    }
}

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../codec/tests/fixtures/streams/", $name))
    };
}

#[test]
fn the_head_of_every_fixture_object_is_its_metadata_in_both_encodings() {
    heads_match_the_full_objects::<ConfigMap>(
        "v1",
        "ConfigMap",
        &[
            (
                fixture!("list-configmaps-1.36.json"),
                fixture!("list-configmaps-1.36.pb"),
            ),
            (
                fixture!("list-configmaps-1.15.json"),
                fixture!("list-configmaps-1.15.pb"),
            ),
        ],
    );
    heads_match_the_full_objects::<Deployment>(
        "apps/v1",
        "Deployment",
        &[
            (
                fixture!("list-deployments-1.36.json"),
                fixture!("list-deployments-1.36.pb"),
            ),
            (
                fixture!("list-deployments-1.15.json"),
                fixture!("list-deployments-1.15.pb"),
            ),
        ],
    );
    heads_match_the_full_objects::<Pod>(
        "v1",
        "Pod",
        &[(
            fixture!("list-pods-1.36.json"),
            fixture!("list-pods-1.36.pb"),
        )],
    );
    heads_match_the_full_objects::<Event>(
        "v1",
        "Event",
        &[(
            fixture!("list-events-1.36.json"),
            fixture!("list-events-1.36.pb"),
        )],
    );
    heads_match_the_full_objects::<Lease>(
        "coordination.k8s.io/v1",
        "Lease",
        &[(
            fixture!("list-leases-1.36.json"),
            fixture!("list-leases-1.36.pb"),
        )],
    );
}

#[test]
fn a_protobuf_watch_hands_out_heads_with_the_events_bytes() -> Result<()> {
    let proto = ProtoKind::lookup("apps/v1", "Deployment");
    let wire = WireDecoder { proto };
    let mut full = ProtobufWatch::new("/w");
    let mut heads = ProtobufWatch::new("/w");
    full.push(fixture!("watch-deployments-1.36.pb"));
    heads.push(fixture!("watch-deployments-1.36.pb"));
    let mut objects = 0;
    while let Some(event) = full.next_event::<Deployment>(false) {
        let (event, _) = event?;
        let (head, bytes) = heads.next_event::<ObjectHead>(true).expect("same events")?;
        let (obj, head) = match (event, head) {
            (WatchEvent::Added(obj), WatchEvent::Added(head))
            | (WatchEvent::Modified(obj), WatchEvent::Modified(head))
            | (WatchEvent::Deleted(obj), WatchEvent::Deleted(head)) => (obj, head),
            (WatchEvent::Bookmark(_), WatchEvent::Bookmark(_)) => continue,
            (event, head) => panic!("different events: {event:?} and {head:?}"),
        };
        objects += 1;
        assert_eq!(head.metadata, head_of(&obj.metadata));
        let bytes = bytes.expect("an object event keeps its bytes");
        assert_eq!(wire.decode::<Deployment>(&bytes)?, obj);
    }
    assert!(objects > 0, "the fixture has object events");
    Ok(())
}

#[test]
fn a_json_head_skips_unknown_fields_and_reads_absent_ones_as_none() -> Result<()> {
    let json = br#"{"apiVersion":"v1","kind":"Namespace","extra":{"deep":[1,{"x":null}]},
        "metadata":{"name":"prod","uid":"u-1","resourceVersion":"42","labels":{},
        "managedFields":[{"manager":"m","fieldsV1":{"f:metadata":{}}}],"unknownField":[true]},
        "spec":{"finalizers":["kubernetes"]}}"#;
    let head: ObjectHead = WireDecoder::decode_json(json)?;
    assert_eq!(
        head.metadata,
        HeadMeta {
            name: Some("prod".into()),
            namespace: None,
            resource_version: Some("42".into()),
            labels: Some(BTreeMap::new()),
        }
    );
    let bare: ObjectHead = WireDecoder::decode_json(br#"{"kind":"X"}"#)?;
    assert_eq!(bare, ObjectHead::default());
    let nulls: ObjectHead =
        WireDecoder::decode_json(br#"{"metadata":{"name":"a","labels":null,"namespace":null}}"#)?;
    assert_eq!(nulls.metadata.labels, None);
    assert_eq!(nulls.metadata.namespace, None);
    Ok(())
}

#[test]
fn a_malformed_json_item_is_an_error_naming_the_list_item_not_a_panic() {
    let cases: [&[u8]; 4] = [
        br#"{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","labels":5}}]}"#,
        br#"{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":7}}]}"#,
        br#"{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b""#,
        br#"{"items":[{"metadata":{"name":"a"}},{"metadata":]}"#,
    ];
    for body in cases {
        let err = list_as::<ObjectHead>(JSON, None, body).expect_err("malformed");
        let message = err.to_string();
        assert!(
            message.contains("/l"),
            "{message}: names the list ({})",
            String::from_utf8_lossy(body)
        );
    }
    let err = list_as::<ObjectHead>(JSON, None, cases[0]).expect_err("malformed");
    assert!(err.to_string().contains("list item 1 of /l"), "{err}");
}

/// Protobuf wire helpers: a length-delimited field, and a string field.
fn len_field(number: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(number << 3 | 2));
    out.extend(varint(bytes.len() as u64));
    out.extend_from_slice(bytes);
    out
}

fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A ConfigMap message: metadata `meta`, then `data` (field 2) and an unknown field 99.
fn configmap_message(meta: &[u8]) -> Vec<u8> {
    let mut message = len_field(1, meta);
    let entry = [len_field(1, b"k"), len_field(2, b"v")].concat();
    message.extend(len_field(2, &entry));
    message.extend(varint(99 << 3));
    message.extend(varint(7));
    message
}

#[test]
fn a_protobuf_head_reads_name_namespace_version_and_labels_by_field_number() -> Result<()> {
    let configmaps = WireDecoder {
        proto: ProtoKind::lookup("v1", "ConfigMap"),
    };
    let label = |k: &[u8], v: &[u8]| len_field(11, &[len_field(1, k), len_field(2, v)].concat());
    // name 1, generateName 2 (skipped), namespace 3, uid 5 (skipped), resourceVersion 6, labels
    // 11, and an unknown field 77 inside the metadata.
    let meta = [
        len_field(1, b"cm"),
        len_field(2, b"cm-"),
        len_field(3, b"ns"),
        len_field(5, b"uid-1"),
        len_field(6, b"17"),
        label(b"app", b"web"),
        label(b"tier", b"front"),
        len_field(77, b"ignored"),
    ]
    .concat();
    let head: ObjectHead = configmaps.decode_protobuf(&configmap_message(&meta))?;
    let labels = [("app", "web"), ("tier", "front")];
    assert_eq!(
        head.metadata,
        HeadMeta {
            name: Some("cm".into()),
            namespace: Some("ns".into()),
            resource_version: Some("17".into()),
            labels: Some(labels.map(|(k, v)| (k.into(), v.into())).into()),
        }
    );
    // No namespace (a cluster-scoped object) and no labels.
    let meta = [len_field(1, b"cluster-wide"), len_field(6, b"3")].concat();
    let head: ObjectHead = configmaps.decode_protobuf(&configmap_message(&meta))?;
    assert_eq!(head.metadata.namespace, None);
    assert_eq!(head.metadata.labels.unwrap_or_default(), BTreeMap::new());
    assert_eq!(head.metadata.name.as_deref(), Some("cluster-wide"));
    Ok(())
}

#[test]
fn malformed_protobuf_is_an_error_not_a_panic() {
    let configmaps = WireDecoder {
        proto: ProtoKind::lookup("v1", "ConfigMap"),
    };
    let whole = configmap_message(&[len_field(1, b"cm"), len_field(6, b"3")].concat());
    for end in 1..whole.len() {
        // Every truncation either fails or reads a prefix of the fields; none panics.
        let _ = configmaps.decode_protobuf::<ObjectHead>(&whole[..end]);
    }
    // Cut inside the metadata: its length runs past the end.
    assert!(
        configmaps
            .decode_protobuf::<ObjectHead>(&whole[..5])
            .is_err()
    );
    // The metadata's length runs past the message.
    let overlong = [varint(1 << 3 | 2), varint(500), b"short".to_vec()].concat();
    let err = configmaps
        .decode_protobuf::<ObjectHead>(&overlong)
        .expect_err("overlong");
    assert!(err.to_string().contains("cached object"), "{err}");
    // A string that is not UTF-8 where the name is.
    let bad_name = configmap_message(&len_field(1, &[0xff, 0xfe]));
    assert!(configmaps.decode_protobuf::<ObjectHead>(&bad_name).is_err());
}
