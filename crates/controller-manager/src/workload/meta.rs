//! Reading an object's metadata as the controllers need it: its key and description, its label
//! selector, its controller reference, and the object itself past the cache (`metav1`'s `LabelSelectorAsSelector`,
//! `GetControllerOf`, `NewControllerRef`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kube_core::{Resource, Selector};
use kubegen_client::{ApiObject, Client, GetOptions, ResourceClient};

use crate::{Error, Result, error::request};

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

/// The object as the API server has it now, read past the informer's cache: the GET a controller
/// makes before it adopts or releases (`RecheckDeletionTimestamp`'s, `canAdoptFunc`'s).
///
/// # Errors
/// The GET failed (a vanished object is `NotFound`).
pub(crate) async fn fetch_latest<K: ApiObject>(client: &Client, obj: &K) -> Result<K> {
    let meta = obj.meta();
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    let name = meta.name.as_deref().unwrap_or_default();
    ResourceClient::<K>::namespaced(client.clone(), namespace)
        .get(name, &GetOptions::default())
        .await
        .map_err(request(format!("get {}", describe(obj))))
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
