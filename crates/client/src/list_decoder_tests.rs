use super::*;
use k8s_openapi::api::core::v1::ConfigMap;

/// A list body whose items carry the nastiest strings we can think of.
const BODY: &str = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"tok"},
 "items":[
  {"metadata":{"name":"a","namespace":"ns"},"data":{"k":"}{]["}},
  {"metadata":{"name":"b"},"data":{"quote":"say \"}\" \\","unicode":"\u007d\u00e9"}},
  {"metadata":{"name":"c"},"data":{}}
 ]}"#;

fn decode_chunks(chunks: &[&[u8]]) -> Result<ObjectList<ConfigMap>> {
    let mut decoder = ListDecoder::<ConfigMap>::new("/api/v1/configmaps");
    for chunk in chunks {
        decoder.feed(chunk)?;
        decoder.check_invariants();
    }
    decoder.finish()
}

fn names(list: &ObjectList<ConfigMap>) -> Vec<String> {
    list.items
        .iter()
        .map(|i| i.metadata.name.clone().unwrap_or_default())
        .collect()
}

fn data(list: &ObjectList<ConfigMap>, item: usize, key: &str) -> String {
    list.items[item]
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .cloned()
        .unwrap_or_default()
}

#[test]
fn decodes_items_metadata_and_types() -> Result<()> {
    let list = decode_chunks(&[BODY.as_bytes()])?;
    assert_eq!(names(&list), ["a", "b", "c"]);
    assert_eq!(data(&list, 0, "k"), "}{][");
    assert_eq!(data(&list, 1, "quote"), "say \"}\" \\");
    assert_eq!(data(&list, 1, "unicode"), "}\u{e9}");
    assert_eq!(list.metadata.resource_version.as_deref(), Some("42"));
    assert_eq!(list.metadata.continue_.as_deref(), Some("tok"));
    assert_eq!(list.types.kind, "ConfigMapList");
    Ok(())
}

#[test]
fn split_at_every_byte_offset_gives_the_same_list() -> Result<()> {
    let whole = decode_chunks(&[BODY.as_bytes()])?;
    let bytes = BODY.as_bytes();
    for cut in 0..=bytes.len() {
        let split = decode_chunks(&[&bytes[..cut], &bytes[cut..]])?;
        assert_eq!(split.items, whole.items, "cut at {cut}");
        assert_eq!(split.metadata, whole.metadata, "cut at {cut}");
    }
    Ok(())
}

#[test]
fn one_byte_chunks_give_the_same_list() -> Result<()> {
    let whole = decode_chunks(&[BODY.as_bytes()])?;
    let chunks: Vec<&[u8]> = BODY.as_bytes().chunks(1).collect();
    assert_eq!(decode_chunks(&chunks)?.items, whole.items);
    Ok(())
}

#[test]
fn metadata_after_items_is_still_read() -> Result<()> {
    let body = r#"{"items":[{"metadata":{"name":"x"}}],"metadata":{"resourceVersion":"7"},"kind":"ConfigMapList"}"#;
    let list = decode_chunks(&[body.as_bytes()])?;
    assert_eq!(names(&list), ["x"]);
    assert_eq!(list.metadata.resource_version.as_deref(), Some("7"));
    Ok(())
}

#[test]
fn huge_item_split_into_many_chunks_is_decoded() -> Result<()> {
    let big = "x{\\\"".repeat(300_000);
    let body = format!(
        r#"{{"items":[{{"metadata":{{"name":"big"}},"data":{{"v":"{big}"}}}},{{"metadata":{{"name":"small"}}}}]}}"#
    );
    let chunks: Vec<&[u8]> = body.as_bytes().chunks(16 * 1024 + 3).collect();
    let list = decode_chunks(&chunks)?;
    assert_eq!(names(&list), ["big", "small"]);
    assert_eq!(data(&list, 0, "v").len(), 300_000 * 3);
    Ok(())
}

