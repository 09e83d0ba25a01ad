//! What the workers do with a uid: delete a dependent whose owners are all gone (or waiting for
//! it), finish a foreground deletion once no dependent blocks it, orphan the dependents of an
//! owner deleted with `orphan`. Mirrors `garbagecollector.go`'s `attemptToDeleteItem`,
//! `classifyReferences`, `isDangling`, `processDeletingDependentsItem` and `attemptToOrphanWorker`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Preconditions};
use kube_core::{DynamicObject, metadata::PartialObjectMeta};
use kubegen_client::{
    Client, DeleteOptions, GetOptions, Patch, PatchOptions, PropagationPolicy, ResourceClient,
};
use serde_json::json;

use super::graph::{FOREGROUND, Node, ORPHAN, blocking};
use super::shared::Shared;
use crate::error::request;
use crate::worker::Next;
use crate::{Error, Result};

type MetaClient = ResourceClient<PartialObjectMeta<DynamicObject>>;

fn client_for(client: &Client, node: &Node) -> MetaClient {
    ResourceClient::dynamic_metadata(client.clone(), &node.resource, node.namespace.as_deref())
}

/// How a dependent's reference resolves (`classifyReferences`).
enum Reference {
    /// The owner exists and is not waiting for its dependents.
    Solid,
    /// The owner does not exist (or under another uid).
    Dangling,
    /// The owner is being deleted in the foreground.
    Waiting,
}

/// `attemptToDeleteItem` for `uid`.
pub(crate) async fn attempt_to_delete(shared: &Shared, uid: &str) -> Result<Next> {
    let Some(node) = shared.graph.lock().get(uid).cloned() else {
        return Ok(Next::Done);
    };
    if node.deleting {
        if node.deleting_dependents() {
            return deleting_dependents(shared, &node).await;
        }
        return Ok(Next::Done);
    }
    if node.owners.is_empty() {
        return Ok(Next::Done);
    }
    let api = client_for(&shared.client, &node);
    let latest = match api.get(&node.name, &GetOptions::default()).await {
        Ok(latest) if latest.metadata.uid.as_deref() == Some(uid) => latest,
        Ok(_) => return Ok(Next::Done),
        Err(e) if e.is_not_found() => return Ok(Next::Done),
        Err(e) => return Err(request(format!("get {}", describe(&node)))(e)),
    };
    let references = latest.metadata.owner_references.clone().unwrap_or_default();
    let (mut solid, mut gone) = (0, Vec::new());
    let mut waiting = false;
    for reference in &references {
        match resolve(shared, &node, reference).await? {
            None => return Ok(Next::Done),
            Some(Reference::Solid) => solid += 1,
            Some(Reference::Dangling) => gone.push(reference.uid.clone()),
            Some(Reference::Waiting) => {
                waiting = true;
                gone.push(reference.uid.clone());
            }
        }
    }
    if solid > 0 {
        if gone.is_empty() {
            return Ok(Next::Done);
        }
        remove_references(&api, &node, &references, &gone).await?;
        return Ok(Next::Done);
    }
    let has_dependents = !shared.graph.lock().dependents(uid).is_empty();
    let policy = if waiting && has_dependents {
        PropagationPolicy::Foreground
    } else if node.finalizers.iter().any(|f| f == ORPHAN) {
        PropagationPolicy::Orphan
    } else if node.finalizers.iter().any(|f| f == FOREGROUND) {
        PropagationPolicy::Foreground
    } else {
        PropagationPolicy::Background
    };
    let options = DeleteOptions::default()
        .propagation_policy(policy)
        .preconditions(Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: latest.metadata.resource_version.clone(),
        });
    match api.delete(&node.name, &options).await {
        Ok(()) => Ok(Next::Done),
        Err(e) if e.is_not_found() => Ok(Next::Done),
        Err(e) => Err(request(format!("delete {}", describe(&node)))(e)),
    }
}

/// Resolves one owner reference of `node` with a live read (`isDangling`). `None`: the
/// reference can never resolve (a cluster-scoped dependent naming a namespaced owner); the item
/// is left alone, as the real collector does, after a Warning event.
async fn resolve(
    shared: &Shared,
    node: &Node,
    reference: &OwnerReference,
) -> Result<Option<Reference>> {
    let Some(owner) = shared.resource_for(reference) else {
        shared.resync.notify_one();
        return Err(Error::InvalidObject {
            object: describe(node),
            reason: format!(
                "its owner's kind {} of {} is not served",
                reference.kind, reference.api_version
            ),
        });
    };
    let namespace = match (owner.namespaced, &node.namespace) {
        (false, _) => None,
        (true, Some(ns)) => Some(ns.as_str()),
        (true, None) => {
            super::events::invalid_namespace(shared, node, reference).await;
            return Ok(None);
        }
    };
    let mut resource = owner.resource.clone();
    resource.version = reference
        .api_version
        .rsplit('/')
        .next()
        .unwrap_or(&resource.version)
        .to_owned();
    let api = ResourceClient::dynamic_metadata(shared.client.clone(), &resource, namespace);
    match api.get(&reference.name, &GetOptions::default()).await {
        Ok(found) if found.metadata.uid.as_deref() == Some(reference.uid.as_str()) => {
            let finalizers = found.metadata.finalizers.unwrap_or_default();
            let waiting = found.metadata.deletion_timestamp.is_some()
                && finalizers.iter().any(|f| f == FOREGROUND);
            Ok(Some(if waiting {
                Reference::Waiting
            } else {
                Reference::Solid
            }))
        }
        Ok(_) => Ok(Some(Reference::Dangling)),
        Err(e) if e.is_not_found() => {
            let elsewhere = shared
                .graph
                .lock()
                .get(&reference.uid)
                .is_some_and(|o| o.namespace.is_some() && o.namespace != node.namespace);
            if elsewhere {
                super::events::invalid_namespace(shared, node, reference).await;
            }
            Ok(Some(Reference::Dangling))
        }
        Err(e) => Err(request(format!(
            "get the owner {} of {}",
            reference.name,
            describe(node)
        ))(e)),
    }
}

