use k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::test_util::{cm, labeled};

fn byte_store(decoded_cache: usize) -> ByteStore<ConfigMap> {
    ByteStore::for_mode(StoreMode::Bytes { decoded_cache }, WireCodec::json()).unwrap()
}

fn encoded(stored: &Stored<ConfigMap>) -> &Encoded {
    match stored {
        Stored::Encoded(encoded) => encoded,
        Stored::Decoded(_) => panic!("kept decoded"),
    }
}

/// A JSON entry of `bytes` with no resourceVersion, labels or index values.
fn unlabeled(bytes: &[u8]) -> Encoded {
    let parts = Parts {
        resource_version: "",
        labels: std::iter::empty::<(&str, &str)>(),
        filed: &[],
    };
    Encoded::new(bytes, false, parts).unwrap()
}

#[test]
fn a_decoded_mode_has_no_byte_store() {
    assert!(ByteStore::<ConfigMap>::for_mode(StoreMode::Decoded, WireCodec::json()).is_none());
}

#[test]
fn encoded_entries_keep_labels_and_index_values_and_decode_to_the_same_object() {
    let bytes = byte_store(0);
    let obj = labeled(labeled(cm("ns", "x", "7"), "app", "web"), "tier", "db");
    let key = ObjectKey::of(&obj);
    let filed = vec![("by-app".to_owned(), vec!["web".to_owned()])];
    let stored = bytes.encode(&key, Arc::new(obj.clone()), filed, None);
    let entry = encoded(&stored);
    assert_eq!(entry.filed("by-app"), ["web"]);
    assert!(entry.filed("other").is_empty());
    assert_eq!(Some(&*stored.labels()), obj.metadata.labels.as_ref());
    assert_eq!(*bytes.decode(&key, entry).unwrap(), obj);
    assert_eq!(entry.len(), serde_json::to_vec(&obj).unwrap().len());
}

#[test]
fn with_filed_adds_an_index_and_keeps_the_rest() {
    let bytes = byte_store(0);
    let obj = cm("ns", "x", "7");
    let key = ObjectKey::of(&obj);
    let stored = bytes.encode(
        &key,
        Arc::new(obj),
        vec![("a".into(), vec!["1".into()])],
        None,
    );
    let entry = encoded(&stored)
        .with_filed("b", vec!["2".into(), "3".into()])
        .unwrap();
    assert_eq!(entry.filed("a"), ["1"]);
    assert_eq!(entry.filed("b"), ["2", "3"]);
    assert!(stored.labels().is_empty());
}

#[test]
fn the_recently_decoded_cache_serves_the_same_entry_and_is_bounded() {
    let bytes = byte_store(2);
    assert_eq!(bytes.capacity(), 2);
    let entries: Vec<(ObjectKey, Arc<ConfigMap>, Encoded)> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let obj = Arc::new(cm("ns", name, "1"));
            let key = ObjectKey::of(obj.as_ref());
            let stored = bytes.encode(&key, Arc::clone(&obj), Vec::new(), None);
            let entry = encoded(&stored).clone();
            (key, obj, entry)
        })
        .collect();
    // "a" was pushed out by "c"; "b" and "c" are served as they arrived.
    let (key, obj, entry) = &entries[0];
    let decoded = bytes.decode(key, entry).unwrap();
    assert!(!Arc::ptr_eq(&decoded, obj), "decoded anew");
    assert_eq!(decoded, *obj);
    assert!(
        Arc::ptr_eq(&bytes.decode(key, entry).unwrap(), &decoded),
        "decoded once"
    );
    let (key, obj, entry) = &entries[2];
    assert!(Arc::ptr_eq(&bytes.decode(key, entry).unwrap(), obj));
    // "b" was the least recently used when "a" came back.
    let (key, obj, entry) = &entries[1];
    assert!(!Arc::ptr_eq(&bytes.decode(key, entry).unwrap(), obj));
}

#[test]
fn a_remembered_object_of_an_older_entry_is_not_served() {
    let bytes = byte_store(4);
    let old = cm("ns", "x", "1");
    let key = ObjectKey::of(&old);
    let first = bytes.encode(&key, Arc::new(old), Vec::new(), None);
    let newer = Arc::new(cm("ns", "x", "2"));
    let second = bytes.encode(&key, Arc::clone(&newer), Vec::new(), None);
    // A reader that copied the first entry before the update decodes it, not the newer one.
    assert_eq!(
        crate::test_util::rv(&bytes.decode(&key, encoded(&first)).unwrap()),
        "1"
    );
    // ... and then the newer entry is decoded anew, not served the older object.
    assert_eq!(
        crate::test_util::rv(&bytes.decode(&key, encoded(&second)).unwrap()),
        "2"
    );
}

