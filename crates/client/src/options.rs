//! Request options, named after `k8s.io/apimachinery/pkg/apis/meta/v1` (`GetOptions`,
//! `ListOptions`, `CreateOptions`, ...), and the [`Patch`] body.
//!
//! Every options type is plain data: `Default` plus chainable setters, so a call reads
//! `&ListOptions::default().labels("app=web").limit(500)`. Turning options into a query string
//! happens in `request.rs`, without I/O.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;
use serde::Serialize;

/// Options for `get` (metav1 `GetOptions`).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct GetOptions {
    /// `resourceVersion`: "" (default) reads the latest state, "0" allows any cached state.
    pub resource_version: Option<String>,
}

impl GetOptions {
    /// Sets `resourceVersion`.
    pub fn resource_version(mut self, rv: impl Into<String>) -> Self {
        self.resource_version = Some(rv.into());
        self
    }
}

/// How `resourceVersion` is interpreted by a list (metav1 `ResourceVersionMatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// Any state at least as new as the given resourceVersion.
    NotOlderThan,
    /// Exactly the given resourceVersion (requires a non-empty, non-"0" version).
    Exact,
}

impl ResourceVersionMatch {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
            ResourceVersionMatch::Exact => "Exact",
        }
    }
}

/// Options for `list` and `watch` (metav1 `ListOptions`; like metav1, one type for both verbs).
///
/// # Differences from kube-rs
/// `timeout_seconds` is sent as given: client-go's reflector asks for a random 300-600 s, which
/// kube-core's builder refuses (it caps watches below 295 s).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ListOptions {
    /// `labelSelector`, e.g. `app=web,tier!=db`.
    pub label_selector: Option<String>,
    /// `fieldSelector`, e.g. `metadata.name=x`.
    pub field_selector: Option<String>,
    /// `limit`: page size for lists (0 or `None`: no paging).
    pub limit: Option<u32>,
    /// `continue`: token from the previous page's `metadata.continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`: for lists "" = consistent read, "0" = any cached state; for watches,
    /// the version to start after.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (lists only).
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `timeoutSeconds`: the server ends the list/watch after this long. No client-side cap.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks` (watches only).
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (watches only): stream the current state first, ending with a
    /// bookmark annotated `k8s.io/initial-events-end`.
    pub send_initial_events: Option<bool>,
    /// `shardSelector` (KEP-5866, alpha in v1.36 behind `ShardedListAndWatch`): only objects whose
    /// FNV-1a 64 hash of `metadata.uid` or `metadata.namespace` lies in the given ranges, e.g.
    /// `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`. A server
    /// without the gate ignores it and answers with every object: a filtered list says so in
    /// `metadata.shardInfo`, so callers that must not see more check for it.
    pub shard_selector: Option<String>,
}

impl ListOptions {
    /// Sets `labelSelector`.
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }
    /// Sets `fieldSelector`.
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }
    /// Sets `limit`.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
    /// Sets `continue`.
    pub fn continue_token(mut self, token: impl Into<String>) -> Self {
        self.continue_token = Some(token.into());
        self
    }
    /// Sets `resourceVersion`.
    pub fn resource_version(mut self, rv: impl Into<String>) -> Self {
        self.resource_version = Some(rv.into());
        self
    }
    /// Sets `resourceVersionMatch`.
    pub fn resource_version_match(mut self, m: ResourceVersionMatch) -> Self {
        self.resource_version_match = Some(m);
        self
    }
    /// Sets `timeoutSeconds`.
    pub fn timeout_seconds(mut self, seconds: u32) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }
    /// Sets `allowWatchBookmarks`.
    pub fn allow_watch_bookmarks(mut self, allow: bool) -> Self {
        self.allow_watch_bookmarks = allow;
        self
    }
    /// Sets `sendInitialEvents`.
    pub fn send_initial_events(mut self, send: bool) -> Self {
        self.send_initial_events = Some(send);
        self
    }
    /// Sets `shardSelector`.
    pub fn shard_selector(mut self, selector: impl Into<String>) -> Self {
        self.shard_selector = Some(selector.into());
        self
    }
}

/// Options for `create`, `update` and `update_status`: metav1 `CreateOptions` and `UpdateOptions`,
/// which carry the same fields, so one type serves both (the two names are aliases of it, for
/// readers coming from client-go).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// `dryRun=All`: validate and admit, but do not persist.
    pub dry_run: bool,
    /// `fieldManager`: the actor recorded in `managedFields`.
    pub field_manager: Option<String>,
}

impl WriteOptions {
    /// Sets `dryRun=All`.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }
    /// Sets `fieldManager`.
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = Some(manager.into());
        self
    }
}

/// Options for `create` (metav1 `CreateOptions`).
pub type CreateOptions = WriteOptions;

/// Options for `update` and `update_status` (metav1 `UpdateOptions`).
pub type UpdateOptions = WriteOptions;

/// Options for `patch` (metav1 `PatchOptions`).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct PatchOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`; required by the server for [`Patch::Apply`].
    pub field_manager: Option<String>,
    /// `force`: take ownership of conflicting fields (server-side apply only).
    pub force: bool,
}

impl PatchOptions {
    /// Sets `dryRun=All`.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }
    /// Sets `fieldManager`.
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = Some(manager.into());
        self
    }
    /// Sets `force`.
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
}

