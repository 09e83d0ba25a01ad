use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

use super::*;

#[test]
fn hash_is_stable_safe_and_changes_with_collisions() {
    let template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            ..ObjectMeta::default()
        }),
        spec: None,
    };
    let hash = template_hash(&template, None);
    assert_eq!(hash, template_hash(&template, None));
    assert!((1..=10).contains(&hash.len()));
    assert!(hash.bytes().all(|b| SAFE_ALPHABET.contains(&b)), "{hash}");
    assert_ne!(hash, template_hash(&template, Some(1)));
    // FNV-1a 32 of "a" is 0xe40c292c = 3826002220: digits map to alphabet[digit byte % 27].
    assert_eq!(fnv32a(b"a"), 3_826_002_220);
}

#[test]
fn go_json_sorts_keys_and_escapes_html() {
    let value = json!({"b": 1, "a": {"z": [true, null], "y": "<&>"}});
    assert_eq!(
        go_json(&value),
        r#"{"a":{"y":"\u003c\u0026\u003e","z":[true,null]},"b":1}"#
    );
}
