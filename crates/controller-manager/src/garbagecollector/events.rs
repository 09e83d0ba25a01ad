//! The one Event the garbage collector records: `OwnerRefInvalidNamespace`, for a reference
//! that cannot resolve in the dependent's namespace (`graph_builder.go`'s
//! `reportInvalidNamespaceOwnerRef`; client-go's recorder writes it as a core/v1 Event).

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kubegen_client::{CreateOptions, ResourceClient};

use super::graph::Node;
use super::shared::Shared;

/// The component the events name.
const COMPONENT: &str = "garbage-collector-controller";

/// Records that `reference` of `node` does not exist in the node's namespace.
pub(crate) async fn invalid_namespace(shared: &Shared, node: &Node, reference: &OwnerReference) {
    let namespace = node.namespace.clone().unwrap_or_else(|| "default".into());
    let message = format!(
        "ownerRef [{}/{}, namespace: {}, name: {}, uid: {}] does not exist in namespace \"{}\"",
        reference.api_version,
        reference.kind,
        node.namespace.as_deref().unwrap_or_default(),
        reference.name,
        reference.uid,
        node.namespace.as_deref().unwrap_or_default(),
    );
    let now = Time(jiff::Timestamp::now());
    let event = Event {
        metadata: ObjectMeta {
            name: Some(format!("{}.{:x}", node.name, now.0.as_nanosecond())),
            namespace: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some(node.resource.api_version.clone()),
            kind: Some(node.resource.kind.clone()),
            name: Some(node.name.clone()),
            namespace: node.namespace.clone(),
            uid: Some(node.uid.clone()),
            ..ObjectReference::default()
        },
        reason: Some("OwnerRefInvalidNamespace".into()),
        message: Some(message),
        type_: Some("Warning".into()),
        source: Some(EventSource {
            component: Some(COMPONENT.into()),
            host: None,
        }),
        count: Some(1),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        ..Event::default()
    };
    let events = ResourceClient::<Event>::namespaced(shared.client.clone(), &namespace);
    if let Err(e) = events.create(&event, &CreateOptions::default()).await {
        tracing::debug!(error = %e, "recording OwnerRefInvalidNamespace failed");
    }
}
