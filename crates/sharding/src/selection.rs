//! Which way a replica gets only its shard's objects ([`Selection`]), decided once per replica,
//! and the `shardSelector` its informer lists and watches with while it runs server-side.
//!
//! The decision is shared by the replica and its informer's list-watch (`list_watch.rs`):
//! whichever needs it first asks the server, the other waits for that answer. A manager starts
//! its informers before the shard replica, so the first list usually asks.

use std::time::Duration;

use bytes::Bytes;
use kubegen_client::{Client, Error as ClientError};
use parking_lot::Mutex;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use tokio::sync::{OnceCell, watch};

use crate::config::Selection;
use crate::ring::SelectorField;

/// How long a probe that got no useful answer waits before asking again.
const PROBE_RETRY: Duration = Duration::from_secs(1);

/// The `shardSelector` the informer uses, numbered so a list-watch can tell it changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ShardSelector {
    /// Bumped on every change.
    pub(crate) generation: u64,
    /// The shard's arcs as a `shardSelector`; None while the shard owns nothing.
    pub(crate) selector: Option<String>,
}

/// A replica's selection: the configured wish, the decision, and the current `shardSelector`.
pub(crate) struct Filter {
    wanted: Selection,
    decided: OnceCell<Selection>,
    client: Client,
    /// The collection the shard's informer lists, e.g. `/api/v1/namespaces/x/configmaps`: the
    /// probe asks there, where the replica may list.
    collection: Mutex<String>,
    field: SelectorField,
    shard: watch::Sender<ShardSelector>,
}

impl Filter {
    /// `wanted` for the kind at `collection`, hashing `field` when server-side.
    pub(crate) fn new(
        wanted: Selection,
        client: Client,
        collection: String,
        field: SelectorField,
    ) -> Filter {
        Filter {
            wanted,
            decided: OnceCell::new(),
            client,
            collection: Mutex::new(collection),
            field,
            shard: watch::Sender::new(ShardSelector::default()),
        }
    }

    /// `Labels` or `ShardSelector`: the configured one, or (for `Auto`) the server's answer.
    pub(crate) async fn decide(&self) -> Selection {
        let decide = || async {
            match self.wanted {
                Selection::Auto => {
                    let collection = self.collection.lock().clone();
                    let decided = probe(&self.client, &collection, self.field).await;
                    tracing::info!(%collection, selection = ?decided, "chose how to select the shard's objects");
                    decided
                }
                wanted => wanted,
            }
        };
        *self.decided.get_or_init(decide).await
    }

    /// The decision, once made.
    pub(crate) fn decided(&self) -> Option<Selection> {
        self.decided.get().copied()
    }

    /// Asks the server at `collection` (the informer's) rather than at the ring's scope.
    pub(crate) fn probe_at(&self, collection: &str) {
        collection.clone_into(&mut self.collection.lock());
    }

    /// Whether the replica runs server-side.
    pub(crate) fn server_side(&self) -> bool {
        self.decided() == Some(Selection::ShardSelector)
    }

    /// The field the `shardSelector` hashes.
    pub(crate) fn field(&self) -> SelectorField {
        self.field
    }

    /// The current `shardSelector`.
    pub(crate) fn shard(&self) -> ShardSelector {
        self.shard.borrow().clone()
    }

    /// Changes of the `shardSelector`.
    pub(crate) fn shard_changes(&self) -> watch::Receiver<ShardSelector> {
        self.shard.subscribe()
    }

    /// Sets the `shardSelector`; an informer listing with another one relists.
    pub(crate) fn set_shard(&self, selector: Option<String>) {
        self.shard.send_if_modified(|current| {
            let changed = current.selector != selector;
            if changed {
                current.generation += 1;
                current.selector = selector;
            }
            changed
        });
    }
}

/// Asks the server whether it serves `shardSelector`: see [`Selection::Auto`].
async fn probe(client: &Client, collection: &str, field: SelectorField) -> Selection {
    let everything = field.everything();
    let uri = format!(
        "{collection}?limit=1&shardSelector={}",
        utf8_percent_encode(&everything, NON_ALPHANUMERIC)
    );
    loop {
        let request = match http::Request::get(uri.as_str()).body(Bytes::new()) {
            Ok(request) => request,
            Err(error) => {
                tracing::warn!(%uri, %error, "cannot build the shardSelector probe; using labels");
                return Selection::Labels;
            }
        };
        match client.request_json::<serde_json::Value>(request).await {
            Ok(list) => return answer(&list),
            Err(error) if inconclusive(&error) => {
                tracing::debug!(%uri, %error, "shardSelector probe failed; asking again");
                tokio::time::sleep(PROBE_RETRY).await;
            }
            Err(error) => {
                tracing::info!(%uri, %error, "the server rejects shardSelector; using labels");
                return Selection::Labels;
            }
        }
    }
}

/// What a list answered to a `shardSelector` says: served when it names the selector in
/// `metadata.shardInfo`, ignored otherwise.
fn answer(list: &serde_json::Value) -> Selection {
    match list.pointer("/metadata/shardInfo") {
        Some(info) if !info.is_null() => Selection::ShardSelector,
        _ => Selection::Labels,
    }
}

/// A failure that says nothing about the parameter: no answer, or a server too busy to judge.
fn inconclusive(error: &ClientError) -> bool {
    error.is_connect() || error.is_timeout() || matches!(error.code(), Some(429 | 503 | 504))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_a_list_that_echoes_shard_info_means_the_server_filters() {
        let served = json!({"metadata": {"resourceVersion": "7", "shardInfo": {"selector": "x"}}});
        let ignored = json!({"metadata": {"resourceVersion": "7"}, "items": []});
        let null = json!({"metadata": {"shardInfo": null}});
        assert_eq!(answer(&served), Selection::ShardSelector);
        assert_eq!(answer(&ignored), Selection::Labels);
        assert_eq!(answer(&null), Selection::Labels);
        assert_eq!(answer(&json!("not a list")), Selection::Labels);
    }
}
