//! Query-string parsing and the list/watch options of metav1 `ListOptions`, validated like apiserver
//! `pkg/apis/meta/internalversion/validation` does.

use std::collections::HashMap;
use std::num::IntErrorKind;

use crate::registry::ResourceDefinition;
use crate::request::selectors::{FieldSelector, LabelSelector};
use crate::request::shard_selector::ShardSelector;
use crate::status::ApiError;

/// Decoded query parameters (last value wins, except through [`Query::all`]).
#[derive(Debug, Default)]
pub(crate) struct Query {
    params: HashMap<String, String>,
    /// Every pair in order, for parameters that repeat (`command` of `pods/exec`).
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses `a=b&c=d`, decoding `%XX` and `+` like Go's `url.ParseQuery`.
    pub(crate) fn parse(raw: Option<&str>) -> Query {
        let mut params = HashMap::new();
        let mut pairs = Vec::new();
        for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.insert(decode(k), decode(v));
            pairs.push((decode(k), decode(v)));
        }
        Query { params, pairs }
    }

    /// Every value of a repeated parameter, in order.
    pub(crate) fn all(&self, key: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A parameter, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    /// A boolean parameter (`true`/`1`), false when absent.
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An integer parameter, parsed as the real server does (Go `int64`: negative values parse,
/// values beyond the range are a 400 like malformed ones).
fn number(query: &Query, key: &str) -> Result<Option<i64>, ApiError> {
    match query.get(key).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse::<i64>().map(Some).map_err(|e| {
            let why = match e.kind() {
                IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
                _ => "invalid syntax",
            };
            ApiError::bad_request(format!(
                "invalid value for {key}: strconv.ParseInt: parsing \"{v}\": {why}"
            ))
        }),
    }
}

fn rv_match(query: &Query) -> Result<RvMatch, ApiError> {
    match query.get("resourceVersionMatch").unwrap_or("") {
        "" => Ok(RvMatch::Unset),
        "NotOlderThan" => Ok(RvMatch::NotOlderThan),
        "Exact" => Ok(RvMatch::Exact),
        other => Err(ApiError::unsupported_list_option(
            "resourceVersionMatch",
            other,
            "\"Exact\", \"NotOlderThan\", \"\"",
        )),
    }
}

/// `resourceVersionMatch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RvMatch {
    Unset,
    NotOlderThan,
    Exact,
}

/// The list/watch options of one request.
#[derive(Debug)]
pub(crate) struct ListParams {
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    /// None when absent or not positive (the real server pages only for a limit above 0).
    pub(crate) limit: Option<usize>,
    pub(crate) continue_token: Option<String>,
    /// None when absent or empty.
    pub(crate) resource_version: Option<u64>,
    pub(crate) rv_match: RvMatch,
    /// A watch's `timeoutSeconds`: None when absent or 0 (the real server then picks its own,
    /// long timeout), 0 when negative (the real server's timer fires at once).
    pub(crate) timeout_seconds: Option<u64>,
    pub(crate) allow_bookmarks: bool,
    pub(crate) send_initial_events: Option<bool>,
    /// KEP-5866 `shardSelector`; only read by [`ListParams::read_shard_selector`].
    pub(crate) shard: Option<ShardSelector>,
}

impl ListParams {
    /// Parses and validates the options for `def`.
    ///
    /// # Errors
    /// 400 for unparseable selectors or numbers, 422 (`ListOptions.meta.k8s.io "" is invalid`) for
    /// forbidden combinations, as the real server.
    pub(crate) fn parse(
        query: &Query,
        def: &ResourceDefinition,
        watch: bool,
    ) -> Result<ListParams, ApiError> {
        ListParams::parse_for(query, def, watch, true)
    }

