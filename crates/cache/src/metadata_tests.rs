use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube_core::{ObjectList, WatchEvent};

use super::*;
use crate::factory::{FactoryOptions, ListWatchSource};
use crate::list_watch::{
    EventStream, ListRequest, ListWatchError, ListWatchErrorKind, WatchRequest,
};

/// What the factory asked its source for: ("full" or "metadata", kind, namespace).
type Asked = Arc<Mutex<Vec<(&'static str, String, Option<String>)>>>;

/// A source that records each request; its list/watches are never started here.
struct Recorder(Asked);

impl Recorder {
    fn record<K: Resource<DynamicType = ()>>(&self, form: &'static str, namespace: Option<&str>) {
        let entry = (
            form,
            K::kind(&()).into_owned(),
            namespace.map(str::to_owned),
        );
        self.0.lock().unwrap().push(entry);
    }
}

impl<K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static> ListWatchSource<K>
    for Recorder
{
    type ListWatch = Offline;

    fn list_watch(&self, namespace: Option<&str>, _: &ListSelectors) -> Offline {
        self.record::<K>("full", namespace);
        Offline
    }
}

impl<K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static> MetadataListWatchSource<K>
    for Recorder
{
    type ListWatch = Offline;

    fn metadata_list_watch(&self, namespace: Option<&str>, _: &ListSelectors) -> Offline {
        self.record::<K>("metadata", namespace);
        Offline
    }
}

/// A list/watch whose server is always unreachable.
struct Offline;

impl<K: Clone + Send + Sync + 'static> ListWatch<K> for Offline {
    type Watch = Offline;

    async fn list(&self, _: &ListRequest) -> Result<ObjectList<K>, ListWatchError> {
        Err(ListWatchError::new(
            ListWatchErrorKind::Unavailable,
            "offline",
        ))
    }

    async fn watch(&self, _: &WatchRequest) -> Result<Offline, ListWatchError> {
        Err(ListWatchError::new(
            ListWatchErrorKind::Unavailable,
            "offline",
        ))
    }
}

impl<K> EventStream<K> for Offline {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<K>, ListWatchError>> {
        None
    }
}

#[test]
fn metadata_informers_are_shared_per_kind_and_separate_from_full_and_partial_informers() {
    let asked = Asked::default();
    let options = FactoryOptions::default().namespace("team-a".to_owned());
    let factory = InformerFactory::new(Recorder(Arc::clone(&asked)), options);

    let metadata = factory.metadata_informer_for::<ConfigMap>();
    factory.metadata_informer_for::<ConfigMap>();
    factory.informer::<ConfigMap>();
    factory.informer::<PartialObjectMeta<ConfigMap>>();
    factory.metadata_informer_for::<Namespace>();

    assert_eq!(
        *asked.lock().unwrap(),
        vec![
            (
                "metadata",
                "ConfigMap".to_owned(),
                Some("team-a".to_owned())
            ),
            ("full", "ConfigMap".to_owned(), Some("team-a".to_owned())),
            ("full", "ConfigMap".to_owned(), Some("team-a".to_owned())),
            ("metadata", "Namespace".to_owned(), None),
        ]
    );
    assert_eq!(metadata.name(), "configmaps.metadata");
}
