//! What a reconcile is given and what it answers: the [`Reconciler`] trait an application
//! implements, the [`Context`] of one call (the queued key, the failures so far), and the
//! [`Action`] or [`OnError`] that tells the controller what to do with the key next. The
//! counterpart of controller-runtime's `pkg/reconcile` (`reconcile.Reconciler`,
//! `reconcile.Request`, `reconcile.Result`, `reconcile.TerminalError`) and of kube-rs's
//! `reconcile`/`error_policy` pair.
//!
//! # Outcomes
//! `Ok(Action::Done)` forgets the key's failures; `Ok(Action::RequeueAfter(d))` forgets them and
//! re-adds the key after `d`; `Err(e)` is logged, counted, and handled as
//! [`Reconciler::on_error`] says: [`OnError::Backoff`] (the default) re-adds the key through the
//! rate limiter (per-item exponential backoff plus the overall bucket),
//! [`OnError::RequeueAfter`] after a given delay, and [`OnError::Terminal`] not at all (the
//! error is recorded as a Warning Event on the object and counted as terminal: it will not
//! succeed until the object changes, which enqueues it again). A panic counts as an error and
//! is retried with backoff. The controller's workers (`controller.rs`) carry these out.

use std::fmt::{self, Display};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube_core::Resource;
use kubegen_cache::ObjectKey;

/// What the controller does with a key after a successful reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing more until the next event about the key.
    Done,
    /// Reconcile the key again after this long, even if no event arrives (polling something
    /// outside the cluster, waiting for a deadline).
    RequeueAfter(Duration),
}

/// What a reconcile knows besides the object: the key it was queued under and how often it has
/// failed in a row.
#[derive(Clone, Debug)]
pub struct Context {
    key: ObjectKey,
    failures: u32,
}

impl Context {
    /// A context for `key` after `failures` failed attempts (for tests of reconcilers).
    pub fn new(key: ObjectKey, failures: u32) -> Context {
        Context { key, failures }
    }

    /// The queued key: the object's `namespace/name`, or its namespace for a controller built
    /// with [`crate::Builder::group_by_namespace`].
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// How many reconciles of this key failed in a row before this one.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

/// What the controller does with a key whose reconcile failed: the error policy of
/// kube-rs's `error_policy` and controller-runtime's `reconcile.TerminalError`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Retry through the rate limiter: per-item exponential backoff, capped by the overall bucket.
    Backoff,
    /// Retry after exactly this long (the key's failures still count in [`Context::failures`]).
    RequeueAfter(Duration),
    /// Never retry: the error will not go away by itself (an invalid spec, a missing permission
    /// that needs a person). Recorded as a Warning Event on the object and counted in
    /// `controller_runtime_terminal_reconcile_errors_total`; the next change of the object
    /// enqueues it again.
    Terminal,
}

/// The application's business logic for the primary kind `K`.
///
/// The reconciler holds whatever it needs (listers, clients, a [`crate::Recorder`]); the
/// controller shares it between its workers.
pub trait Reconciler<K>: Send + Sync + 'static {
    /// Why a reconcile failed; [`Reconciler::on_error`] says what happens next.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Makes the world match `object`. Must be idempotent: it may run again for the same state.
    fn reconcile(
        &self,
        object: Arc<K>,
        context: &Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// What to do after `error`. The default retries with backoff.
    fn on_error(&self, error: &Self::Error, context: &Context) -> OnError {
        let _ = (error, context);
        OnError::Backoff
    }
}

/// A shared reconciler: the application keeps an `Arc` to inspect its state while the
/// manager runs it.
impl<K, R: Reconciler<K>> Reconciler<K> for Arc<R> {
    type Error = R::Error;

    fn reconcile(
        &self,
        object: Arc<K>,
        context: &Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        R::reconcile(self, object, context)
    }

    fn on_error(&self, error: &Self::Error, context: &Context) -> OnError {
        R::on_error(self, error, context)
    }
}

/// The kind of objects a controller can reconcile or watch.
pub trait Object: Resource<DynamicType = ()> + Clone + Send + Sync + 'static {}

impl<T> Object for T where T: Resource<DynamicType = ()> + Clone + Send + Sync + 'static {}

impl Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Done => f.write_str("done"),
            Action::RequeueAfter(delay) => write!(f, "requeue after {delay:?}"),
        }
    }
}