#[test]
fn each_item_sets_the_size_guess_for_the_next() -> Result<()> {
    let mut decoder = ListDecoder::<ConfigMap>::new("/api/v1/configmaps");
    let first = r#"{"metadata":{"name":"first-item-is-long"}}"#;
    decoder.feed(format!(r#"{{"items":[{first},"#).as_bytes())?;
    assert_eq!(decoder.last_item_len, first.len(), "decoded in place");
    // The next item arrives in pieces shorter than the guess: captured, then decoded.
    let second = r#"{"metadata":{"name":"b"}}"#;
    for piece in second.as_bytes().chunks(5) {
        decoder.feed(piece)?;
    }
    assert_eq!(
        decoder.last_item_len,
        second.len(),
        "decoded from the capture"
    );
    decoder.feed(b"]}")?;
    assert_eq!(names(&decoder.finish()?), ["first-item-is-long", "b"]);
    Ok(())
}

#[test]
fn null_or_empty_items_give_an_empty_list_with_defaults() -> Result<()> {
    for body in [r#"{"items":null}"#, r#"{ "items" : [ ] }"#, "{}"] {
        let list = decode_chunks(&[body.as_bytes()])?;
        assert!(list.items.is_empty(), "{body}");
        assert_eq!(list.types.kind, "List");
        assert_eq!(list.types.api_version, "v1");
    }
    Ok(())
}

#[test]
fn status_body_becomes_an_api_error() {
    let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"continue token expired","reason":"Expired","code":410}"#;
    let err = decode_chunks(&[body.as_bytes()]).expect_err("a Status is not a list");
    assert!(err.is_gone(), "{err:?}");
    assert_eq!(
        err.status().map(|s| s.message.as_str()),
        Some("continue token expired")
    );
}

#[test]
fn truncated_body_is_a_malformed_list_error() {
    let cut = &BODY.as_bytes()[..BODY.len() / 2];
    let err = decode_chunks(&[cut]).expect_err("truncated");
    assert!(matches!(err, Error::MalformedList { .. }), "{err:?}");
    assert!(err.to_string().contains("/api/v1/configmaps"), "{err}");
}

#[test]
fn invalid_item_error_names_its_index() {
    let body = r#"{"items":[{"metadata":{"name":"ok"}},{"metadata":{"name":5}}]}"#;
    let err = decode_chunks(&[body.as_bytes()]).expect_err("bad item");
    assert!(
        err.to_string()
            .starts_with("decoding list item 1 of /api/v1/configmaps"),
        "{err}"
    );
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    for body in [
        "<html>502</html>",
        "[1,2]",
        "{\"items\":{}}",
        "{\"a\" 1}",
        "{}}",
        "{\"items\":[1 2]}",
    ] {
        assert!(
            decode_chunks(&[body.as_bytes()]).is_err(),
            "{body} accepted"
        );
    }
}

/// Decode cost of the streaming decoder relative to `serde_json::from_slice` of the whole body
/// (the floor). A measurement, not a timed assertion: run it in release with
/// `cargo test --release -p kubegen-client --lib measure_ -- --ignored --nocapture`.
#[test]
#[ignore = "measurement; run in release with --ignored --nocapture"]
fn measure_streaming_decode_against_the_serde_floor() -> Result<()> {
    let filler = "v".repeat(900);
    let items: Vec<String> = (0..10_000)
        .map(|i| {
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}","namespace":"bench","uid":"00000000-0000-0000-0000-{i:012}","resourceVersion":"{i}","labels":{{"app":"bench","idx":"{i}"}}}},"data":{{"payload":"{filler}"}}}}"#
            )
        })
        .collect();
    let body = format!(
        r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"10000"}},"items":[{}]}}"#,
        items.join(",")
    );
    let rounds = 25;
    let mut floor = std::time::Duration::MAX;
    let mut streaming = std::time::Duration::MAX;
    for _ in 0..rounds {
        // Each result is dropped before the other decoder runs, so both start from the same heap.
        let started = std::time::Instant::now();
        let whole: ObjectList<ConfigMap> =
            serde_json::from_slice(body.as_bytes()).map_err(|source| Error::Decode {
                what: "floor".into(),
                excerpt: String::new(),
                source,
            })?;
        floor = floor.min(started.elapsed());
        let expected = whole.items.len();
        drop(whole);
        let started = std::time::Instant::now();
        let chunks: Vec<&[u8]> = body.as_bytes().chunks(chunk_size()).collect();
        let list = decode_chunks(&chunks)?;
        streaming = streaming.min(started.elapsed());
        assert_eq!(list.items.len(), expected);
    }
    let mb = body.len() as f64 / 1e6;
    println!(
        "body {mb:.1} MB, 10k ConfigMaps: serde floor {floor:?} ({:.0} MB/s), streaming {streaming:?} ({:.0} MB/s), ratio {:.2}",
        mb / floor.as_secs_f64(),
        mb / streaming.as_secs_f64(),
        streaming.as_secs_f64() / floor.as_secs_f64()
    );
    Ok(())
}

fn chunk_size() -> usize {
    std::env::var("CHUNK")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(16 * 1024)
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn list_body(values: &[String]) -> String {
        let items: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::json!({"metadata": {"name": format!("n{i}")}, "data": {"v": v}})
                    .to_string()
            })
            .collect();
        format!(
            r#"{{"metadata":{{"resourceVersion":"1"}},"items":[{}]}}"#,
            items.join(" ,\n")
        )
    }

    proptest! {
        /// Any string contents (quotes, braces, backslashes, unicode), any chunking: same list.
        #[test]
        fn chunking_never_changes_the_result(
            values in proptest::collection::vec("[\"{}\\[\\]\\\\a-z\u{e9}\u{1F600} ]{0,40}", 0..8),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let body = list_body(&values);
            let bytes = body.as_bytes();
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut last = 0;
            for p in points {
                chunks.push(&bytes[last..p]);
                last = p;
            }
            chunks.push(&bytes[last..]);
            let list = decode_chunks(&chunks).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let decoded: Vec<String> = (0..values.len()).map(|i| data(&list, i, "v")).collect();
            prop_assert_eq!(decoded, values);
        }

        /// Arbitrary bytes in arbitrary chunks: an error or a list, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), cut in any::<prop::sample::Index>()) {
            let at = cut.index(bytes.len() + 1);
            let _ = decode_chunks(&[&bytes[..at], &bytes[at..]]);
        }

        /// Arbitrary bytes after a valid prefix exercise the inner states too.
        #[test]
        fn garbage_after_a_valid_prefix_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..100)) {
            let mut body = br#"{"items":[{"metadata":{"name":"a"}},"#.to_vec();
            body.extend_from_slice(&tail);
            let _ = decode_chunks(&[&body]);
        }
    }
}