/// Drops the references to `owners` from `node` (`deleteOwnerRefJSONMergePatch`: the remaining
/// list, with the uid as precondition).
async fn remove_references(
    api: &MetaClient,
    node: &Node,
    references: &[OwnerReference],
    owners: &[String],
) -> Result<()> {
    let kept: Vec<&OwnerReference> = references
        .iter()
        .filter(|r| !owners.contains(&r.uid))
        .collect();
    let kept = if kept.is_empty() {
        json!(null)
    } else {
        json!(kept)
    };
    let patch = Patch::Merge(json!({"metadata": {"ownerReferences": kept, "uid": node.uid}}));
    match api
        .patch(&node.name, &patch, &PatchOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(request(format!(
            "remove owner references of {}",
            describe(node)
        ))(e)),
    }
}

/// `processDeletingDependentsItem`: an owner deleted in the foreground loses its
/// `foregroundDeletion` finalizer once no dependent blocks it; until then its blocking
/// dependents are deleted.
async fn deleting_dependents(shared: &Shared, owner: &Node) -> Result<Next> {
    let blockers: Vec<String> = {
        let graph = shared.graph.lock();
        blocking(&graph, &owner.uid)
            .into_iter()
            .filter(|n| !n.deleting)
            .map(|n| n.uid.clone())
            .collect()
    };
    let still_blocked = !blocking(&shared.graph.lock(), &owner.uid).is_empty();
    for uid in blockers {
        shared.delete_queue.add(uid);
    }
    if still_blocked {
        return Ok(Next::Done);
    }
    remove_finalizer(shared, owner, FOREGROUND).await?;
    Ok(Next::Done)
}

/// `attemptToOrphanWorker`: drops every dependent's reference to `uid`, then the owner's
/// `orphan` finalizer.
pub(crate) async fn attempt_to_orphan(shared: &Shared, uid: &str) -> Result<Next> {
    let Some(owner) = shared.graph.lock().get(uid).cloned() else {
        return Ok(Next::Done);
    };
    if !owner.orphaning() {
        return Ok(Next::Done);
    }
    let dependents: Vec<Node> = shared
        .graph
        .lock()
        .dependents(uid)
        .into_iter()
        .cloned()
        .collect();
    for dependent in &dependents {
        let api = client_for(&shared.client, dependent);
        let owners = [uid.to_owned()];
        remove_references(&api, dependent, &dependent.owners, &owners).await?;
    }
    remove_finalizer(shared, &owner, ORPHAN).await?;
    Ok(Next::Done)
}

/// `removeFinalizer`: a merge patch of the remaining finalizers at the read resourceVersion.
async fn remove_finalizer(shared: &Shared, node: &Node, finalizer: &str) -> Result<()> {
    let api = client_for(&shared.client, node);
    let latest = match api.get(&node.name, &GetOptions::default()).await {
        Ok(latest) if latest.metadata.uid.as_deref() == Some(node.uid.as_str()) => latest,
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(request(format!("get {}", describe(node)))(e)),
    };
    let current = latest.metadata.finalizers.unwrap_or_default();
    if !current.iter().any(|f| f == finalizer) {
        return Ok(());
    }
    let kept: Vec<&String> = current.iter().filter(|f| *f != finalizer).collect();
    let kept = if kept.is_empty() {
        json!(null)
    } else {
        json!(kept)
    };
    let rv = latest.metadata.resource_version;
    let patch = Patch::Merge(json!({"metadata": {"finalizers": kept, "resourceVersion": rv}}));
    match api
        .patch(&node.name, &patch, &PatchOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(request(format!(
            "remove the {finalizer} finalizer of {}",
            describe(node)
        ))(e)),
    }
}

/// `kind namespace/name` for messages.
pub(crate) fn describe(node: &Node) -> String {
    match &node.namespace {
        Some(ns) => format!("{} {ns}/{}", node.resource.kind, node.name),
        None => format!("{} {}", node.resource.kind, node.name),
    }
}
