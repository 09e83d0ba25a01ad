//! Protobuf bodies captured from kubectl and from real API servers, each next to the JSON the same
//! component wrote for the same object: decoding the protobuf must give exactly that JSON.

use std::path::PathBuf;

use serde_json::Value;

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `value` without the members for which `drop` holds, at any depth.
fn without(value: &Value, drop: fn(&Value) -> bool) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(_, v)| !drop(v))
                .map(|(k, v)| (k.clone(), without(v, drop)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| without(v, drop)).collect()),
        other => other.clone(),
    }
}

/// `value` without `null` members. Go releases before 1.34 write a zero `Time` such as
/// `template.metadata.creationTimestamp` as `null`; since then (`omitzero`) they omit it, and so
/// does the codec, whose Go facts come from 1.36. Comparing without nulls lets the fixtures of
/// kubectl 1.32 check everything else.
fn without_nulls(value: &Value) -> Value {
    without(value, Value::is_null)
}

/// `value` as the v1.15 server's Go wrote it, comparably: besides the zero `Time`s, it writes an
/// empty byte string in a map (Secret `data`) as `null` where 1.36 and the codec write `""`.
pub(crate) fn as_from_go_1_15(value: &Value) -> Value {
    without(value, |v| v.is_null() || v.as_str() == Some(""))
}

/// Every `<stem>.pb` with its `<stem>.json`.
fn pairs() -> Vec<(String, Vec<u8>, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".pb").map(str::to_string)
        })
        .collect();
    stems.sort();
    stems
        .into_iter()
        .map(|stem| {
            let protobuf = fixture(&format!("{stem}.pb"));
            let json = serde_json::from_slice(&fixture(&format!("{stem}.json"))).unwrap();
            (stem, protobuf, json)
        })
        .collect()
}

#[test]
fn kubectl_request_bodies_decode_to_the_json_kubectl_writes_for_them() {
    let pairs = pairs();
    let kubectl: Vec<_> = pairs
        .iter()
        .filter(|(stem, ..)| stem.starts_with("kubectl-"))
        .collect();
    assert_eq!(kubectl.len(), 4);
    for (stem, protobuf, json) in kubectl {
        let decoded = kubegen_codec::decode_object(protobuf).unwrap();
        assert_eq!(without_nulls(&decoded), without_nulls(json), "{stem}");
    }
}

#[test]
fn server_answers_decode_to_the_servers_own_json() {
    let pairs = pairs();
    let served: Vec<_> = pairs
        .iter()
        .filter(|(stem, ..)| stem.starts_with("get-"))
        .collect();
    assert!(served.len() >= 8, "{}", served.len());
    for (stem, protobuf, json) in served {
        let decoded = kubegen_codec::decode_object(protobuf).unwrap();
        if stem.ends_with("-1.15") {
            assert_eq!(as_from_go_1_15(&decoded), as_from_go_1_15(json), "{stem}");
        } else {
            assert_eq!(&decoded, json, "{stem}");
        }
    }
}

/// Compared as for v1.15, since the older fixtures' `null`s do not survive encoding (Go reads them
/// as zero values, as the codec does).
#[test]
fn encoding_the_json_and_decoding_it_again_gives_the_same_json() {
    for (stem, _, json) in pairs() {
        let body = kubegen_codec::encode_object(&json).unwrap();
        let decoded = kubegen_codec::decode_object(&body).unwrap();
        assert_eq!(as_from_go_1_15(&decoded), as_from_go_1_15(&json), "{stem}");
    }
}

/// Go ends the envelope with the empty `contentEncoding` and `contentType` fields (2 bytes each);
/// a cut there loses nothing.
const ENVELOPE_TRAILER: usize = 4;

#[test]
fn every_truncation_of_a_real_body_is_an_error_or_a_smaller_object() {
    for (stem, protobuf, json) in pairs() {
        for end in 0..protobuf.len() - ENVELOPE_TRAILER {
            if let Ok(partial) = kubegen_codec::decode_object(&protobuf[..end]) {
                assert_ne!(partial, json, "{stem} cut at {end} decoded whole");
            }
        }
    }
}
