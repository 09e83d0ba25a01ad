//! `DeleteOptions` of a delete: preconditions and the garbage-collection propagation policy
//! (apiserver `registry/rest/delete.go` `BeforeDelete`, `registry/generic/registry/store.go`
//! `deletionFinalizersForGarbageCollection`).
//!
//! # Why propagation matters without a garbage collector
//! `Foreground` and `Orphan` are carried out by the kube-controller-manager's garbage collector,
//! which neither this server nor the real servers kubegen is checked against run. What the API
//! server itself does is observable: it keeps the object, with `deletionTimestamp` and the
//! `foregroundDeletion` or `orphan` finalizer, until someone removes the finalizer. Without a
//! garbage collector that someone is the test (or nobody: the object stays, as on the real
//! servers here). A later `Background` delete drops those two finalizers again, which deletes the
//! object when no other finalizer holds it.

use bytes::Bytes;
use serde_json::Value;

use crate::request::query::Query;
use crate::status::{ApiError, Qualified, cause};
use crate::storage::objects::Stored;

/// The finalizer of a foreground deletion (`metav1.FinalizerDeleteDependents`).
const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion (`metav1.FinalizerOrphanDependents`).
const ORPHAN: &str = "orphan";

/// `propagationPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Propagation {
    Foreground,
    Background,
    Orphan,
}

/// The parts of `DeleteOptions` the server acts on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeleteOptions {
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) propagation: Option<Propagation>,
    /// The deprecated `orphanDependents`, which wins over `propagationPolicy`.
    pub(crate) orphan_dependents: Option<bool>,
    /// `gracePeriodSeconds`: how long a kind with graceful deletion (Pods) keeps the object.
    pub(crate) grace_period_seconds: Option<i64>,
}

impl DeleteOptions {
    /// From the body when there is one, else from the query, as the real delete handler reads
    /// them.
    ///
    /// # Errors
    /// 400 for a body that is not JSON, 422 for an unknown `propagationPolicy`.
    pub(crate) fn parse(body: &Bytes, query: &Query) -> Result<DeleteOptions, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            let options = DeleteOptions {
                propagation: propagation(query.get("propagationPolicy"))?,
                orphan_dependents: query.get("orphanDependents").map(|v| v == "true"),
                grace_period_seconds: query.get("gracePeriodSeconds").and_then(|v| v.parse().ok()),
                ..DeleteOptions::default()
            };
            return Ok(options);
        }
        let options: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
        })?;
        let text = |pointer: &str| {
            options
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Ok(DeleteOptions {
            uid: text("/preconditions/uid"),
            resource_version: text("/preconditions/resourceVersion"),
            propagation: propagation(text("/propagationPolicy").as_deref())?,
            orphan_dependents: options.get("orphanDependents").and_then(Value::as_bool),
            grace_period_seconds: options.get("gracePeriodSeconds").and_then(Value::as_i64),
        })
    }

    /// Checks the preconditions against the stored object.
    ///
    /// # Errors
    /// 409 Conflict naming the kind (`ConfigMap "x"`, `Deployment.apps "x"`), worded like the
    /// real server.
    pub(crate) fn check(
        &self,
        group: &str,
        kind: &str,
        name: &str,
        stored: &Stored,
    ) -> Result<(), ApiError> {
        let what = Qualified {
            group,
            resource: kind,
        };
        let uid = crate::object::meta_str(&stored.value, "uid");
        if let Some(want) = self.uid.as_deref().filter(|w| *w != uid) {
            let why = format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            );
            return Err(ApiError::conflict(what, name, &why));
        }
        let rv = stored.rv.to_string();
        if let Some(want) = self.resource_version.as_deref().filter(|w| *w != rv) {
            let why = format!(
                "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            );
            return Err(ApiError::conflict(what, name, &why));
        }
        Ok(())
    }

    /// The finalizers `current` must have after this delete: `orphan` and `foregroundDeletion`
    /// removed, then added back as the options (or, without options, the finalizers already
    /// there) ask.
    pub(crate) fn finalizers(&self, current: &[String]) -> Vec<String> {
        let mut next: Vec<String> = current
            .iter()
            .filter(|f| *f != ORPHAN && *f != FOREGROUND)
            .cloned()
            .collect();
        let has = |f: &str| {
            current
                .iter()
                .find(|c| *c == ORPHAN || *c == FOREGROUND)
                .is_some_and(|c| c == f)
        };
        let (orphan, foreground) = match (self.orphan_dependents, self.propagation) {
            (Some(orphan), _) => (orphan, false),
            (None, Some(Propagation::Orphan)) => (true, false),
            (None, Some(Propagation::Foreground)) => (false, true),
            (None, Some(Propagation::Background)) => (false, false),
            (None, None) => (has(ORPHAN), has(FOREGROUND)),
        };
        if orphan {
            next.push(ORPHAN.into());
        }
        if foreground {
            next.push(FOREGROUND.into());
        }
        next
    }
}

