use super::*;

fn entry(
    bytes: &[u8],
    protobuf: bool,
    labels: &[(&str, &str)],
    filed: &[(String, Vec<String>)],
) -> Encoded {
    let parts = Parts {
        resource_version: "42",
        labels: labels.iter().copied(),
        filed,
    };
    Encoded::new(bytes, protobuf, parts).unwrap()
}

fn owned(filed: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    filed
        .iter()
        .map(|(name, values)| {
            (
                (*name).to_owned(),
                values.iter().map(|v| (*v).to_owned()).collect(),
            )
        })
        .collect()
}

#[test]
fn every_part_reads_back_as_written() {
    let filed = owned(&[("by-app", &["web", "db"]), ("empty", &[])]);
    let labels = [("app", "web"), ("tier", "ünïcode")];
    let encoded = entry(b"{\"kind\":\"ConfigMap\"}", false, &labels, &filed);
    assert_eq!(encoded.bytes(), b"{\"kind\":\"ConfigMap\"}");
    assert!(!encoded.is_protobuf());
    assert_eq!(encoded.resource_version(), "42");
    assert_eq!(encoded.labels().collect::<Vec<_>>(), labels);
    assert_eq!(encoded.filed("by-app"), ["web", "db"]);
    assert!(encoded.filed("empty").is_empty());
    assert!(
        encoded.is_filed("empty"),
        "filed under no value is still filed"
    );
    assert!(!encoded.is_filed("other"));
    assert!(encoded.filed("other").is_empty());
    assert_eq!(encoded.len(), 20);
}

#[test]
fn empty_parts_and_protobuf_bytes() {
    let encoded = entry(b"", true, &[], &[]);
    assert!(encoded.is_protobuf());
    assert!(encoded.bytes().is_empty());
    assert_eq!(encoded.labels().count(), 0);
    assert_eq!(encoded.resource_version(), "42");
}

#[test]
fn the_block_is_exactly_the_parts_and_the_bytes() {
    let encoded = entry(
        b"0123456789",
        false,
        &[("a", "b")],
        &owned(&[("i", &["v"])]),
    );
    // header 5, rv 4+2, labels 4 + (4+1)*2, filed 4 + (4+1) + 4 + (4+1), bytes 10
    assert_eq!(encoded.block.len(), 5 + 6 + 14 + 18 + 10);
}

#[test]
fn with_filed_keeps_everything_and_adds_the_index() {
    let encoded = entry(b"x", true, &[("app", "web")], &owned(&[("a", &["1"])]));
    let more = encoded
        .with_filed("b", vec!["2".into(), "3".into()])
        .unwrap();
    assert_eq!(more.bytes(), b"x");
    assert!(more.is_protobuf());
    assert_eq!(more.resource_version(), "42");
    assert_eq!(more.labels().collect::<Vec<_>>(), [("app", "web")]);
    assert_eq!(more.filed("a"), ["1"]);
    assert_eq!(more.filed("b"), ["2", "3"]);
    assert!(!more.same(&encoded), "a new entry");
    assert!(encoded.same(&encoded.clone()), "a clone is the same entry");
    let equal = entry(b"x", true, &[("app", "web")], &owned(&[("a", &["1"])]));
    assert!(!equal.same(&encoded), "an equal entry is not the same one");
}

#[test]
fn a_truncated_block_reads_as_empty_parts_without_panicking() {
    for cut in 0..20 {
        let full = entry(b"abc", false, &[("k", "v")], &owned(&[("i", &["v"])]));
        let truncated = Encoded {
            block: Arc::from(&full.block[..cut.min(full.block.len())]),
        };
        let _ = (
            truncated.bytes(),
            truncated.is_protobuf(),
            truncated.resource_version(),
            truncated.labels().count(),
            truncated.filed("i"),
        );
    }
}
