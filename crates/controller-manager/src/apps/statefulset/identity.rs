//! A StatefulSet Pod's identity: its name `<set>-<ordinal>`, the labels that carry it, its
//! hostname and subdomain, and the PersistentVolumeClaims `<claim>-<set>-<ordinal>` its volumes
//! name.
//!
//! Mirrors the identity and storage helpers of `pkg/controller/statefulset/stateful_set_utils.go`
//! (`getParentNameAndOrdinal`, `identityMatches`, `storageMatches`, `getPersistentVolumeClaims`,
//! `updateStorage`, `initIdentity`, `newVersionedStatefulSetPod`).
//!
//! # Why identity is stable
//! A replacement for `db-1` is again `db-1`, with the same claims (`data-db-1`) and hostname:
//! databases and quorum members find their peers and their data by these names.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, Volume,
};

use crate::workload::meta::controller_ref;
use crate::workload::pods::pod_from_template;
use crate::workload::versioned::Field;

/// The label naming a StatefulSet Pod (`apps.StatefulSetPodNameLabel`).
pub(crate) const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label carrying a Pod's ordinal (`apps.PodIndexLabel`).
pub(crate) const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label naming the revision a Pod was made from (`apps.StatefulSetRevisionLabel`).
pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";

/// The set's spec, defaulted when absent.
pub(crate) fn spec(set: &StatefulSet) -> StatefulSetSpec {
    set.spec.value().cloned().unwrap_or_default()
}

fn name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

/// `(parent, ordinal)` of a name ending in `-<digits>` that fit an `i32`
/// (`getParentNameAndOrdinal`); `None` for any other name.
pub(crate) fn parent_and_ordinal(pod_name: &str) -> Option<(&str, i32)> {
    let (parent, digits) = pod_name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(|ordinal| (parent, ordinal))
}

/// The ordinal of a Pod, if its name has one.
pub(crate) fn ordinal(pod: &Pod) -> Option<i32> {
    parent_and_ordinal(pod.metadata.name.as_deref().unwrap_or_default()).map(|(_, o)| o)
}

/// Whether the Pod's name says it belongs to `set` (`isMemberOf`).
pub(crate) fn is_member_of(set: &StatefulSet, pod: &Pod) -> bool {
    parent_and_ordinal(pod.metadata.name.as_deref().unwrap_or_default())
        .is_some_and(|(parent, _)| parent == name(set))
}

/// The first ordinal (`spec.ordinals.start`, 0 by default).
pub(crate) fn start_ordinal(spec: &StatefulSetSpec) -> i32 {
    spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0)
}

/// `spec.replicas`, 1 when unset, never negative.
pub(crate) fn replicas(spec: &StatefulSetSpec) -> i32 {
    spec.replicas.unwrap_or(1).max(0)
}

/// Whether `ordinal` is one the set should run (`podInOrdinalRange`).
pub(crate) fn in_range(spec: &StatefulSetSpec, ordinal: i32) -> bool {
    let start = start_ordinal(spec);
    ordinal >= start && ordinal < start.saturating_add(replicas(spec))
}

/// `<set>-<ordinal>`.
pub(crate) fn pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", name(set))
}

/// `<claim template>-<set>-<ordinal>`.
pub(crate) fn claim_name(
    set: &StatefulSet,
    template: &PersistentVolumeClaim,
    ordinal: i32,
) -> String {
    let claim = template.metadata.name.as_deref().unwrap_or_default();
    format!("{claim}-{}-{ordinal}", name(set))
}

/// The revision label of a Pod, empty when absent (`getPodRevision`).
pub(crate) fn pod_revision(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_LABEL))
        .map_or("", String::as_str)
}

/// Whether the Pod has the name, namespace and name label its ordinal gives it
/// (`identityMatches`).
pub(crate) fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let pod_name_now = pod.metadata.name.as_deref().unwrap_or_default();
    let Some((parent, ordinal)) = parent_and_ordinal(pod_name_now) else {
        return false;
    };
    let label = pod
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(POD_NAME_LABEL));
    parent == name(set)
        && pod_name_now == pod_name(set, ordinal)
        && pod.metadata.namespace == set.metadata.namespace
        && label.map(String::as_str) == Some(pod_name_now)
}

/// Whether every claim template has a volume of the Pod naming the Pod's own claim
/// (`storageMatches`).
pub(crate) fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some(ordinal) = ordinal(pod) else {
        return false;
    };
    let volumes = pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.as_deref())
        .unwrap_or_default();
    claim_templates(set).iter().all(|template| {
        let want = claim_name(set, template, ordinal);
        volumes.iter().any(|v| {
            Some(&v.name) == template.metadata.name.as_ref()
                && v.persistent_volume_claim
                    .as_ref()
                    .is_some_and(|c| c.claim_name == want)
        })
    })
}

