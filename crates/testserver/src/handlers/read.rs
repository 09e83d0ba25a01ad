//! `get` and `list` (apiserver `endpoints/handlers/get.go`, registry `Store.List` and etcd3
//! `GetList`), including pagination with continue tokens and resourceVersion semantics.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Response, StatusCode};

use crate::apiserver::ApiServer;
use crate::body::BoxBody;
use crate::body::json_response;
use crate::encode::conversion::Conversion;
use crate::encode::list_meta;
use crate::encode::object_response;
use crate::encode::{ItemTypes, list_response};
use crate::object::meta_str;
use crate::object::partial_object_metadata;
use crate::request::query::{ListParams, Query, RvMatch};
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::objects::{ListQuery, ObjectKey, Stored};

/// `GET .../<plural>/<name>`, as the object, its metadata or a one-row Table.
pub(crate) fn get(
    api: &ApiServer,
    target: &Scope,
    conversion: Option<Conversion>,
) -> Result<Response<BoxBody>, ApiError> {
    let state = api.inner.storage.lock();
    let (stored, _) = state.existing(&target.def, target.object_key())?;
    Ok(match conversion {
        Some(Conversion::Table(table)) => {
            let mut meta = serde_json::Map::new();
            meta.insert("resourceVersion".into(), stored.rv.to_string().into());
            table.response(&table.render(&target.def, &[&stored.value], meta, true))
        }
        Some(Conversion::Metadata(version)) => {
            let partial = partial_object_metadata(&stored.value, version);
            json_response(StatusCode::OK, Bytes::from(partial.to_string()))
        }
        None => object_response(StatusCode::OK, stored),
    })
}

const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// A decoded continue token: the snapshot resourceVersion (-1: latest) and the last key served.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ContinueToken {
    pub(crate) rv: i64,
    pub(crate) after: ObjectKey,
}

impl ContinueToken {
    /// Encodes like the real server: unpadded URL-safe base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`.
    pub(crate) fn encode(&self) -> String {
        let start = if self.after.0.is_empty() {
            format!("{}\u{0}", self.after.1)
        } else {
            format!("{}/{}\u{0}", self.after.0, self.after.1)
        };
        let json = serde_json::json!({"v": "meta.k8s.io/v1", "rv": self.rv, "start": start});
        URL_SAFE_NO_PAD.encode(json.to_string())
    }

    /// Decodes a token from [`ContinueToken::encode`].
    ///
    /// # Errors
    /// 400 BadRequest for anything else.
    pub(crate) fn decode(token: &str) -> Result<ContinueToken, ApiError> {
        let bad = || ApiError::bad_request(format!("invalid continue token: {token}"));
        let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| bad())?;
        let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        if json["v"] != "meta.k8s.io/v1" {
            return Err(bad());
        }
        let rv = json["rv"].as_i64().ok_or_else(bad)?;
        let start = json["start"].as_str().ok_or_else(bad)?;
        let start = start.strip_suffix('\u{0}').unwrap_or(start);
        let after = match start.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (String::new(), start.to_string()),
        };
        Ok(ContinueToken { rv, after })
    }
}

/// Waits until the store reaches `rv`, or fails with 504 "Too large resource version" after the
/// configured wait, like the watch cache's `waitUntilFreshAndBlock`.
pub(crate) async fn wait_for_rv(api: &ApiServer, rv: u64) -> Result<(), ApiError> {
    let mut changes = api.inner.storage.subscribe();
    let wait: Duration = api.inner.options.too_large_rv_wait;
    let reached = tokio::time::timeout(wait, changes.wait_for(|current| *current >= rv)).await;
    match reached {
        Ok(Ok(_)) => Ok(()),
        _ => Err(ApiError::too_large_resource_version(
            rv,
            api.resource_version(),
        )),
    }
}