#[test]
fn a_malformed_entry_is_an_error_naming_the_object() {
    let bytes = byte_store(0);
    let key = ObjectKey::from("ns/broken");
    let entry = unlabeled(b"{\"metadata\": 7}");
    let err = bytes.decode(&key, &entry).unwrap_err();
    assert!(matches!(&err, Error::Undecodable { key, .. } if key == "ns/broken"));
    assert_eq!(err.to_string(), "cached object ns/broken does not decode");
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.contains("invalid type"), "{source}");
    let stored = Stored::Encoded(entry);
    assert!(matches!(
        object_of::<ConfigMap>(None, &key, &stored),
        Err(Error::Undecodable { .. })
    ));
}

#[test]
fn an_object_that_does_not_encode_is_kept_decoded() {
    let codec: WireCodec<ConfigMap> = WireCodec::new(|_| Err("no".into()), |_| Err("no".into()));
    let bytes = ByteStore::for_mode(StoreMode::bytes(), codec).unwrap();
    let obj = Arc::new(cm("ns", "x", "1"));
    let stored = bytes.encode(
        &ObjectKey::of(obj.as_ref()),
        Arc::clone(&obj),
        Vec::new(),
        None,
    );
    assert!(matches!(stored, Stored::Decoded(kept) if Arc::ptr_eq(&kept, &obj)));
}

#[test]
fn the_bytes_the_server_sent_are_kept_as_they_are_and_decoded_by_their_encoding() {
    // A "protobuf" decoder that reads the name from the bytes, so the test can tell which
    // decoder ran on which bytes.
    let codec = WireCodec::json().with_protobuf(|bytes: &[u8]| {
        let name = std::str::from_utf8(bytes)?;
        Ok(cm("ns", name, "9"))
    });
    let bytes = ByteStore::for_mode(StoreMode::Bytes { decoded_cache: 0 }, codec).unwrap();
    let obj = cm("ns", "x", "9");
    let key = ObjectKey::of(&obj);
    // JSON as a server writes it: another key order and spacing than serde_json's.
    let sent: &[u8] = br#"{"metadata": {"resourceVersion": "9", "namespace": "ns", "name": "x"}}"#;
    let json = WireBytes::Json(sent.into());
    let stored = bytes.encode(&key, Arc::new(obj.clone()), Vec::new(), Some(json));
    assert_eq!(encoded(&stored).bytes(), sent, "kept, not re-encoded");
    assert_eq!(*object_of(Some(&bytes), &key, &stored).unwrap(), obj);
    assert_eq!(stored.resource_version(), "9");
    let protobuf = WireBytes::Protobuf(b"x".as_slice().into());
    let stored = bytes.encode(&key, Arc::new(obj.clone()), Vec::new(), Some(protobuf));
    assert_eq!(encoded(&stored).bytes(), b"x");
    assert_eq!(*object_of(Some(&bytes), &key, &stored).unwrap(), obj);
    let json_only = byte_store(0);
    let err = json_only.decode(&key, encoded(&stored)).unwrap_err();
    assert!(
        matches!(&err, Error::Undecodable { key, .. } if key == "ns/x"),
        "{err}"
    );
}

#[test]
fn a_pending_entry_is_decoded_on_delivery_and_names_the_key_when_it_cannot_be() {
    let bytes = Arc::new(byte_store(0));
    let obj = cm("ns", "x", "3");
    let key = ObjectKey::of(&obj);
    let entry = bytes.encode(&key, Arc::new(obj.clone()), Vec::new(), None);
    let pending = Pending::Entry {
        key: key.clone(),
        entry,
        bytes: Some(Arc::clone(&bytes)),
    };
    assert_eq!(pending.key(), key);
    assert_eq!(*pending.object().unwrap(), obj);
    let broken = Pending::Entry {
        key: ObjectKey::from("ns/broken"),
        entry: Stored::Encoded(unlabeled(b"[]")),
        bytes: Some(bytes),
    };
    let err = broken.object().unwrap_err();
    assert!(
        matches!(&err, Error::Undecodable { key, .. } if key == "ns/broken"),
        "{err}"
    );
}
