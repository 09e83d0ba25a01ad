//! Reactors: test code that answers a request instead of the object tracker. Mirrors `Reactor`,
//! `PrependReactor` and `ReactionFunc` of client-go `testing/fixture.go` and `testing/fake.go`.
//!
//! The classic use is fault injection in controller tests ("the status update conflicts, does the
//! controller requeue?"), plus the [`conflict`], [`not_found`] and [`internal_error`] helpers that
//! build the same `Status` bodies the real API server sends.

use std::sync::Arc;

use kube_core::{Status, response::StatusDetails};

use crate::action::Action;

/// What a reactor returns when it handles a request: the response object (any JSON, typically the
/// object a real server would have returned) or a failure `Status` (its `code` is the HTTP status).
/// The status is boxed because it is large (clippy's `result_large_err`); `Status::boxed()` and
/// the helpers below produce one.
pub type Reaction = Option<Result<serde_json::Value, Box<Status>>>;

/// A registered reactor: which requests it looks at and the function deciding.
#[derive(Clone)]
pub(crate) struct Reactor {
    /// Verb name (`update`, `delete-collection`, ...) or `*`.
    verb: String,
    /// Resource (`whitelists`, `deployments/status`) or `*`.
    resource: String,
    /// Returns `None` to pass the request on to the next reactor and finally to the tracker.
    react: Arc<dyn Fn(&Action) -> Reaction + Send + Sync>,
}

impl Reactor {
    pub(crate) fn new(
        verb: &str,
        resource: &str,
        react: impl Fn(&Action) -> Reaction + Send + Sync + 'static,
    ) -> Self {
        Reactor {
            verb: verb.to_owned(),
            resource: resource.to_owned(),
            react: Arc::new(react),
        }
    }

    /// This reactor's answer to `action`, if it handles it.
    pub(crate) fn react(&self, action: &Action) -> Reaction {
        if action.matches(&self.verb, &self.resource) {
            (self.react)(action)
        } else {
            None
        }
    }
}

/// `resource.group` as the server names a resource in messages (`deployments.apps`, `pods`).
fn qualified_resource(action: &Action) -> String {
    if action.group.is_empty() {
        action.resource.clone()
    } else {
        format!("{}.{}", action.resource, action.group)
    }
}

fn failure(action: &Action, code: u16, reason: &str, message: String) -> Box<Status> {
    Status::failure(&message, reason)
        .with_code(code)
        .with_details(StatusDetails {
            name: action.name.clone().unwrap_or_default(),
            group: action.group.clone(),
            kind: action.resource.clone(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: 0,
        })
        .boxed()
}

/// The 409 Conflict a real server sends when the object's `resourceVersion` is stale.
pub fn conflict(action: &Action) -> Box<Status> {
    let message = format!(
        "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
        qualified_resource(action),
        action.name.as_deref().unwrap_or_default()
    );
    failure(action, 409, "Conflict", message)
}

/// The 404 Not Found a real server sends for a missing object.
pub fn not_found(action: &Action) -> Box<Status> {
    let message = format!(
        "{} \"{}\" not found",
        qualified_resource(action),
        action.name.as_deref().unwrap_or_default()
    );
    failure(action, 404, "NotFound", message)
}

/// A 500 Internal Server Error carrying `message`.
pub fn internal_error(action: &Action, message: &str) -> Box<Status> {
    let message = format!("Internal error occurred: {message}");
    failure(action, 500, "InternalError", message)
}

/// The JSON body of `status` as the server sends it (`kind: Status`, `apiVersion: v1`).
pub(crate) fn status_body(status: &Status) -> serde_json::Value {
    let mut body = serde_json::to_value(status).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = body.as_object_mut() {
        map.insert("kind".to_owned(), "Status".into());
        map.insert("apiVersion".to_owned(), "v1".into());
        map.entry("status").or_insert_with(|| "Failure".into());
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubegen_testserver::Verb;

    fn update_whitelist() -> Action {
        Action {
            verb: Verb::Update,
            group: "police.example.com".to_owned(),
            version: "v1beta1".to_owned(),
            resource: "whitelists".to_owned(),
            subresource: None,
            namespace: Some("team-a".to_owned()),
            name: Some("wl".to_owned()),
            query: Vec::new(),
            body: None,
            patch_type: None,
        }
    }

    #[test]
    fn conflict_matches_the_real_servers_wording() {
        let status = conflict(&update_whitelist());
        assert_eq!(status.code, 409);
        assert_eq!(status.reason, "Conflict");
        assert!(status.is_conflict());
        assert!(
            status.message.starts_with(
                "Operation cannot be fulfilled on whitelists.police.example.com \"wl\""
            )
        );
        let body = status_body(&status);
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["status"], "Failure");
        assert_eq!(body["details"]["name"], "wl");
    }

    #[test]
    fn reactor_only_sees_matching_actions() {
        let reactor = Reactor::new("update", "whitelists", |a| Some(Err(not_found(a))));
        assert!(reactor.react(&update_whitelist()).is_some());
        let mut status_update = update_whitelist();
        status_update.subresource = Some("status".to_owned());
        assert!(reactor.react(&status_update).is_none());
        let declining = Reactor::new("*", "*", |_| None);
        assert!(declining.react(&update_whitelist()).is_none());
    }
}
