//! Metadata-only reads against the test server: the server converts, the client decodes
//! `PartialObjectMeta<K>`, and whole objects still decode when the conversion is not asked for.

use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::{
    ApiObject, Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, PartialObjectMeta,
    ResourceClient, WatchEvent, WireFormat,
};
use kubegen_testserver::TestServer;

use crate::testserver::client_for;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn labelled(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.labels = Some([("app".to_owned(), name.to_owned())].into());
    cm.data = Some([("k".to_owned(), "v".repeat(100))].into());
    cm
}

fn kind_of(meta: &PartialObjectMeta<ConfigMap>) -> (String, String) {
    let types = meta.types.clone().unwrap_or_default();
    (types.kind, types.api_version)
}

fn partial() -> (String, String) {
    ("PartialObjectMetadata".into(), "meta.k8s.io/v1".into())
}

async fn seeded(server: &TestServer, names: &[&str]) -> Result<Client, Box<dyn std::error::Error>> {
    let client = client_for(server).await?;
    let full = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for name in names {
        full.create(&labelled(name), &CreateOptions::default())
            .await?;
    }
    Ok(client)
}

#[tokio::test]
async fn metadata_get_and_paged_list_carry_partial_object_metadata() -> TestResult {
    let server = TestServer::start().await;
    let client = seeded(&server, &["a", "b", "c"]).await?;
    let meta =
        ResourceClient::<PartialObjectMeta<ConfigMap>>::metadata_namespaced(client, "default");

    let one = meta.get("b", &GetOptions::default()).await?;
    assert_eq!(kind_of(&one), partial());
    assert_eq!(one.metadata.labels, labelled("b").metadata.labels);

    let first = meta.list(&ListOptions::default().limit(2)).await?;
    assert_eq!(first.types.kind, "PartialObjectMetadataList");
    assert_eq!(first.types.api_version, "meta.k8s.io/v1");
    let token = first
        .metadata
        .continue_
        .clone()
        .ok_or("no continue token")?;
    let rest = meta
        .list(&ListOptions::default().limit(2).continue_token(token))
        .await?;
    let names: Vec<String> = first
        .items
        .iter()
        .chain(&rest.items)
        .map(|m| m.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(rest.items.iter().all(|m| kind_of(m) == partial()));
    Ok(())
}

#[tokio::test]
async fn metadata_watch_events_carry_partial_object_metadata() -> TestResult {
    let server = TestServer::start().await;
    let client = seeded(&server, &[]).await?;
    let meta = ResourceClient::<PartialObjectMeta<ConfigMap>>::metadata_namespaced(
        client.clone(),
        "default",
    );
    let rv = meta
        .list(&ListOptions::default())
        .await?
        .metadata
        .resource_version;
    let mut stream = meta
        .watch(
            &ListOptions::default()
                .resource_version(rv.unwrap_or_default())
                .timeout_seconds(60),
        )
        .await?;
    let full = ResourceClient::<ConfigMap>::namespaced(client, "default");
    full.create(&labelled("w"), &CreateOptions::default())
        .await?;
    full.delete("w", &DeleteOptions::default()).await?;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match stream.next().await.ok_or("stream ended early")?? {
            WatchEvent::Added(m) => seen.push(("added", m.metadata.name.clone(), kind_of(&m))),
            WatchEvent::Deleted(m) => seen.push(("deleted", m.metadata.name.clone(), kind_of(&m))),
            WatchEvent::Bookmark(_) => {}
            other => return Err(format!("unexpected {other:?}").into()),
        }
    }
    let w = Some("w".to_owned());
    assert_eq!(
        seen,
        [("added", w.clone(), partial()), ("deleted", w, partial())]
    );
    Ok(())
}

#[tokio::test]
async fn whole_objects_decode_as_metadata_when_no_conversion_is_asked_for() -> TestResult {
    let server = TestServer::start().await;
    let client = seeded(&server, &["a"]).await?;
    // The plain constructor asks for whole objects: what a server without the conversion sends.
    let plain = ResourceClient::<PartialObjectMeta<ConfigMap>>::namespaced(client, "default");
    let list = plain.list(&ListOptions::default()).await?;
    assert_eq!(list.items.len(), 1);
    // No check of the items' kind: a real server's list items carry none (JSON or protobuf).
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("a"));
    assert_eq!(list.items[0].metadata.labels, labelled("a").metadata.labels);
    Ok(())
}

/// Every answer of `meta` as JSON values, for comparison (`PartialObjectMeta` has no `PartialEq`):
/// each listed item and a get of it, and the `ADDED` events of a watch from `0` by name. (Not
/// the list's own `resourceVersion`: a real cluster moves on between two lists.)
pub(crate) async fn answers<K: ApiObject>(
    meta: &ResourceClient<PartialObjectMeta<K>>,
) -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
    let mut answers = Vec::new();
    let list = meta.list(&ListOptions::default()).await?;
    for item in &list.items {
        answers.push(serde_json::to_value(item)?);
        let name = item.metadata.name.clone().unwrap_or_default();
        answers.push(serde_json::to_value(
            meta.get(&name, &GetOptions::default()).await?,
        )?);
    }
    let opts = ListOptions::default()
        .resource_version("0")
        .timeout_seconds(1);
    let mut stream = meta.watch(&opts).await?;
    let mut added = Vec::new();
    while let Some(event) = stream.next().await {
        if let WatchEvent::Added(m) = event? {
            added.push(m);
        }
    }
    // A watch from `0` replays the objects in no particular order.
    added.sort_by_key(|m| m.metadata.name.clone());
    for m in added {
        answers.push(serde_json::to_value(&m)?);
    }
    Ok(answers)
}

#[tokio::test]
async fn metadata_reads_in_protobuf_give_what_they_give_in_json() -> TestResult {
    let server = TestServer::start().await;
    let client = seeded(&server, &["a", "b"]).await?;
    let protobuf =
        ResourceClient::<PartialObjectMeta<ConfigMap>>::metadata_namespaced(client, "default");
    let json = protobuf.clone().with_wire_format(WireFormat::Json);
    assert!(protobuf.asks_for_protobuf() && !json.asks_for_protobuf());
    let (from_protobuf, from_json) = (answers(&protobuf).await?, answers(&json).await?);
    assert_eq!(from_protobuf.len(), 2 * 2 + 2);
    assert_eq!(from_protobuf, from_json);
    assert!(
        from_protobuf
            .iter()
            .all(|m| m["kind"] == "PartialObjectMetadata"),
        "{from_protobuf:?}"
    );
    Ok(())
}