fn propagation(value: Option<&str>) -> Result<Option<Propagation>, ApiError> {
    match value {
        None => Ok(None),
        Some("Foreground") => Ok(Some(Propagation::Foreground)),
        Some("Background") => Ok(Some(Propagation::Background)),
        Some("Orphan") => Ok(Some(Propagation::Orphan)),
        Some(other) => {
            let message = format!(
                "Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
            );
            Err(ApiError::invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                vec![cause(
                    "FieldValueNotSupported",
                    "propagationPolicy",
                    message,
                )],
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn with(propagation: Option<Propagation>, orphan_dependents: Option<bool>) -> DeleteOptions {
        DeleteOptions {
            propagation,
            orphan_dependents,
            ..DeleteOptions::default()
        }
    }

    #[test]
    fn propagation_policy_adds_its_finalizer() {
        let own = strings(&["x/y"]);
        let foreground = with(Some(Propagation::Foreground), None).finalizers(&own);
        assert_eq!(foreground, strings(&["x/y", "foregroundDeletion"]));
        let orphan = with(Some(Propagation::Orphan), None).finalizers(&own);
        assert_eq!(orphan, strings(&["x/y", "orphan"]));
        assert_eq!(with(None, Some(true)).finalizers(&[]), strings(&["orphan"]));
    }

    #[test]
    fn background_drops_gc_finalizers_and_no_policy_keeps_them() {
        let held = strings(&["orphan", "x/y"]);
        let background = with(Some(Propagation::Background), None).finalizers(&held);
        assert_eq!(background, strings(&["x/y"]));
        assert_eq!(
            with(None, None).finalizers(&held),
            strings(&["x/y", "orphan"])
        );
        assert_eq!(with(None, None).finalizers(&[]), Vec::<String>::new());
    }

    #[test]
    fn options_come_from_the_body_or_else_the_query() {
        let query = Query::parse(Some("propagationPolicy=Orphan"));
        let from_query = DeleteOptions::parse(&Bytes::new(), &query).unwrap();
        assert_eq!(from_query.propagation, Some(Propagation::Orphan));
        let body = Bytes::from_static(
            br#"{"propagationPolicy":"Foreground","preconditions":{"uid":"u"}}"#,
        );
        let from_body = DeleteOptions::parse(&body, &query).unwrap();
        assert_eq!(from_body.propagation, Some(Propagation::Foreground));
        assert_eq!(from_body.uid.as_deref(), Some("u"));
    }

    #[test]
    fn unknown_propagation_policy_is_invalid() {
        let query = Query::parse(Some("propagationPolicy=Bogus"));
        let err = DeleteOptions::parse(&Bytes::new(), &query).unwrap_err();
        assert_eq!((err.code, &*err.reason), (422, "Invalid"));
        assert_eq!(
            err.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        );
    }
}