fn claim_templates(set: &StatefulSet) -> Vec<PersistentVolumeClaim> {
    spec(set).volume_claim_templates.unwrap_or_default()
}

/// The claims the Pod with `ordinal` uses, one per template, in template order
/// (`getPersistentVolumeClaims`): named `<template>-<set>-<ordinal>`, labelled with the
/// template's labels plus the set's `matchLabels`.
pub(crate) fn claims_for(set: &StatefulSet, ordinal: i32) -> Vec<(String, PersistentVolumeClaim)> {
    let match_labels = spec(set).selector.match_labels.unwrap_or_default();
    claim_templates(set)
        .into_iter()
        .map(|template| {
            let mut claim = template.clone();
            claim.metadata.name = Some(claim_name(set, &template, ordinal));
            claim.metadata.namespace = set.metadata.namespace.clone();
            let labels = claim.metadata.labels.get_or_insert_with(BTreeMap::new);
            labels.extend(match_labels.clone());
            (template.metadata.name.unwrap_or_default(), claim)
        })
        .collect()
}

/// Points the Pod's claim volumes at its own claims, keeping its other volumes after them
/// (`updateStorage`).
pub(crate) fn update_storage(set: &StatefulSet, pod: &mut Pod) {
    let Some(ordinal) = ordinal(pod) else {
        return;
    };
    let claims = claims_for(set, ordinal);
    let pod_spec = pod.spec.get_or_insert_with(Default::default);
    let current = pod_spec.volumes.take().unwrap_or_default();
    let mut volumes: Vec<Volume> = claims
        .iter()
        .map(|(template, claim)| Volume {
            name: template.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.metadata.name.clone().unwrap_or_default(),
                read_only: None,
            }),
            ..Volume::default()
        })
        .collect();
    volumes.extend(
        current
            .into_iter()
            .filter(|v| !claims.iter().any(|(template, _)| *template == v.name)),
    );
    pod_spec.volumes = (!volumes.is_empty()).then_some(volumes);
}

/// Gives the Pod its name, namespace, name label and index label (`updateIdentity`).
pub(crate) fn update_identity(set: &StatefulSet, pod: &mut Pod) {
    let Some(ordinal) = ordinal(pod) else {
        return;
    };
    let name = pod_name(set, ordinal);
    pod.metadata.namespace = set.metadata.namespace.clone();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    pod.metadata.name = Some(name);
}

/// The Pod `set`'s template stamps out for `ordinal` (`newStatefulSetPod`), labelled with
/// `revision`.
pub(crate) fn new_pod(set: &StatefulSet, ordinal: i32, revision: &str) -> Pod {
    let spec = spec(set);
    let mut pod = pod_from_template(&spec.template, name(set), controller_ref(set));
    pod.metadata.name = Some(pod_name(set, ordinal));
    update_identity(set, &mut pod);
    let pod_spec = pod.spec.get_or_insert_with(Default::default);
    pod_spec.hostname = pod.metadata.name.clone();
    pod_spec.subdomain = spec.service_name.filter(|s| !s.is_empty());
    update_storage(set, &mut pod);
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(REVISION_LABEL.into(), revision.into());
    pod
}

/// Which template a missing Pod is made from (`newVersionedStatefulSetPod`): the current
/// revision's below the rolling update's partition (or, without a `rollingUpdate`, below the
/// count of current replicas), the update revision's from there on.
pub(crate) fn new_versioned_pod(
    current: (&StatefulSet, &str),
    update: (&StatefulSet, &str),
    ordinal: i32,
) -> Pod {
    let (current_set, current_revision) = current;
    let spec = spec(current_set);
    let start = start_ordinal(&spec);
    let strategy = spec.update_strategy.unwrap_or_default();
    let rolling = strategy.type_.as_deref() == Some("RollingUpdate");
    let current_replicas = current_set
        .status
        .as_ref()
        .and_then(|s| s.current_replicas)
        .unwrap_or(0);
    // Go's `&&` binds tighter than `||`: the partition case applies whatever the type.
    let below_current = match &strategy.rolling_update {
        None => rolling && ordinal < start + current_replicas,
        Some(r) => ordinal < start + r.partition.unwrap_or(0),
    };
    if below_current {
        return new_pod(current_set, ordinal, current_revision);
    }
    new_pod(update.0, ordinal, update.1)
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
