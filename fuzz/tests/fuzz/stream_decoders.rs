//! Fuzz targets for the two streaming decoders of `kubegen-client`: watch (NDJSON events) and list
//! (items decoded as the body streams in). Both are driven through the public API,
//! `ResourceClient::{watch, list}` over a transport that cuts the body wherever proptest says.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{ListOptions, ResourceClient, WatchEvent};
use kubegen_fuzz::chunked::client_returning;
use proptest::prelude::*;

/// What a test expects one decoded watch event to be.
#[derive(Clone, Debug, PartialEq)]
enum Expected {
    Added(ConfigMap),
    Modified(ConfigMap),
    Deleted(ConfigMap),
    Bookmark(String),
    Error(u16),
}

fn config_map() -> impl Strategy<Value = ConfigMap> {
    (
        "[a-z][a-z0-9-]{0,20}",
        1u64..1_000_000,
        prop::collection::btree_map("[a-zA-Z0-9._-]{1,12}", any::<String>(), 0..4),
    )
        .prop_map(|(name, rv, data)| ConfigMap {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some("default".to_owned()),
                resource_version: Some(rv.to_string()),
                ..ObjectMeta::default()
            },
            data: (!data.is_empty()).then_some(data),
            ..ConfigMap::default()
        })
}

fn event() -> impl Strategy<Value = Expected> {
    prop_oneof![
        4 => config_map().prop_map(Expected::Added),
        4 => config_map().prop_map(Expected::Modified),
        2 => config_map().prop_map(Expected::Deleted),
        1 => (1u64..1_000_000).prop_map(|rv| Expected::Bookmark(rv.to_string())),
        1 => prop_oneof![Just(410u16), Just(500u16)].prop_map(Expected::Error),
    ]
}

/// One NDJSON line (with its newline) as the API server writes it.
fn encode(event: &Expected) -> String {
    let (kind, object) = match event {
        Expected::Added(cm) => ("ADDED", serde_json::to_value(cm)),
        Expected::Modified(cm) => ("MODIFIED", serde_json::to_value(cm)),
        Expected::Deleted(cm) => ("DELETED", serde_json::to_value(cm)),
        Expected::Bookmark(rv) => (
            "BOOKMARK",
            Ok(serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"resourceVersion": rv}})),
        ),
        Expected::Error(code) => (
            "ERROR",
            Ok(
                serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "message": "injected", "reason": if *code == 410 { "Expired" } else { "InternalError" },
                "code": code}),
            ),
        ),
    };
    let object = object.unwrap_or_default();
    format!("{}\n", serde_json::json!({"type": kind, "object": object}))
}

/// Reduces a decoded event to what the test can compare.
fn observe(event: WatchEvent<ConfigMap>) -> Expected {
    match event {
        WatchEvent::Added(cm) => Expected::Added(cm),
        WatchEvent::Modified(cm) => Expected::Modified(cm),
        WatchEvent::Deleted(cm) => Expected::Deleted(cm),
        WatchEvent::Bookmark(bookmark) => Expected::Bookmark(bookmark.metadata.resource_version),
        WatchEvent::Error(status) => Expected::Error(status.code),
    }
}

/// Runs a watch over `body` cut at `cuts`; returns the decoded events and whether it ended in an
/// error. Panics only if the stream yields anything after an error.
fn watch(body: &[u8], cuts: &[usize]) -> (Vec<Expected>, bool) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("runtime: {error}"),
    };
    runtime.block_on(async {
        let client =
            ResourceClient::<ConfigMap>::namespaced(client_returning(body, cuts), "default");
        let mut stream = match client.watch(&ListOptions::default()).await {
            Ok(stream) => stream,
            Err(_) => return (Vec::new(), true),
        };
        let mut events = Vec::new();
        while let Some(next) = stream.next().await {
            match next {
                Ok(event) => events.push(observe(event)),
                Err(_) => {
                    assert!(
                        stream.next().await.is_none(),
                        "the stream went on after an error"
                    );
                    return (events, true);
                }
            }
        }
        (events, false)
    })
}

