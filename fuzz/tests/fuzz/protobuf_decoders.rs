//! Fuzz targets for the protobuf decoders of `kubegen-codec` that the client uses for built-in
//! kinds: the streaming list decoder and the watch-frame splitter. A valid body (written by the
//! codec's encoder, the test server's) decodes to the same objects wherever it is cut into
//! chunks; arbitrary, truncated or corrupted bodies are an error, never a panic.

use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_codec::{
    CodecError, ListDecoder, ListEncoder, ProtoKind, WatchFrames, encode_watch_frame,
};
use kubegen_fuzz::chunked::split;
use proptest::prelude::*;
use serde_json::{Value, json};

fn config_map_kind() -> ProtoKind {
    ProtoKind::lookup("v1", "ConfigMap").expect("ConfigMap has a protobuf schema")
}

/// ConfigMaps as the server's JSON writes them.
fn config_maps() -> impl Strategy<Value = Vec<Value>> {
    let item = (
        "[a-z][a-z0-9-]{0,12}",
        prop::collection::btree_map("[a-zA-Z0-9._-]{1,8}", "[ -~]{0,16}", 0..4),
    );
    prop::collection::vec(item, 0..6).prop_map(|items| {
        items
            .into_iter()
            .map(|(name, data)| {
                let mut item = json!({"metadata": {"name": name, "namespace": "default"}});
                if !data.is_empty() {
                    item["data"] = json!(data);
                }
                item
            })
            .collect()
    })
}

fn list_body(items: &[Value]) -> Vec<u8> {
    let metadata = json!({"resourceVersion": "9"});
    let mut encoder = ListEncoder::new("v1", "ConfigMapList", &metadata).expect("a list head");
    for item in items {
        encoder.item(item).expect("an encodable ConfigMap");
    }
    encoder.finish()
}

fn decode_list(body: &[u8], cuts: &[usize]) -> Result<Vec<ConfigMap>, CodecError> {
    let mut decoder = ListDecoder::<ConfigMap>::new(config_map_kind());
    for chunk in split(body, cuts) {
        decoder.feed(&chunk)?;
    }
    Ok(decoder.finish()?.items)
}

/// Every frame of `stream` cut at `cuts`, decoded as ConfigMaps; the first error ends it.
fn decode_frames(stream: &[u8], cuts: &[usize]) -> Result<Vec<(String, ConfigMap)>, CodecError> {
    let mut frames = WatchFrames::new();
    let mut events = Vec::new();
    for chunk in split(stream, cuts) {
        frames.push(&chunk);
        while let Some(frame) = frames.next_frame() {
            let frame = frame?;
            events.push((frame.event_type.to_owned(), frame.decode::<ConfigMap>()?));
        }
    }
    frames.finish()?;
    Ok(events)
}

proptest! {
    #[test]
    fn a_list_decodes_to_its_items_wherever_it_is_cut(
        items in config_maps(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let expected: Vec<ConfigMap> = items
            .iter()
            .map(|item| serde_json::from_value(item.clone()).expect("a ConfigMap"))
            .collect();
        prop_assert_eq!(decode_list(&list_body(&items), &cuts).map_err(|e| e.to_string()), Ok(expected));
    }

    #[test]
    fn a_truncated_or_corrupted_list_is_an_error_or_a_list_never_a_panic(
        items in config_maps(),
        keep in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut body = list_body(&items);
        body.truncate(keep.index(body.len() + 1));
        for (at, byte) in flips {
            if !body.is_empty() {
                let at = at.index(body.len());
                body[at] ^= byte;
            }
        }
        let _ = decode_list(&body, &cuts);
    }

    #[test]
    fn arbitrary_bytes_are_no_list_and_no_watch_stream_that_panics(
        body in prop::collection::vec(any::<u8>(), 0..512),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut with_magic = b"k8s\0".to_vec();
        with_magic.extend_from_slice(&body);
        let _ = decode_list(&body, &cuts);
        let _ = decode_list(&with_magic, &cuts);
        let _ = decode_frames(&body, &cuts);
    }

    #[test]
    fn watch_frames_decode_to_their_events_wherever_the_stream_is_cut(
        items in config_maps(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let event_type = ["ADDED", "MODIFIED", "DELETED"][index % 3];
            let mut object = item.clone();
            object["apiVersion"] = "v1".into();
            object["kind"] = "ConfigMap".into();
            stream.extend(encode_watch_frame(event_type, &object).expect("an encodable event"));
            let config_map: ConfigMap = serde_json::from_value(item.clone()).expect("a ConfigMap");
            expected.push((event_type.to_owned(), config_map));
        }
        prop_assert_eq!(decode_frames(&stream, &cuts).map_err(|e| e.to_string()), Ok(expected));
    }

    #[test]
    fn a_watch_stream_cut_inside_a_frame_is_an_error_at_its_end(
        items in config_maps().prop_filter("at least one event", |items| !items.is_empty()),
        cut in 1usize..8,
    ) {
        let mut stream = Vec::new();
        for item in &items {
            let mut object = item.clone();
            object["apiVersion"] = "v1".into();
            object["kind"] = "ConfigMap".into();
            stream.extend(encode_watch_frame("ADDED", &object).expect("an encodable event"));
        }
        stream.truncate(stream.len() - cut.min(stream.len()));
        prop_assert!(decode_frames(&stream, &[]).is_err());
    }
}
