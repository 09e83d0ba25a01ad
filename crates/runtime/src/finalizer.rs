//! The finalizer helper: cleanup that must run before an object goes away. The counterpart of
//! kube-rs's `runtime::finalizer()` and controller-runtime's `controllerutil.AddFinalizer` /
//! `RemoveFinalizer` pattern.
//!
//! [`finalizer`] does the whole dance for a reconcile: it adds the finalizer to an object that
//! lacks it (then applies with the written object), calls the reconcile with
//! [`Event::Apply`] while the object lives, and once the object is being deleted calls it with
//! [`Event::Cleanup`] and, when the cleanup succeeded, removes the finalizer so the API server
//! can delete the object:
//!
//! ```ignore
//! finalizer(&client, "example.com/cleanup", vm, |event| async move {
//!     match event {
//!         Event::Apply(vm) => self.ensure_machine(&vm).await,
//!         Event::Cleanup(vm) => self.destroy_machine(&vm).await,
//!     }
//! })
//! .await
//! ```
//!
//! The building blocks stay public for controllers that write their own flow: [`step`] decides,
//! from the object alone, which of four things is due, and [`with_finalizer`] and
//! [`without_finalizer`] compute the JSON patch that adds or removes the name, with a `test` of
//! the current list so two writers never drop each other's finalizers (kube-rs does the same; a
//! failed test is a 422 and the reconcile is retried).
//!
//! # Differences from kube-rs
//! After adding the finalizer, kube-rs returns and waits for the write's watch event; here the
//! apply runs at once on the object the patch returned, because a controller filtering updates by
//! generation ([`crate::Builder::generation_changes_only`]) never sees that event.

use std::future::Future;
use std::sync::Arc;

use kube_core::Resource;
use kubegen_client::{ApiObject, Client, Patch, PatchOptions, ResourceClient};
use serde_json::{Value, json};

use crate::reconcile::Action;

/// What [`finalizer`] asks the reconcile to do.
#[derive(Debug)]
pub enum Event<K> {
    /// The object lives and carries the finalizer: make the world match it.
    Apply(Arc<K>),
    /// The object is being deleted: release what it holds. On success the finalizer is removed.
    Cleanup(Arc<K>),
}

/// Why [`finalizer`] failed; the reconcile is retried (or not) by the error policy.
#[derive(Debug, thiserror::Error)]
pub enum Error<E: std::error::Error + 'static> {
    /// The patch adding the finalizer failed.
    #[error("adding the finalizer {finalizer} failed")]
    AddFailed {
        /// The finalizer.
        finalizer: String,
        /// The API error.
        #[source]
        source: kubegen_client::Error,
    },
    /// The patch removing the finalizer failed; the cleanup ran and will run again.
    #[error("removing the finalizer {finalizer} failed")]
    RemoveFailed {
        /// The finalizer.
        finalizer: String,
        /// The API error.
        #[source]
        source: kubegen_client::Error,
    },
    /// The reconcile's [`Event::Apply`] failed.
    #[error("apply failed")]
    ApplyFailed(#[source] E),
    /// The reconcile's [`Event::Cleanup`] failed; the finalizer stays.
    #[error("cleanup failed")]
    CleanupFailed(#[source] E),
}

/// Runs `reconcile` for `object` under the finalizer `name`: adds the finalizer first if
/// missing, calls [`Event::Apply`] while the object lives, and [`Event::Cleanup`] then removes
/// the finalizer once it is being deleted. Being deleted without the finalizer: `Action::Done`.
///
/// # Errors
/// The patch that adds or removes the finalizer failed, or the reconcile did.
pub async fn finalizer<K, E, F, Fut>(
    client: &Client,
    name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<Action, Error<E>>
where
    K: ApiObject,
    E: std::error::Error + 'static,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
{
    let api = match object.meta().namespace.as_deref() {
        Some(namespace) => ResourceClient::<K>::namespaced(client.clone(), namespace),
        None => ResourceClient::<K>::cluster(client.clone()),
    };
    let object_name = object.meta().name.clone().unwrap_or_default();
    let patch = |patch: Value| {
        let api = api.clone();
        let object_name = object_name.clone();
        async move {
            api.patch(&object_name, &Patch::Json(patch), &PatchOptions::default())
                .await
        }
    };
    match step(object.as_ref(), name) {
        Step::Nothing => Ok(Action::Done),
        Step::Apply => reconcile(Event::Apply(object))
            .await
            .map_err(Error::ApplyFailed),
        Step::Add => {
            let written = patch(with_finalizer(object.as_ref(), name))
                .await
                .map_err(|source| Error::AddFailed {
                    finalizer: name.to_owned(),
                    source,
                })?;
            let event = Event::Apply(Arc::new(written));
            reconcile(event).await.map_err(Error::ApplyFailed)
        }
        Step::Cleanup => {
            let removal = without_finalizer(object.as_ref(), name);
            reconcile(Event::Cleanup(object))
                .await
                .map_err(Error::CleanupFailed)?;
            patch(removal).await.map_err(|source| Error::RemoveFailed {
                finalizer: name.to_owned(),
                source,
            })?;
            Ok(Action::Done)
        }
    }
}

/// What a reconcile must do about the finalizer `name` of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Add the finalizer (JSON patch from [`with_finalizer`]) before acting.
    Add,
    /// Reconcile normally: the finalizer is in place.
    Apply,
    /// The object is being deleted: clean up, then remove the finalizer ([`without_finalizer`]).
    Cleanup,
    /// Being deleted, and our finalizer is already gone: nothing to do.
    Nothing,
}

/// Which [`Step`] `object` calls for, for the finalizer `name`.
pub fn step<K: Resource>(object: &K, name: &str) -> Step {
    let meta = object.meta();
    let has = meta.finalizers.iter().flatten().any(|f| f == name);
    match (meta.deletion_timestamp.is_some(), has) {
        (false, false) => Step::Add,
        (false, true) => Step::Apply,
        (true, true) => Step::Cleanup,
        (true, false) => Step::Nothing,
    }
}

/// A JSON patch (RFC 6902) adding `name` to `object`'s finalizers, guarded by a test of the
/// current list.
pub fn with_finalizer<K: Resource>(object: &K, name: &str) -> Value {
    match &object.meta().finalizers {
        None => json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ]),
        Some(current) => json!([
            {"op": "test", "path": "/metadata/finalizers", "value": current},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ]),
    }
}

