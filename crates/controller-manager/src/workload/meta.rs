//! Reading an object's metadata as both controllers need it: its key and description, its label
//! selector, and its controller reference (`metav1`'s `LabelSelectorAsSelector`,
//! `GetControllerOf`, `NewControllerRef`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kube_core::{Resource, Selector};

use crate::{Error, Result};

/// `kind namespace/name` of an object, for messages.
pub(crate) fn describe<K: Resource<DynamicType = ()>>(obj: &K) -> String {
    let meta = obj.meta();
    format!(
        "{} {}/{}",
        K::kind(&()),
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The workqueue key of an object: `namespace/name`.
pub(crate) fn key_of<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Splits a `namespace/name` key.
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// `metav1.LabelSelectorAsSelector`: an absent selector selects nothing (`None`), an empty one
/// everything.
pub(crate) fn selector_of<K: Resource<DynamicType = ()>>(
    obj: &K,
    selector: Option<&LabelSelector>,
) -> Result<Option<Selector>> {
    let Some(selector) = selector else {
        return Ok(None);
    };
    Selector::try_from(selector.clone())
        .map(Some)
        .map_err(|e| Error::InvalidObject {
            object: describe(obj),
            reason: format!("invalid label selector: {e}"),
        })
}

/// Whether `selector` (from [`selector_of`]) selects an object with `labels`.
pub(crate) fn selects(
    selector: Option<&Selector>,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    use kube_core::SelectorExt;
    static EMPTY: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    selector.is_some_and(|s| s.matches(labels.unwrap_or(&EMPTY)))
}

/// The controller reference of an object (`metav1.GetControllerOf`).
pub(crate) fn controller_of<K: Resource>(obj: &K) -> Option<&OwnerReference> {
    obj.meta()
        .owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|r| r.controller == Some(true))
}

/// A controller reference to `owner` (`metav1.NewControllerRef`).
pub(crate) fn controller_ref<K: Resource<DynamicType = ()>>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.meta().name.clone().unwrap_or_default(),
        uid: owner.meta().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