/// Options for [`ResourceClient::apply`](crate::ResourceClient::apply): server-side apply needs a
/// field manager, the name the server records as owner of the applied fields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ApplyOptions {
    /// `fieldManager`.
    pub field_manager: String,
    /// `force`: take over fields other managers own instead of failing with a conflict.
    pub force: bool,
    /// `dryRun=All`.
    pub dry_run: bool,
}

impl ApplyOptions {
    /// Applies as `field_manager`, without force.
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions {
            field_manager: field_manager.into(),
            force: false,
            dry_run: false,
        }
    }
    /// Sets `force`.
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
    /// Sets `dryRun=All`.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// The equivalent [`PatchOptions`].
    pub(crate) fn patch_options(&self) -> PatchOptions {
        PatchOptions::default()
            .field_manager(self.field_manager.clone())
            .force(self.force)
            .dry_run(self.dry_run)
    }
}

/// What happens to dependents of a deleted object (metav1 `DeletionPropagation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PropagationPolicy {
    /// Dependents are left alone.
    Orphan,
    /// The object is deleted now, dependents in the background.
    Background,
    /// The object stays (with a `foregroundDeletion` finalizer) until its dependents are gone.
    Foreground,
}

/// Options for `delete` and `delete_collection`, sent as the `DeleteOptions` body.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct DeleteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Seconds before the object is deleted; 0 means immediately.
    pub grace_period_seconds: Option<u32>,
    /// Only delete if the object still has this uid / resourceVersion.
    pub preconditions: Option<Preconditions>,
    /// What happens to dependents.
    pub propagation_policy: Option<PropagationPolicy>,
}

impl DeleteOptions {
    /// Sets `dryRun=All`.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }
    /// Sets `gracePeriodSeconds`.
    pub fn grace_period_seconds(mut self, seconds: u32) -> Self {
        self.grace_period_seconds = Some(seconds);
        self
    }
    /// Sets `preconditions`.
    pub fn preconditions(mut self, preconditions: Preconditions) -> Self {
        self.preconditions = Some(preconditions);
        self
    }
    /// Sets `propagationPolicy`.
    pub fn propagation_policy(mut self, policy: PropagationPolicy) -> Self {
        self.propagation_policy = Some(policy);
        self
    }

    /// The `DeleteOptions` JSON body the server expects.
    pub(crate) fn body(&self) -> serde_json::Value {
        let mut body = serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1"});
        if self.dry_run {
            body["dryRun"] = serde_json::json!(["All"]);
        }
        if let Some(seconds) = self.grace_period_seconds {
            body["gracePeriodSeconds"] = seconds.into();
        }
        if let Some(pre) = &self.preconditions {
            body["preconditions"] =
                serde_json::json!({"uid": pre.uid, "resourceVersion": pre.resource_version});
        }
        if let Some(policy) = self.propagation_policy {
            body["propagationPolicy"] = serde_json::json!(policy);
        }
        body
    }
}

/// A patch body together with its type, which selects the `Content-Type`.
#[derive(Clone, Debug, PartialEq)]
pub enum Patch {
    /// JSON merge patch (RFC 7386): `application/merge-patch+json`.
    Merge(serde_json::Value),
    /// JSON patch (RFC 6902), an array of operations: `application/json-patch+json`.
    Json(serde_json::Value),
    /// Strategic merge patch (built-in kinds only): `application/strategic-merge-patch+json`.
    Strategic(serde_json::Value),
    /// Server-side apply of a (partial) object: `application/apply-patch+yaml`; needs
    /// [`PatchOptions::field_manager`].
    Apply(serde_json::Value),
}

impl Patch {
    /// The `Content-Type` header for this patch type.
    pub fn content_type(&self) -> &'static str {
        match self {
            Patch::Merge(_) => "application/merge-patch+json",
            Patch::Json(_) => "application/json-patch+json",
            Patch::Strategic(_) => "application/strategic-merge-patch+json",
            Patch::Apply(_) => "application/apply-patch+yaml",
        }
    }

    /// The patch document (JSON is valid YAML, so apply patches are sent as JSON too).
    pub fn value(&self) -> &serde_json::Value {
        match self {
            Patch::Merge(v) | Patch::Json(v) | Patch::Strategic(v) | Patch::Apply(v) => v,
        }
    }

    /// Whether this is a server-side apply patch (which alone accepts `force`).
    pub fn is_apply(&self) -> bool {
        matches!(self, Patch::Apply(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_options_body_carries_every_set_field() {
        let opts = DeleteOptions::default()
            .grace_period_seconds(0)
            .propagation_policy(PropagationPolicy::Foreground)
            .preconditions(Preconditions {
                uid: Some("u1".into()),
                resource_version: Some("7".into()),
            })
            .dry_run(true);
        assert_eq!(
            opts.body(),
            serde_json::json!({
                "kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"],
                "gracePeriodSeconds": 0, "propagationPolicy": "Foreground",
                "preconditions": {"uid": "u1", "resourceVersion": "7"},
            })
        );
    }

    #[test]
    fn default_delete_options_body_is_minimal() {
        assert_eq!(
            DeleteOptions::default().body(),
            serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1"})
        );
    }
}
