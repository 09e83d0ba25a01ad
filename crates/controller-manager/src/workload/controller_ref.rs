//! Adopting orphans and releasing strays: who controls an object is decided by its controller
//! `ownerReference`, reconciled against the owner's selector.
//!
//! Mirrors `BaseControllerRefManager.ClaimObject` and `RecheckDeletionTimestamp` of
//! `pkg/controller/controller_ref_manager.go`.
//!
//! # Rules
//! - Controlled by someone else: not ours, left alone.
//! - Controlled by us and selected: ours. Controlled by us but no longer selected: released
//!   (our reference removed) unless we are being deleted.
//! - Orphan, selected, neither side being deleted: adopted (our controller reference added),
//!   after one uncached GET proves the owner still exists with the same UID and is not being
//!   deleted, so a just-deleted owner never adopts.
//!
//! A 404 while adopting or releasing means the object is gone: not ours, no error.

use std::{future::Future, sync::Arc};

use kube_core::{Resource, Selector};
use kubegen_client::{ApiObject, Client, Patch, PatchOptions, ResourceClient};
use serde_json::json;

use super::meta::{controller_of, controller_ref, describe, selects};
use super::shared::FIELD_MANAGER;
use crate::{Error, Result, error::request};

/// Claims `objects` for `owner`: returns those it controls after adopting and releasing.
///
/// `recheck` is the uncached GET of the owner, called at most once and only before the first
/// adoption.
///
/// # Errors
/// The first failed adoption or release (after trying all of them), or a failed recheck.
pub(crate) async fn claim<O, K, F, Fut>(
    client: &Client,
    owner: &O,
    selector: Option<&Selector>,
    objects: Vec<Arc<K>>,
    recheck: F,
) -> Result<Vec<Arc<K>>>
where
    O: Resource<DynamicType = ()>,
    K: ApiObject + Resource<DynamicType = ()>,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<O>>,
{
    let owner_uid = owner.meta().uid.clone().unwrap_or_default();
    let owner_deleting = owner.meta().deletion_timestamp.is_some();
    let mut recheck = Some(recheck);
    let mut claimed = Vec::new();
    let mut first_error = None;
    for obj in objects {
        let selected = selects(selector, obj.meta().labels.as_ref());
        let outcome = match controller_of(obj.as_ref()) {
            Some(r) if r.uid != owner_uid => Ok(false),
            Some(_) if selected => Ok(true),
            Some(_) if owner_deleting => Ok(false),
            Some(_) => release(client, owner, obj.as_ref()).await.map(|()| false),
            None if owner_deleting || !selected => Ok(false),
            None if obj.meta().deletion_timestamp.is_some() => Ok(false),
            None if obj.meta().namespace != owner.meta().namespace => Ok(false),
            None => {
                if let Some(recheck) = recheck.take() {
                    can_adopt(owner, recheck().await)?;
                }
                adopt(client, owner, obj.as_ref()).await.map(|()| true)
            }
        };
        match outcome {
            Ok(true) => claimed.push(obj),
            Ok(false) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(claimed),
    }
}

/// `RecheckDeletionTimestamp`: the fresh owner must be the same object and not being deleted.
fn can_adopt<O: Resource<DynamicType = ()>>(owner: &O, fresh: Result<O>) -> Result<()> {
    let fresh = fresh?;
    let (want, got) = (&owner.meta().uid, &fresh.meta().uid);
    if want != got {
        return Err(Error::InvalidObject {
            object: describe(owner),
            reason: format!(
                "original {} is gone: got uid {}, wanted {}",
                O::kind(&()),
                got.as_deref().unwrap_or_default(),
                want.as_deref().unwrap_or_default()
            ),
        });
    }
    if fresh.meta().deletion_timestamp.is_some() {
        return Err(Error::InvalidObject {
            object: describe(owner),
            reason: "has just been deleted: cannot adopt".into(),
        });
    }
    Ok(())
}

/// Adds `owner`'s controller reference (`AdoptPod` / `AdoptReplicaSet`): a strategic merge
/// patch keyed by `uid`, guarded by the object's UID.
async fn adopt<O, K>(client: &Client, owner: &O, obj: &K) -> Result<()>
where
    O: Resource<DynamicType = ()>,
    K: ApiObject + Resource<DynamicType = ()>,
{
    let patch = json!({"metadata": {
        "ownerReferences": [controller_ref(owner)],
        "uid": obj.meta().uid,
    }});
    send(client, obj, patch, "adopt").await
}

/// Removes `owner`'s reference (`ReleasePod` / `ReleaseReplicaSet`).
async fn release<O, K>(client: &Client, owner: &O, obj: &K) -> Result<()>
where
    O: Resource<DynamicType = ()>,
    K: ApiObject + Resource<DynamicType = ()>,
{
    let patch = json!({"metadata": {
        "ownerReferences": [{"$patch": "delete", "uid": owner.meta().uid}],
        "uid": obj.meta().uid,
    }});
    send(client, obj, patch, "release").await
}

async fn send<K>(client: &Client, obj: &K, patch: serde_json::Value, verb: &str) -> Result<()>
where
    K: ApiObject + Resource<DynamicType = ()>,
{
    let meta = obj.meta();
    let resources: ResourceClient<K> = ResourceClient::namespaced(
        client.clone(),
        meta.namespace.as_deref().unwrap_or_default(),
    );
    resources
        .patch(
            meta.name.as_deref().unwrap_or_default(),
            &Patch::Strategic(patch),
            &PatchOptions::default().field_manager(FIELD_MANAGER),
        )
        .await
        .map(drop)
        .map_err(request(format!("{verb} {}", describe(obj))))
}
