//! Deleting what a terminating namespace holds, and the status conditions that say how far it
//! got. Mirrors `pkg/controller/namespace/deletion/namespaced_resources_deleter.go`
//! (`deleteAllContent`, `deleteAllContentForGroupVersionResource`) and
//! `status_condition_utils.go` (the five `NamespaceDeletion*` / `Namespace*Remaining`
//! conditions, their reasons and messages).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NamespaceCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_core::{DynamicObject, metadata::PartialObjectMeta};
use kubegen_client::{
    Client, DeleteOptions, ListOptions, PropagationPolicy, ResourceClient, ServedResource,
};

/// What one pass over a namespace's content found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Pass {
    /// Discovery's error, when some group versions could not be read.
    pub(crate) discovery_error: Option<String>,
    /// Every request that failed.
    pub(crate) errors: Vec<String>,
    /// Objects still there, per `<resource>.<group>`.
    pub(crate) remaining: BTreeMap<String, usize>,
    /// Objects still there, per finalizer they carry.
    pub(crate) finalizers: BTreeMap<String, usize>,
}

impl Pass {
    /// Whether the namespace is empty and nothing failed: it can be finalized.
    pub(crate) fn done(&self) -> bool {
        self.discovery_error.is_none() && self.errors.is_empty() && self.remaining.is_empty()
    }
}

/// Deletes everything in `namespace` of `resources` (deletecollection where supported, else
/// list and delete each, always with background propagation) and counts what is left.
pub(crate) async fn delete_content(
    client: &Client,
    namespace: &str,
    resources: &[ServedResource],
    pass: &mut Pass,
) {
    let background = DeleteOptions::default().propagation_policy(PropagationPolicy::Background);
    let everything = ListOptions::default();
    for served in resources
        .iter()
        .filter(|r| r.namespaced && r.supports("delete"))
    {
        let api = ResourceClient::<PartialObjectMeta<DynamicObject>>::dynamic_metadata(
            client.clone(),
            &served.resource,
            Some(namespace),
        );
        let name = format!("{}.{}", served.resource.plural, served.resource.group);
        if served.supports("deletecollection") {
            if let Err(e) = api.delete_collection(&background, &everything).await {
                pass.errors.push(format!("{name}: {e}"));
            }
        } else if served.supports("list") {
            match api.list(&everything).await {
                Ok(list) => {
                    for item in list.items {
                        let object = item.metadata.name.unwrap_or_default();
                        match api.delete(&object, &background).await {
                            Err(e) if !e.is_not_found() => pass.errors.push(format!("{name}: {e}")),
                            _ => {}
                        }
                    }
                }
                Err(e) => pass.errors.push(format!("{name}: {e}")),
            }
        }
        if !served.supports("list") {
            continue;
        }
        match api.list(&everything).await {
            Ok(list) if !list.items.is_empty() => {
                pass.remaining.insert(name, list.items.len());
                for item in &list.items {
                    for finalizer in item.metadata.finalizers.iter().flatten() {
                        *pass.finalizers.entry(finalizer.clone()).or_default() += 1;
                    }
                }
            }
            Ok(_) => {}
            Err(e) => pass.errors.push(format!("{name}: {e}")),
        }
    }
}

/// The five deletion conditions for `pass`, keeping `previous`'s transition times for the
/// conditions whose status did not change (`updateNamespaceStatusFunc` and
/// `UpdateConditions`).
pub(crate) fn conditions(
    pass: &Pass,
    previous: &[NamespaceCondition],
    now: &Time,
) -> Vec<NamespaceCondition> {
    let discovery = match &pass.discovery_error {
        Some(e) => (true, "DiscoveryFailed", e.clone()),
        None => (
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered".into(),
        ),
    };
    let parsing = (
        false,
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed".into(),
    );
    let content = if pass.errors.is_empty() {
        let message = "All content successfully deleted, may be waiting on finalization";
        (false, "ContentDeleted", message.into())
    } else {
        let message = format!(
            "Failed to delete all resource types, {} remaining: {}",
            pass.errors.len(),
            pass.errors.join(", ")
        );
        (true, "ContentDeletionFailed", message)
    };
    let remaining = if pass.remaining.is_empty() {
        (
            false,
            "ContentRemoved",
            "All content successfully removed".into(),
        )
    } else {
        let each = pass
            .remaining
            .iter()
            .map(|(resource, n)| format!("{resource} has {n} resource instances"));
        let message = format!("Some resources are remaining: {}", join(each));
        (true, "SomeResourcesRemain", message)
    };
    let finalizers = if pass.finalizers.is_empty() {
        let message = "All content-preserving finalizers finished";
        (false, "ContentHasNoFinalizers", message.into())
    } else {
        let each = pass
            .finalizers
            .iter()
            .map(|(finalizer, n)| format!("{finalizer} in {n} resource instances"));
        let message = format!(
            "Some content in the namespace has finalizers remaining: {}",
            join(each)
        );
        (true, "SomeFinalizersRemain", message)
    };
    [
        ("NamespaceDeletionDiscoveryFailure", discovery),
        ("NamespaceDeletionGroupVersionParsingFailure", parsing),
        ("NamespaceDeletionContentFailure", content),
        ("NamespaceContentRemaining", remaining),
        ("NamespaceFinalizersRemaining", finalizers),
    ]
    .into_iter()
    .map(|(type_, (status, reason, message))| {
        let status = if status { "True" } else { "False" };
        let unchanged = previous
            .iter()
            .find(|c| c.type_ == type_ && c.status == status);
        NamespaceCondition {
            type_: type_.into(),
            status: status.into(),
            reason: Some(reason.into()),
            message: Some(message),
            last_transition_time: match unchanged {
                Some(c) => c.last_transition_time.clone(),
                None => Some(now.clone()),
            },
        }
    })
    .collect()
}

/// `items` sorted and joined with `, ` (the real messages sort them).
fn join(items: impl Iterator<Item = String>) -> String {
    let mut items: Vec<String> = items.collect();
    items.sort();
    items.join(", ")
}

#[cfg(test)]
#[path = "deleter_tests.rs"]
mod tests;
