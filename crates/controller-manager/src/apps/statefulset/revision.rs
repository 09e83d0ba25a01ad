//! A StatefulSet's revisions: each Pod template the set has had is kept as a
//! `ControllerRevision` named `<set>-<hash>`, so Pods can be labelled with the revision they were
//! made from and a rolling update knows which Pods are old.
//!
//! Mirrors `getPatch`, `newRevision`, `ApplyRevision` and `nextRevision` of
//! `pkg/controller/statefulset/stateful_set_utils.go`, and `NewControllerRevision`,
//! `HashControllerRevision`, `EqualRevision` and `SortControllerRevisions` of
//! `pkg/controller/history/controller_history.go`.
//!
//! # Same names as a real cluster
//! A revision's data is the strategic merge patch `{"spec":{"template":{...,"$patch":"replace"}}}`
//! as Go's `encoding/json` writes a map: keys sorted, no spaces, `<`, `>` and `&` escaped. Its
//! name hashes those bytes (32-bit FNV-1) with the collision count, written as Go's
//! `rand.SafeEncodeString` does. So the same template yields the same revision name here as on
//! v1.36 (`db-5685d99b96`), provided the stored template reads back the same.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::{Value, json};

use super::identity::spec;
use crate::workload::hash::{SAFE_ALPHABET, go_json};
use crate::workload::meta::{controller_ref, describe};
use crate::workload::versioned::Field;
use crate::{Error, Result};

/// The label carrying a revision's hash (`ControllerRevisionHashLabel`).
const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// 32-bit FNV-1 (multiply, then xor) of `bytes`, as Go's `hash/fnv.New32`.
fn fnv1_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        h.wrapping_mul(0x0100_0193) ^ u32::from(*b)
    })
}

/// The hash of a revision's data with a collision count (`HashControllerRevision`).
pub(crate) fn hash(data: &Value, collision_count: i32) -> String {
    let mut bytes = go_json(data).into_bytes();
    bytes.extend_from_slice(collision_count.to_string().as_bytes());
    fnv1_32(&bytes)
        .to_string()
        .bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

/// The revision data of `set`'s template (`getPatch`).
///
/// # Errors
/// The template cannot be serialized (never for a decoded object).
pub(crate) fn patch_of(set: &StatefulSet) -> Result<Value> {
    let mut template = serde_json::to_value(&spec(set).template).map_err(|e| invalid(set, &e))?;
    if let Value::Object(map) = &mut template {
        map.insert("$patch".into(), json!("replace"));
    }
    Ok(json!({"spec": {"template": template}}))
}

fn invalid(set: &StatefulSet, e: &dyn std::fmt::Display) -> Error {
    Error::InvalidObject {
        object: describe(set),
        reason: e.to_string(),
    }
}

/// The data of a stored revision.
pub(crate) fn data_of(revision: &ControllerRevision) -> Option<&Value> {
    revision.data.value().map(|raw| &raw.0)
}

/// The revision number of a stored revision.
pub(crate) fn number_of(revision: &ControllerRevision) -> i64 {
    revision.revision.value().copied().unwrap_or(0)
}

/// The revision `set` would have now, numbered `number` (`newRevision`): labelled with the
/// template's labels and the hash, annotated with the set's annotations, controlled by the set.
///
/// # Errors
/// As [`patch_of`].
pub(crate) fn new_revision(
    set: &StatefulSet,
    number: i64,
    collision_count: i32,
) -> Result<ControllerRevision> {
    let data = patch_of(set)?;
    let hash = hash(&data, collision_count);
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    let prefix: String = set_name.chars().take(223).collect();
    let mut labels = spec(set)
        .template
        .metadata
        .and_then(|m| m.labels)
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash.clone());
    Ok(ControllerRevision {
        metadata: ObjectMeta {
            name: Some(format!("{prefix}-{hash}")),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(set.metadata.annotations.clone().unwrap_or_default()),
            owner_references: Some(vec![controller_ref(set)]),
            ..ObjectMeta::default()
        },
        data: Field::of(RawExtension(data)),
        revision: Field::of(number),
    })
}

/// Whether two revisions hold the same data (`EqualRevision`).
pub(crate) fn equal(a: &ControllerRevision, b: &ControllerRevision) -> bool {
    data_of(a).map(go_json) == data_of(b).map(go_json)
}

/// `set` with the template `revision` recorded (`ApplyRevision`: the patch replaces the
/// template).
///
/// # Errors
/// The revision's data holds no template this version can read.
pub(crate) fn apply(set: &StatefulSet, revision: &ControllerRevision) -> Result<StatefulSet> {
    let mut template = data_of(revision)
        .and_then(|d| d.get("spec"))
        .and_then(|s| s.get("template"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Value::Object(map) = &mut template {
        map.remove("$patch");
    }
    let template: PodTemplateSpec = serde_json::from_value(template).map_err(|e| {
        invalid(
            set,
            &format!(
                "revision {}: {e}",
                revision.metadata.name.as_deref().unwrap_or_default()
            ),
        )
    })?;
    let mut applied = set.clone();
    applied.spec.value_mut().template = template;
    Ok(applied)
}

/// Sorts revisions oldest first: by number, then creation time, then name
/// (`SortControllerRevisions`).
pub(crate) fn sort(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        number_of(a)
            .cmp(&number_of(b))
            .then_with(|| {
                let created = |r: &ControllerRevision| r.metadata.creation_timestamp.clone();
                created(a).cmp(&created(b))
            })
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// The number after the newest of sorted `revisions` (`nextRevision`).
pub(crate) fn next_number(revisions: &[ControllerRevision]) -> i64 {
    revisions.last().map_or(1, |r| number_of(r) + 1)
}

#[cfg(test)]
#[path = "revision_tests.rs"]
mod tests;