fn list(body: &[u8], cuts: &[usize]) -> Result<Vec<ConfigMap>, String> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("runtime: {error}"),
    };
    runtime.block_on(async {
        let client =
            ResourceClient::<ConfigMap>::namespaced(client_returning(body, cuts), "default");
        client
            .list(&ListOptions::default())
            .await
            .map(|list| list.items)
            .map_err(|error| error.to_string())
    })
}

fn list_body(items: &[ConfigMap], pretty: bool, metadata_last: bool) -> Vec<u8> {
    let metadata = serde_json::json!({"resourceVersion": "77", "continue": "tok/en+=="});
    let items = serde_json::to_value(items).unwrap_or_default();
    let mut object = serde_json::Map::new();
    object.insert("apiVersion".to_owned(), "v1".into());
    object.insert("kind".to_owned(), "ConfigMapList".into());
    if metadata_last {
        object.insert("items".to_owned(), items);
        object.insert("metadata".to_owned(), metadata);
    } else {
        object.insert("metadata".to_owned(), metadata);
        object.insert("items".to_owned(), items);
    }
    let value = serde_json::Value::Object(object);
    let text = if pretty {
        serde_json::to_string_pretty(&value)
    } else {
        serde_json::to_string(&value)
    };
    text.unwrap_or_default().into_bytes()
}

proptest! {
    /// Any valid event sequence decodes to exactly itself, however the body is chunked.
    #[test]
    fn watch_decodes_valid_events_exactly_across_any_chunking(
        events in prop::collection::vec(event(), 0..12),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
    ) {
        let body: String = events.iter().map(encode).collect();
        let (decoded, failed) = watch(body.as_bytes(), &cuts);
        prop_assert!(!failed);
        prop_assert_eq!(decoded, events);
    }

    /// A corrupt line surfaces as an error after exactly the events before it, and ends the stream.
    #[test]
    fn watch_reports_a_corrupt_line_after_the_good_ones(
        events in prop::collection::vec(event(), 0..6),
        garbage in "[^\n]{1,40}",
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        prop_assume!(serde_json::from_str::<serde_json::Value>(&garbage).is_err());
        prop_assume!(!garbage.trim().is_empty());
        let mut body: String = events.iter().map(encode).collect();
        body.push_str(&garbage);
        body.push('\n');
        body.push_str(&encode(&Expected::Bookmark("1".to_owned())));
        let (decoded, failed) = watch(body.as_bytes(), &cuts);
        prop_assert!(failed);
        prop_assert_eq!(decoded, events);
    }

    /// Arbitrary bytes never panic or hang the watch decoder.
    #[test]
    fn watch_survives_arbitrary_bytes(
        body in prop::collection::vec(any::<u8>(), 0..512),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let _ = watch(&body, &cuts);
    }

    /// A list decodes to exactly its items, compact or pretty, metadata first or last, any chunking.
    #[test]
    fn list_decodes_items_exactly_across_any_chunking(
        items in prop::collection::vec(config_map(), 0..8),
        pretty in any::<bool>(),
        metadata_last in any::<bool>(),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
    ) {
        let body = list_body(&items, pretty, metadata_last);
        prop_assert_eq!(list(&body, &cuts), Ok(items));
    }

    /// A truncated list is an error, never a short list presented as complete.
    #[test]
    fn list_rejects_a_truncated_body(
        items in prop::collection::vec(config_map(), 1..6),
        keep in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let body = list_body(&items, false, false);
        let keep = keep.index(body.len() - 1);
        let truncated = &body[..keep];
        // A cut right after a closing brace may still end an object; such cases prove nothing.
        if !truncated.trim_ascii_end().ends_with(b"}") {
            prop_assert!(list(truncated, &cuts).is_err());
        }
    }

    /// Arbitrary bytes never panic the list decoder.
    #[test]
    fn list_survives_arbitrary_bytes(
        body in prop::collection::vec(any::<u8>(), 0..512),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let _ = list(&body, &cuts);
    }

    /// Arbitrary bytes inside a well-formed list envelope never panic the list decoder.
    #[test]
    fn list_survives_arbitrary_items(
        inner in "[\\[\\]{}\",:0-9a-z\\\\ ]{0,200}",
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let body = format!(r#"{{"kind":"ConfigMapList","metadata":{{}},"items":[{inner}]}}"#);
        let _ = list(body.as_bytes(), &cuts);
    }
}
