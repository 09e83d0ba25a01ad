//! The hashes and encodings that name what the workload controllers create: a Pod template's
//! hash (the `pod-template-hash` of a Deployment's ReplicaSets, the `controller-revision-hash`
//! of a DaemonSet's revisions and Pods) and Go's JSON encoding of revision data.
//!
//! Mirrors `controller.ComputeHash` (`pkg/controller/controller_utils.go`),
//! `rand.SafeEncodeString` and the `encoding/json` output of a decoded map, which the
//! deployment, daemonset and statefulset controllers all build on.
//!
//! # Differences from kube-controller-manager
//! The real `ComputeHash` is FNV-32a over Go's `spew` dump of the `PodTemplateSpec`, which
//! cannot be reproduced outside Go. [`template_hash`] is FNV-32a over the template's canonical
//! JSON (k8s-openapi field order, sorted maps), followed by the collision count as 4
//! little-endian bytes as upstream, encoded like `rand.SafeEncodeString`: so names have the same
//! shape (`<owner>-<up to 10 characters of bcdfghjklmnpqrstvwxz2456789>`) and are stable, but
//! differ from a real cluster's for the same template.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::Value;

/// `rand.SafeEncodeString`'s alphabet: no vowels, no look-alikes.
pub(crate) const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-1a, 32 bits (Go's `hash/fnv.New32a`).
fn fnv32a(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The `pod-template-hash` of `template` with `collision_count` (see the module docs).
pub(crate) fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut bytes = serde_json::to_vec(template).unwrap_or_default();
    if let Some(count) = collision_count {
        bytes.extend_from_slice(&count.to_le_bytes());
    }
    fnv32a(&bytes)
        .to_string()
        .bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

/// `value` as Go's `json.Marshal` writes it after decoding into `map[string]interface{}`: object
/// keys sorted, compact, HTML characters escaped.
pub(crate) fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go_json(value, &mut out);
    out
}

fn write_go_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (key, value)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(key, out);
                out.push(':');
                write_go_json(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_go_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_go_string(s: &str, out: &mut String) {
    let quoted = Value::String(s.to_owned()).to_string();
    for c in quoted.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
#[path = "hash_tests.rs"]
mod tests;