/// A JSON patch removing `name` from `object`'s finalizers (keeping everyone else's), guarded
/// by a test of the current list.
pub fn without_finalizer<K: Resource>(object: &K, name: &str) -> Value {
    let current = object.meta().finalizers.clone().unwrap_or_default();
    let kept: Vec<&String> = current.iter().filter(|f| *f != name).collect();
    json!([
        {"op": "test", "path": "/metadata/finalizers", "value": current},
        {"op": "replace", "path": "/metadata/finalizers", "value": kept},
    ])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use jiff::Timestamp;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn object(finalizers: Option<Vec<&str>>, deleting: bool) -> ConfigMap {
        let mut object = ConfigMap::default();
        object.metadata.finalizers = finalizers.map(|f| f.into_iter().map(Into::into).collect());
        object.metadata.deletion_timestamp = deleting.then_some(Time(Timestamp::UNIX_EPOCH));
        object
    }

    #[test]
    fn the_step_follows_deletion_and_presence_of_the_finalizer() {
        assert_eq!(step(&object(None, false), "x/f"), Step::Add);
        assert_eq!(step(&object(Some(vec!["other"]), false), "x/f"), Step::Add);
        assert_eq!(step(&object(Some(vec!["x/f"]), false), "x/f"), Step::Apply);
        assert_eq!(step(&object(Some(vec!["x/f"]), true), "x/f"), Step::Cleanup);
        assert_eq!(
            step(&object(Some(vec!["other"]), true), "x/f"),
            Step::Nothing
        );
    }

    #[test]
    fn adding_tests_the_current_list_first() {
        assert_eq!(
            with_finalizer(&object(None, false), "x/f"),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": ["x/f"]},
            ])
        );
        assert_eq!(
            with_finalizer(&object(Some(vec!["other"]), false), "x/f"),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": ["other"]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "x/f"},
            ])
        );
    }

    #[tokio::test]
    async fn finalizer_adds_itself_applies_and_removes_itself_only_after_a_cleanup_succeeded() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
        use kubegen_client::{CreateOptions, DeleteOptions, GetOptions};

        let server = kubegen_testserver::TestServer::start().await;
        let client = server.client();
        let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
        let configmap = ConfigMap {
            metadata: ObjectMeta {
                name: Some("cm".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let created = configmaps
            .create(&configmap, &CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let read = GetOptions::default();
        let get = || configmaps.get("cm", &read);

        let applied = finalizer(&client, "x/f", Arc::new(created), |event| async move {
            match event {
                Event::Apply(object) => {
                    let finalizers = object.metadata.finalizers.clone().unwrap_or_default();
                    assert_eq!(finalizers, ["x/f"], "applies with the written object");
                    Ok::<_, std::fmt::Error>(Action::RequeueAfter(Duration::from_secs(5)))
                }
                Event::Cleanup(_) => panic!("not being deleted"),
            }
        })
        .await;
        assert_eq!(
            applied.ok(),
            Some(Action::RequeueAfter(Duration::from_secs(5)))
        );
        assert_eq!(
            get()
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .metadata
                .finalizers,
            Some(vec!["x/f".to_owned()])
        );

        configmaps
            .delete("cm", &DeleteOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let deleting = Arc::new(get().await.unwrap_or_else(|e| panic!("{e}")));
        assert!(deleting.metadata.deletion_timestamp.is_some());
        let failed = finalizer(&client, "x/f", Arc::clone(&deleting), |event| async move {
            match event {
                Event::Cleanup(_) => Err(std::fmt::Error),
                Event::Apply(_) => panic!("being deleted"),
            }
        })
        .await;
        assert!(matches!(failed, Err(Error::CleanupFailed(_))), "{failed:?}");
        assert!(get().await.is_ok(), "a failed cleanup keeps the finalizer");

        let cleaned = finalizer(&client, "x/f", deleting, |event| async move {
            match event {
                Event::Cleanup(_) => Ok::<_, std::fmt::Error>(Action::Done),
                Event::Apply(_) => panic!("being deleted"),
            }
        })
        .await;
        assert_eq!(cleaned.ok(), Some(Action::Done));
        let gone = get().await.err();
        assert!(
            gone.as_ref()
                .is_some_and(kubegen_client::Error::is_not_found),
            "{gone:?}"
        );
    }

    #[test]
    fn removing_keeps_every_other_finalizer() {
        assert_eq!(
            without_finalizer(&object(Some(vec!["a", "x/f", "b"]), true), "x/f"),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": ["a", "x/f", "b"]},
                {"op": "replace", "path": "/metadata/finalizers", "value": ["a", "b"]},
            ])
        );
    }
}
