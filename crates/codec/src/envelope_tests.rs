use proptest::prelude::*;
use serde_json::json;

use super::*;

#[test]
fn envelope_round_trips_every_field() {
    let envelope = Envelope {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        raw: vec![10, 3, 1, 2, 3],
        content_encoding: String::new(),
        content_type: String::new(),
    };
    let body = envelope.encode();
    assert!(body.starts_with(b"k8s\0"));
    assert_eq!(Envelope::decode(&body).unwrap(), envelope);
}

#[test]
fn a_body_without_the_magic_is_rejected() {
    assert_eq!(
        Envelope::decode(br#"{"kind":"ConfigMap"}"#),
        Err(CodecError::MissingMagic)
    );
}

#[test]
fn custom_resources_are_unknown_kinds() {
    let envelope = Envelope {
        api_version: "police.example.com/v1beta1".into(),
        kind: "WhiteList".into(),
        ..Envelope::default()
    };
    let error = decode_object(&envelope.encode()).unwrap_err();
    assert!(error.is_unknown_kind(), "{error}");
    let error =
        encode_object(&json!({"apiVersion": "police.example.com/v1beta1", "kind": "WhiteList"}))
            .unwrap_err();
    assert!(error.is_unknown_kind(), "{error}");
}

#[test]
fn compressed_envelopes_are_rejected() {
    let envelope = Envelope {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        content_encoding: "gzip".into(),
        ..Envelope::default()
    };
    assert_eq!(
        decode_object(&envelope.encode()),
        Err(CodecError::UnsupportedEncoding("gzip".into()))
    );
}

#[test]
fn encode_object_then_decode_object_is_identity() {
    let config_map = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"},
        "data": {"a": "1", "empty": ""},
        "binaryData": {"b": "AAEC"},
    });
    let body = encode_object(&config_map).unwrap();
    assert_eq!(decode_object(&body).unwrap(), config_map);
}

proptest! {
    #[test]
    fn arbitrary_bytes_after_the_magic_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut body = MAGIC.to_vec();
        body.extend(tail);
        let _ = decode_object(&body);
    }

    #[test]
    fn arbitrary_message_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        for (api_version, kind) in [("apps/v1", "Deployment"), ("v1", "Secret"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition")] {
            let envelope = Envelope { api_version: api_version.into(), kind: kind.into(), raw: raw.clone(), ..Envelope::default() };
            let _ = decode_object(&envelope.encode());
        }
    }
}
