use serde_json::json;

use super::*;

fn err(expr: &str) -> String {
    ShardSelector::parse(expr).unwrap_err()
}

#[test]
fn hash_is_fnv1a_64_as_go_computes_it() {
    // Vectors from Go's `hash/fnv` New64a, which apimachinery's `HashField` wraps.
    for (input, hash) in [
        ("", 0xcbf2_9ce4_8422_2325_u64),
        ("a", 0xaf63_dc4c_8601_ec8c),
        ("abc", 0xe71f_a219_0541_574b),
        ("default", 0xebad_a516_8620_c5fe),
        ("test-uid-123", 0xd0ba_6798_3455_6c0b),
    ] {
        assert_eq!(hash_field(input), hash, "{input:?}");
    }
}

#[test]
fn ranges_are_half_open_over_the_uid_hash() {
    let object = json!({"metadata": {"uid": "test-uid-123", "namespace": "default"}});
    let at = |start: &str, end: &str| {
        ShardSelector::parse(&format!(
            "shardRange(object.metadata.uid, '{start}', '{end}')"
        ))
        .unwrap()
        .matches(&object)
    };
    assert!(at("0xd0ba679834556c0b", "0xd0ba679834556c0c"));
    assert!(!at("0xd0ba679834556c0c", "0x10000000000000000"));
    assert!(!at("0x0000000000000000", "0xd0ba679834556c0b"));
    assert!(at("0x8000000000000000", "0x10000000000000000"));
}

#[test]
fn namespace_key_hashes_the_namespace_and_ors_join_ranges() {
    let object = json!({"metadata": {"uid": "x", "namespace": "default"}});
    let selector = ShardSelector::parse(
        "shardRange(object.metadata.namespace,'0x0000000000000000','0x1000000000000000') || \
         (shardRange(object.metadata.namespace, \"0xe000000000000000\", '0xf000000000000000'))",
    )
    .unwrap();
    assert!(selector.matches(&object));
    assert_eq!(
        selector.canonical(),
        "shardRange(object.metadata.namespace, '0x0000000000000000', '0x1000000000000000') || \
         shardRange(object.metadata.namespace, '0xe000000000000000', '0xf000000000000000')"
    );
    let cluster_scoped = json!({"metadata": {"uid": "x"}});
    // "" hashes to 0xcbf29ce484222325: outside both ranges.
    assert!(!selector.matches(&cluster_scoped));
}

#[test]
fn empty_and_syntax_errors() {
    assert_eq!(
        err("   "),
        "empty shard selector is not allowed; omit the parameter for unfiltered lists"
    );
    assert!(err("shardRange(").starts_with("CEL parse error: Syntax error: "));
    assert!(err("shardRange(object.metadata.uid, '0x0").starts_with("CEL parse error: "));
    assert!(err("a ! b").starts_with("CEL parse error: "));
}

#[test]
fn only_shard_range_and_or_are_allowed() {
    assert_eq!(
        err("object.metadata.uid"),
        "unexpected expression kind 7; expected shardRange() call or || operator"
    );
    assert_eq!(
        err("'0x0'"),
        "unexpected expression kind 5; expected shardRange() call or || operator"
    );
    assert_eq!(
        err("size(object.metadata.uid)"),
        "unsupported function \"size\"; only shardRange() and || are allowed"
    );
    let range = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    assert_eq!(
        err(&format!("{range} && {range}")),
        "unsupported function \"_&&_\"; only shardRange() and || are allowed"
    );
}

#[test]
fn arguments_are_checked_in_order() {
    assert_eq!(
        err("shardRange(object.metadata.uid, '0x0000000000000000')"),
        "shardRange() requires exactly 3 arguments, got 2"
    );
    assert_eq!(
        err("shardRange('uid', '0x0000000000000000', '0x8000000000000000')"),
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind 5"
    );
    assert_eq!(
        err("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')"),
        "unsupported field path \"object.metadata.name\"; supported: object.metadata.uid, object.metadata.namespace"
    );
    assert_eq!(
        err("shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')"),
        "unsupported field path \"metadata.uid\"; supported: object.metadata.uid, object.metadata.namespace"
    );
    assert_eq!(
        err("shardRange(object.metadata.uid, 0, '0x8000000000000000')"),
        "hexStart must be a string literal, got int64"
    );
    assert_eq!(
        err("shardRange(object.metadata.uid, '0x0000000000000000', x)"),
        "hexEnd must be a string literal (e.g. '0xff'), got expression kind 3"
    );
}

#[test]
fn bounds_must_be_canonical_hex() {
    let with_start = |start: &str| {
        err(&format!(
            "shardRange(object.metadata.uid, '{start}', '0x10000000000000000')"
        ))
    };
    assert_eq!(
        with_start("00"),
        "hexStart must have '0x' prefix, got \"00\""
    );
    assert_eq!(
        with_start("0x"),
        "hexStart: hex value is required after '0x'"
    );
    assert_eq!(
        with_start("0x000000000000000000"),
        "hexStart: hex value too long (18 chars, max 17): \"000000000000000000\""
    );
    assert_eq!(
        with_start("0x000000000000000A"),
        "hexStart: invalid hex character \"A\" in \"0x000000000000000A\""
    );
    assert_eq!(
        with_start("0x10000000000000001"),
        "hexStart: 17-digit hex value must be '0x10000000000000000' (2^64), got \"0x10000000000000001\""
    );
    assert_eq!(
        with_start("0x0"),
        "hexStart must be a 0x-prefixed 16-digit hex value, got \"0x0\" (did you mean \"0x0000000000000000\"?)"
    );
}

#[test]
fn start_must_be_below_end_and_keys_must_agree() {
    assert_eq!(
        err("shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')"),
        "shard range start 0x8000000000000000 must be less than end 0x8000000000000000"
    );
    assert_eq!(
        err("shardRange(object.metadata.uid, '0x10000000000000000', '0x8000000000000000')"),
        "shard range start 0x10000000000000000 must be less than end 0x8000000000000000"
    );
    assert_eq!(
        err(
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || \
             shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"
        ),
        "all shard ranges must use the same field, got \"object.metadata.uid\" and \"object.metadata.namespace\""
    );
}
