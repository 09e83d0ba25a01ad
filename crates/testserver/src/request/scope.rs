//! [`Scope`]: everything the pipeline decided about a resource request before a handler runs,
//! built once and immutable (apiserver `endpoints/handlers.RequestScope` plus the request's
//! `RequestInfo`, user and options). A handler holding a `Scope` knows negotiation has run.

use std::ops::Deref;

use kubegen_apply::Writer;

use std::sync::Arc;

use crate::audit::RequestAudit;
use crate::authz::{Authorizer, UserInfo};
use crate::request::negotiation::WireFormat;
use crate::request::route::Target;
use crate::verb::Verb;

/// A resource request, decided: its endpoint, verb, user, the negotiated answer format, who
/// writes and whether it is a dry run.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    pub(crate) target: Target,
    pub(crate) verb: Verb,
    /// The authenticated user.
    pub(crate) user: UserInfo,
    /// The format the answer is written in, chosen by content negotiation.
    pub(crate) format: WireFormat,
    /// Who writes (`fieldManager`, `force`, `User-Agent`), for managedFields.
    pub(crate) writer: Writer,
    /// `dryRun=All`: validate and answer as usual, but store nothing.
    pub(crate) dry_run: bool,
    /// The version the request named, when the handlers run in another one (a custom resource's
    /// storage version, `crate::kinds::custom_resource::edge`); `None` when it is `def.version`.
    /// Admission webhooks match and report the request by it (`requestKind`).
    pub(crate) request_version: Option<String>,
    /// The server's authorizer, for admission policies' `authorizer` (the request itself was
    /// authorized before routing).
    pub(crate) authorizer: Arc<dyn Authorizer>,
    /// The request's audit event, which admission policies annotate.
    pub(crate) audit: RequestAudit,
}

/// A scope reads as its target (`scope.def`, `scope.name`): handlers mostly ask about the
/// endpoint, and the target never changes once routed.
impl Deref for Scope {
    type Target = Target;

    fn deref(&self) -> &Target {
        &self.target
    }
}
