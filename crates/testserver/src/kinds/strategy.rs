//! The [`Strategy`] trait: the hooks through which the generic handlers and deletion ask a kind
//! for its own rules (see the table in `crate::kinds`).

use serde_json::{Map, Value};

use crate::kinds::builtin_defaults;
use crate::kinds::custom_resource::edge::Edge;
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;
use crate::verb::Verb;

/// How a kind departs from the generic verbs. Every hook defaults to the generic behaviour.
pub(crate) trait Strategy: Sync {
    /// The verbs the kind's storage serves (a definition's own `verbs`, when set, narrow them
    /// further). Every verb by default.
    fn verbs(&self) -> &'static [Verb] {
        &Verb::ALL
    }

    /// Subresources served beside `status` and `scale` (which the definition declares), each
    /// with the one verb it serves.
    fn subresources(&self) -> &'static [(&'static str, Verb)] {
        &[]
    }

    /// Whether `subresource` is the TokenRequest API (`crate::handlers::token`), answered
    /// before content negotiation, in JSON.
    fn requests_token(&self, _subresource: &str) -> bool {
        false
    }

    /// Whether `subresource` is a stream served by the object's Node (`pods/log`, `pods/exec`,
    /// `pods/attach`, `pods/portforward`, `crate::handlers::pod_connect`), answered before
    /// content negotiation with the kubelet's bytes.
    fn connects(&self, _subresource: &str) -> bool {
        false
    }

    /// Whether `subresource` binds the object to a Node (`pods/binding`,
    /// `crate::handlers::binding`), answered with a `Status` instead of the object.
    fn binds(&self, _subresource: &str) -> bool {
        false
    }

    /// The kind's decoding of a write's body, before admission: what the real server's codec
    /// does besides parsing. A built-in kind gets its defaults (`builtin_defaults`; none for most
    /// kinds); a custom resource is pruned and defaulted by its schema instead.
    fn decode(&self, _state: &State, def: &ResourceDefinition, object: &mut Map<String, Value>) {
        builtin_defaults::fill(&def.group, &def.plural, object);
    }

    /// `Validate` / `ValidateUpdate` of the object a write through `target` would store, named
    /// `name` (`old`, the stored one, on update), after the generic rules and `prepare_for_*`. It
    /// may settle the object first, as a custom resource is pruned and defaulted.
    ///
    /// # Errors
    /// 422 Invalid for an object the kind rejects.
    fn validate(
        &self,
        _state: &State,
        _target: &Scope,
        _name: &str,
        _object: (&mut Value, Option<&Value>),
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// Checks of the object exactly as a write through `target` would store it, named `name`,
    /// after its managedFields were recorded: the ones kube-apiserver's `Validate` makes after
    /// its field manager ran, so that a request that is both malformed in `managedFields` and
    /// invalid answers with the managedFields error, as the real server does.
    ///
    /// # Errors
    /// 422 Invalid for an object the kind rejects.
    fn validate_stored(
        &self,
        _target: &Scope,
        _name: &str,
        _object: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The edge a request for this kind crosses when the kind is served in several versions:
    /// objects are stored in one, requests converted in and their answers out
    /// (`crate::kinds::custom_resource::edge`). `None` for kinds served in one version.
    fn edge(&self, _state: &State, _scope: &Scope) -> Option<Edge> {
        None
    }

    /// `PrepareForCreate` and `Validate`: defaults and checks of a new object, before storing.
    ///
    /// # Errors
    /// 422 Invalid for an object the kind rejects.
    fn prepare_for_create(&self, _object: &mut Map<String, Value>) -> Result<(), ApiError> {
        Ok(())
    }

    /// `PrepareForUpdate` and `ValidateUpdate` of a write through the main endpoint or a
    /// subresource other than `status`.
    ///
    /// # Errors
    /// 422 Invalid for an object the kind rejects.
    fn prepare_for_update(&self, _object: &mut Map<String, Value>) -> Result<(), ApiError> {
        Ok(())
    }

    /// What a write through `/status` may change of `metadata` (the status strategy's
    /// `PrepareForUpdate`): `None`, nothing (custom resources and most kinds here: the old
    /// metadata is kept); `Some(kept)`, everything but the server-owned fields and `kept`, which
    /// stay as they were (Deployments keep their labels, ReplicaSets nothing: their status
    /// strategies only reset `spec` and, for Deployments, `labels`).
    fn status_update_metadata(&self) -> Option<&'static [&'static str]> {
        None
    }

    /// `CheckGracefulDelete`: how many seconds a delete asking for `requested`
    /// (`gracePeriodSeconds`) leaves the object in place, marked with `deletionTimestamp`, for
    /// its owner to finish (`crate::kinds::deletion`). 0, removed at once, for most kinds.
    fn grace_period(&self, _object: &Value, _requested: Option<i64>) -> i64 {
        0
    }

    /// After a create or update was stored (`AfterCreate`/`AfterUpdate`).
    fn after_write(&self, _state: &mut State, _stored: &Value) {}

    /// After the object was removed for good (`AfterDelete`).
    fn after_delete(&self, _state: &mut State, _last: &Value) {}

    /// Whether the kind's own finalizers (outside `metadata.finalizers`) still hold a deleted
    /// object: an update that empties `metadata.finalizers` removes it only when this is false
    /// (the store's `ShouldDeleteDuringUpdate`).
    fn held(&self, _object: &Value) -> bool {
        false
    }

    /// Whether a delete terminates instead of removing: the object is marked and its content
    /// deleted first by a controller (namespaces; see `crate::kinds::namespace::terminate`).
    fn terminates(&self) -> bool {
        false
    }

    /// The review this kind answers, for kinds that are questions, answered and never stored.
    fn review(&self) -> Option<Review> {
        None
    }
}

/// The review kinds (`crate::handlers::review`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Review {
    /// `authorization.k8s.io` `SelfSubjectAccessReview`.
    Access,
    /// `authorization.k8s.io` `SelfSubjectRulesReview`.
    Rules,
    /// `authentication.k8s.io` `SelfSubjectReview`.
    Subject,
    /// `authentication.k8s.io` `TokenReview`.
    Token,
}