/// `GET .../<plural>` without `watch`, as a list, a list of metadata or a Table.
pub(crate) async fn list(
    api: &ApiServer,
    target: &Scope,
    query: &Query,
    conversion: Option<Conversion>,
) -> Result<Response<BoxBody>, ApiError> {
    let mut params = ListParams::parse(query, &target.def, false)?;
    params.read_shard_selector(query, api.inner.options.sharded_list_and_watch)?;
    let token = params
        .continue_token
        .as_deref()
        .map(ContinueToken::decode)
        .transpose()?;
    if let Some(rv) = params.resource_version.filter(|v| *v > 0)
        && rv > api.resource_version()
    {
        wait_for_rv(api, rv).await?;
    }
    let state = api.inner.storage.lock();
    let store = &state.store;
    let at = snapshot(&params, token.as_ref());
    if let Some(at) = at
        && at < store.compacted_rv()
    {
        return Err(compacted_error(token.as_ref()));
    }
    let keep = |s: &Stored| params.selects_everything() || params.matches(&s.value);
    let list_query = ListQuery {
        namespace: target.namespace.as_deref(),
        at,
        after: token.as_ref().map(|t| &t.after),
        limit: params.limit,
        keep: &keep,
    };
    let (items, more) = store
        .list(&target.def.key(), &list_query)
        .map_err(|_| ApiError::expired("The resourceVersion for the provided list is too old."))?;
    // Like etcd3's `GetList`, only an unfiltered page knows how many keys follow it.
    let remaining = match items.last() {
        Some(last) if more && params.counts_remaining() => {
            let after = key_of_stored(last);
            let everything = |_: &Stored| true;
            let rest = ListQuery {
                after: Some(&after),
                limit: None,
                keep: &everything,
                ..list_query
            };
            store.count(&target.def.key(), &rest).ok()
        }
        _ => None,
    };
    let list_rv = at.unwrap_or(store.current_rv());
    drop(state);
    let next = next_token(more, items.last(), token.as_ref(), list_rv);
    let mut meta = list_meta(list_rv, next.as_deref(), remaining);
    if let Some(shard) = &params.shard {
        let info = serde_json::json!({ "selector": shard.canonical() });
        meta.insert("shardInfo".into(), info);
    }
    let ((api_version, kind), items, types) = match conversion {
        Some(Conversion::Table(table)) => {
            let objects: Vec<&serde_json::Value> = items.iter().map(|s| &*s.value).collect();
            return Ok(table.response(&table.render(&target.def, &objects, meta, true)));
        }
        Some(Conversion::Metadata(version)) => {
            let partial = |s: Stored| Stored::new(partial_object_metadata(&s.value, version), s.rv);
            (
                (
                    format!("meta.k8s.io/{version}"),
                    "PartialObjectMetadata".to_string(),
                ),
                items.into_iter().map(partial).collect(),
                ItemTypes::Written,
            )
        }
        None => (
            (target.def.api_version(), target.def.kind.clone()),
            items,
            ItemTypes::of(&target.def),
        ),
    };
    Ok(list_response(
        target.format,
        (&api_version, &kind),
        meta,
        items,
        types,
    ))
}

/// The resourceVersion a list is served at (None: the current state).
fn snapshot(params: &ListParams, token: Option<&ContinueToken>) -> Option<u64> {
    // Legacy rule: a non-zero resourceVersion with a limit and no match means Exact.
    let exact = params.rv_match == RvMatch::Exact
        || (params.rv_match == RvMatch::Unset
            && params.limit.is_some()
            && params.resource_version.is_some_and(|v| v > 0));
    match (token, params.resource_version) {
        (Some(t), _) if t.rv < 0 => None,
        (Some(t), _) => Some(u64::try_from(t.rv).unwrap_or(0)),
        (None, Some(rv)) if exact => Some(rv),
        _ => None,
    }
}

/// 410 for a snapshot older than the history: an expired continue token gets a token that
/// continues (inconsistently) at the latest version, as the real server's Status carries.
fn compacted_error(token: Option<&ContinueToken>) -> ApiError {
    match token {
        Some(t) => {
            let mut e = ApiError::expired(EXPIRED_CONTINUE);
            let fresh = ContinueToken {
                rv: -1,
                after: t.after.clone(),
            };
            e.continue_token = Some(fresh.encode());
            e
        }
        None => ApiError::expired("The resourceVersion for the provided list is too old."),
    }
}

/// The storage key of a stored object.
fn key_of_stored(stored: &Stored) -> ObjectKey {
    (
        meta_str(&stored.value, "namespace").to_string(),
        meta_str(&stored.value, "name").to_string(),
    )
}

/// The continue token of a page that has more after `last`.
fn next_token(
    more: bool,
    last: Option<&Stored>,
    token: Option<&ContinueToken>,
    list_rv: u64,
) -> Option<String> {
    let last = last.filter(|_| more)?;
    let after = key_of_stored(last);
    let rv = match token {
        Some(t) if t.rv < 0 => -1,
        _ => i64::try_from(list_rv).unwrap_or(i64::MAX),
    };
    Some(ContinueToken { rv, after }.encode())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        for after in [
            ("ns".to_string(), "a.b".to_string()),
            (String::new(), "node-1".to_string()),
        ] {
            let token = ContinueToken { rv: 42, after };
            assert_eq!(ContinueToken::decode(&token.encode()).unwrap(), token);
        }
    }

    #[test]
    fn garbage_continue_tokens_are_bad_requests() {
        for token in ["%%%", "aGVsbG8=", "eyJ2IjoieCJ9"] {
            assert_eq!(
                ContinueToken::decode(token).unwrap_err().code,
                400,
                "{token}"
            );
        }
    }
}