    /// Like [`ListParams::parse`]; with `streaming_list` false a watch that asks for
    /// `sendInitialEvents` is refused, as a server with the WatchList feature gate off refuses it
    /// (422 "sendInitialEvents is forbidden for watch unless the WatchList feature gate is
    /// enabled", apimachinery `validateWatchOptions`).
    pub(crate) fn parse_for(
        query: &Query,
        def: &ResourceDefinition,
        watch: bool,
        streaming_list: bool,
    ) -> Result<ListParams, ApiError> {
        let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or(""))?;
        let fields = FieldSelector::parse(query.get("fieldSelector").unwrap_or(""), |f| {
            def.check_field_label(f)
        })?;
        let limit = number(query, "limit")?
            .filter(|l| *l > 0)
            .map(|l| usize::try_from(l).unwrap_or(usize::MAX));
        let timeout_seconds = number(query, "timeoutSeconds")?
            .filter(|t| *t != 0)
            .map(|t| u64::try_from(t).unwrap_or(0));
        let rv_text = query.get("resourceVersion").filter(|v| !v.is_empty());
        let resource_version = match rv_text {
            None => None,
            Some(v) => Some(v.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "Invalid value: \"{v}\": resourceVersion must be a non-negative integer"
                ))
            })?),
        };
        let rv_match = rv_match(query)?;
        let continue_token = query
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        let send_initial_events = query
            .get("sendInitialEvents")
            .map(|v| v == "true" || v == "1");
        let params = ListParams {
            labels,
            fields,
            limit,
            continue_token,
            resource_version,
            rv_match,
            timeout_seconds,
            allow_bookmarks: query.flag("allowWatchBookmarks"),
            send_initial_events,
            shard: None,
        };
        params.validate(rv_text, watch, streaming_list)?;
        Ok(params)
    }

    fn validate(
        &self,
        rv_text: Option<&str>,
        watch: bool,
        streaming_list: bool,
    ) -> Result<(), ApiError> {
        let forbid = |field: &str, detail: &str| Err(ApiError::invalid_list_options(field, detail));
        if self.continue_token.is_some() && rv_text.is_some() && rv_text != Some("0") {
            return forbid(
                "resourceVersion",
                "specifying resource version is not allowed when using continue",
            );
        }
        if self.rv_match != RvMatch::Unset {
            if rv_text.is_none() && self.send_initial_events.is_none() {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                );
            }
            if self.continue_token.is_some() {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                );
            }
            if self.rv_match == RvMatch::Exact && self.resource_version == Some(0) {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                );
            }
        }
        if let Some(send) = self.send_initial_events {
            if !watch {
                return forbid(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for list",
                );
            }
            if self.rv_match != RvMatch::NotOlderThan {
                return forbid(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                );
            }
            if !streaming_list {
                return forbid(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                );
            }
            if send && !self.allow_bookmarks {
                return forbid(
                    "allowWatchBookmarks",
                    "allowWatchBookmarks must be set when sendInitialEvents is set",
                );
            }
        } else if watch && self.rv_match != RvMatch::Unset {
            return forbid(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            );
        }
        Ok(())
    }

    /// Reads `shardSelector` when the server serves it (`served`: the `ShardedListAndWatch`
    /// gate); a server without the gate ignores the parameter, however malformed. An empty
    /// parameter is no selector either way (the store only parses a non-empty one).
    ///
    /// # Errors
    /// A selector the parser rejects: 500 without a reason, `invalid shard selector: …`, as the
    /// real generic store returns a plain error from `ListPredicate` and `Watch` (checked in the
    /// v1.36 source: `registry/generic/registry/store.go`). Runs after [`ListParams::parse`], as the
    /// real server validates `ListOptions` before the store sees them.
    pub(crate) fn read_shard_selector(
        &mut self,
        query: &Query,
        served: bool,
    ) -> Result<(), ApiError> {
        match query
            .get("shardSelector")
            .filter(|s| served && !s.is_empty())
        {
            None => Ok(()),
            Some(text) => {
                let selector = ShardSelector::parse(text).map_err(|why| {
                    ApiError::unknown(500, format!("invalid shard selector: {why}"))
                })?;
                self.shard = Some(selector);
                Ok(())
            }
        }
    }

    /// Whether a stored object passes the selectors.
    pub(crate) fn matches(&self, object: &serde_json::Value) -> bool {
        self.labels.matches(object)
            && self.fields.matches(object)
            && self.shard.as_ref().is_none_or(|s| s.matches(object))
    }

    /// Whether there is no selector at all.
    pub(crate) fn selects_everything(&self) -> bool {
        self.counts_remaining() && self.shard.is_none()
    }

    /// Whether a page reports `remainingItemCount`: apiserver's `SelectionPredicate.Empty()` looks
    /// at labels and fields only, so a page filtered by `shardSelector` alone still counts every
    /// key that follows it (the real server's behaviour, kept).
    pub(crate) fn counts_remaining(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ResourceDefinition {
        ResourceDefinition {
            plural: "configmaps".into(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            namespaced: true,
            ..Default::default()
        }
    }

    #[test]
    fn query_values_are_percent_and_plus_decoded() {
        let q = Query::parse(Some("labelSelector=app%3Dweb%2Ctier+in+(a)&x=%zz&y=%4"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert_eq!(q.get("x"), Some("%zz"));
        assert_eq!(q.get("y"), Some("%4"));
    }

    #[test]
    fn rv_match_without_resource_version_is_invalid() {
        let q = Query::parse(Some("resourceVersionMatch=NotOlderThan"));
        let err = ListParams::parse(&q, &def(), false).unwrap_err();
        assert_eq!((err.code, &*err.reason), (422, "Invalid"));
        assert_eq!(
            err.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
    }

    #[test]
    fn send_initial_events_requires_not_older_than_and_bookmarks() {
        let q = Query::parse(Some(
            "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
        ));
        assert_eq!(ListParams::parse(&q, &def(), true).unwrap_err().code, 422);
        let q = Query::parse(Some("sendInitialEvents=true&allowWatchBookmarks=true"));
        assert_eq!(ListParams::parse(&q, &def(), true).unwrap_err().code, 422);
        let q = Query::parse(Some(
            "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
        ));
        assert!(ListParams::parse(&q, &def(), true).is_ok());
    }

    #[test]
    fn limit_zero_or_negative_means_no_limit() {
        for limit in ["0", "-1", "-9223372036854775808"] {
            let q = Query::parse(Some(&format!("limit={limit}")));
            assert_eq!(ListParams::parse(&q, &def(), false).unwrap().limit, None);
        }
    }

    #[test]
    fn numbers_beyond_int64_are_out_of_range() {
        let q = Query::parse(Some("limit=9223372036854775808"));
        let err = ListParams::parse(&q, &def(), false).unwrap_err();
        assert_eq!((err.code, &*err.reason), (400, "BadRequest"));
        assert_eq!(
            err.message,
            "invalid value for limit: strconv.ParseInt: parsing \"9223372036854775808\": value out of range"
        );
        let q = Query::parse(Some("limit=9223372036854775807"));
        assert_eq!(
            ListParams::parse(&q, &def(), false).unwrap().limit,
            Some(usize::try_from(i64::MAX).unwrap())
        );
    }

    #[test]
    fn watch_timeout_zero_is_the_default_and_negative_ends_at_once() {
        let timeout = |value: &str| {
            let q = Query::parse(Some(&format!("watch=1&timeoutSeconds={value}")));
            ListParams::parse(&q, &def(), true).unwrap().timeout_seconds
        };
        assert_eq!(timeout("0"), None);
        assert_eq!(timeout("-5"), Some(0));
        assert_eq!(timeout("30"), Some(30));
        assert_eq!(
            timeout("9223372036854775807"),
            Some(9_223_372_036_854_775_807)
        );
    }
}
