//! Fault injection for reliability tests: the failures a real cluster produces under load or during
//! upgrades (dropped watches, etcd compaction, API Priority and Fairness 429s, 5xx, slowness, an
//! RBAC denial).
//!
//! Faults act on new requests and on open watch streams; they never corrupt stored objects, so a
//! client that handles them correctly converges on the true state afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::authz::{Attributes, UserInfo};
use crate::request::requestinfo;
use crate::status::ApiError;
use crate::storage::State;
use crate::verb::Verb;

/// The failure returned by [`Faults::fail_next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// 429 TooManyRequests with `Retry-After: <seconds>`.
    TooManyRequests {
        /// Value of the `Retry-After` header and `details.retryAfterSeconds`.
        retry_after_seconds: u64,
    },
    /// 500 InternalError.
    InternalError,
    /// 503 ServiceUnavailable.
    ServiceUnavailable,
    /// 403 Forbidden, worded as the real authorizer denies `user` (kube-apiserver's
    /// `forbiddenMessage`): `configmaps is forbidden: User "nobody" cannot list resource
    /// "configmaps" in API group "" at the cluster scope`, with `details.{group,kind,name}`.
    Forbidden {
        /// The user name the message quotes.
        user: &'static str,
    },
}

/// The request a fault is checked against and worded for.
pub(crate) struct FaultRequest<'a> {
    /// The request's verb.
    pub(crate) verb: Verb,
    /// API group (`""` for the core group).
    pub(crate) group: &'a str,
    /// Plural resource name.
    pub(crate) plural: &'a str,
    /// Subresource (`status`), if any.
    pub(crate) subresource: Option<&'a str>,
    /// Namespace of the URL, `None` for cluster-scoped and all-namespaces requests.
    pub(crate) namespace: Option<&'a str>,
    /// Object name of the URL, if any.
    pub(crate) name: Option<&'a str>,
}

impl FaultRequest<'_> {
    /// `configmaps`, or `deployments/status` for a subresource (what [`RequestMatch`] matches).
    fn resource(&self) -> String {
        match self.subresource {
            Some(sub) => format!("{}/{sub}", self.plural),
            None => self.plural.to_owned(),
        }
    }
}

impl Failure {
    fn to_error(self, request: &FaultRequest<'_>) -> ApiError {
        match self {
            Failure::Forbidden { user } => {
                let attributes = Attributes {
                    user: UserInfo::new(user, "", &[]),
                    verb: request.verb.as_str().to_owned(),
                    namespace: request.namespace.unwrap_or_default().to_owned(),
                    group: request.group.to_owned(),
                    resource: request.plural.to_owned(),
                    subresource: request.subresource.unwrap_or_default().to_owned(),
                    name: request.name.unwrap_or_default().to_owned(),
                    ..Attributes::default()
                };
                requestinfo::forbidden(&attributes, "")
            }
            Failure::TooManyRequests {
                retry_after_seconds,
            } => ApiError::too_many_requests(retry_after_seconds),
            Failure::InternalError => ApiError::internal("injected fault"),
            Failure::ServiceUnavailable => {
                ApiError::service_unavailable("injected fault: service unavailable")
            }
        }
    }
}

/// Which requests a fault applies to; unset parts match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestMatch {
    verb: Option<String>,
    resource: Option<String>,
}

impl RequestMatch {
    /// Matches every resource request.
    pub fn any() -> RequestMatch {
        RequestMatch::default()
    }

    /// Only this verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`.
    pub fn verb(mut self, verb: &str) -> RequestMatch {
        self.verb = Some(verb.to_string());
        self
    }

    /// Only this plural resource (`configmaps`), or a subresource (`deployments/status`, or a
    /// stream such as `pods/exec`, whose WebSocket `GET` is verb `get` and SPDY `POST` `create`).
    pub fn resource(mut self, resource: &str) -> RequestMatch {
        self.resource = Some(resource.to_string());
        self
    }

    fn matches(&self, verb: &str, resource: &str) -> bool {
        self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| r == resource)
    }
}

/// What open watches should do; watch tasks subscribe to changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WatchControl {
    /// Incremented by `drop_watches`: watches opened before end their stream.
    pub(crate) drop_generation: u64,
    /// Incremented by `send_bookmarks`: watches with bookmarks send one now.
    pub(crate) bookmark_generation: u64,
    /// While true, watches deliver nothing but stay open.
    pub(crate) stalled: bool,
}

struct Rule {
    matcher: RequestMatch,
    /// Invariant: > 0 while the rule is stored.
    remaining: usize,
    failure: Failure,
}

struct Inner {
    rules: Mutex<Vec<Rule>>,
    latency: Mutex<Duration>,
    bookmarks_enabled: AtomicBool,
    control: watch::Sender<WatchControl>,
    state: Arc<Mutex<State>>,
}

/// Handle to inject faults into a running server. Cheap to clone; all clones act on one server.
#[derive(Clone)]
pub struct Faults {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults")
            .field("control", &*self.inner.control.borrow())
            .finish_non_exhaustive()
    }
}

impl Faults {
    pub(crate) fn new(state: Arc<Mutex<State>>) -> Faults {
        Faults {
            inner: Arc::new(Inner {
                rules: Mutex::new(Vec::new()),
                latency: Mutex::new(Duration::ZERO),
                bookmarks_enabled: AtomicBool::new(true),
                control: watch::Sender::new(WatchControl::default()),
                state,
            }),
        }
    }

    /// Ends every open watch stream cleanly (as when an apiserver instance restarts). Clients see a
    /// normal end of stream and should re-watch from their last resourceVersion. "Open" means the
    /// server has answered the watch request: a client holding the response sees its end.
    pub fn drop_watches(&self) {
        self.inner.control.send_modify(|c| c.drop_generation += 1);
    }

    /// Compacts the whole history now: every watch or list at an older resourceVersion and every
    /// continue token issued so far gets 410 Expired.
    pub fn expire_history(&self) {
        self.inner.state.lock().store.compact_now();
    }

    /// The next `count` requests matching `matcher` fail with `failure`.
    pub fn fail_next(&self, count: usize, matcher: RequestMatch, failure: Failure) {
        if count > 0 {
            self.inner.rules.lock().push(Rule {
                matcher,
                remaining: count,
                failure,
            });
        }
    }

    /// Delays every request by `latency` before it is handled (zero turns it off).
    pub fn set_latency(&self, latency: Duration) {
        *self.inner.latency.lock() = latency;
    }

    /// Stops (true) or resumes (false) event delivery on all watches without closing them, like a
    /// hung connection. Events are delivered after resuming.
    pub fn stall_watches(&self, stalled: bool) {
        self.inner.control.send_modify(|c| c.stalled = stalled);
    }

    /// Turns BOOKMARK events off (false) or on again (true), as a server that never sends them.
    pub fn set_bookmarks_enabled(&self, enabled: bool) {
        self.inner
            .bookmarks_enabled
            .store(enabled, Ordering::SeqCst);
    }

    /// Makes every open watch that allows bookmarks send one now.
    pub fn send_bookmarks(&self) {
        self.inner
            .control
            .send_modify(|c| c.bookmark_generation += 1);
    }

    /// Removes pending failures and latency, resumes stalled watches and re-enables bookmarks.
    pub fn clear(&self) {
        self.inner.rules.lock().clear();
        self.set_latency(Duration::ZERO);
        self.stall_watches(false);
        self.set_bookmarks_enabled(true);
    }

    pub(crate) fn latency(&self) -> Duration {
        *self.inner.latency.lock()
    }

    pub(crate) fn bookmarks_enabled(&self) -> bool {
        self.inner.bookmarks_enabled.load(Ordering::SeqCst)
    }

    pub(crate) fn watch_control(&self) -> watch::Receiver<WatchControl> {
        self.inner.control.subscribe()
    }

    /// Consumes one failure matching `request`, if any.
    pub(crate) fn take_failure(&self, request: &FaultRequest<'_>) -> Option<ApiError> {
        let mut rules = self.inner.rules.lock();
        if rules.is_empty() {
            return None;
        }
        let resource = request.resource();
        let index = rules
            .iter()
            .position(|r| r.matcher.matches(request.verb.as_str(), &resource))?;
        let failure = rules[index].failure;
        rules[index].remaining -= 1;
        if rules[index].remaining == 0 {
            rules.remove(index);
        }
        Some(failure.to_error(request))
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        assert!(self.inner.rules.lock().iter().all(|r| r.remaining > 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults() -> Faults {
        Faults::new(Arc::new(Mutex::new(State::new(10))))
    }

    fn request(verb: Verb, plural: &str) -> FaultRequest<'_> {
        FaultRequest {
            verb,
            group: "",
            plural,
            subresource: None,
            namespace: None,
            name: None,
        }
    }

    #[test]
    fn fail_next_consumes_exactly_n_matching_requests() {
        let faults = faults();
        faults.fail_next(
            2,
            RequestMatch::any().verb("list").resource("configmaps"),
            Failure::InternalError,
        );
        assert!(
            faults
                .take_failure(&request(Verb::Get, "configmaps"))
                .is_none()
        );
        assert!(
            faults
                .take_failure(&request(Verb::List, "secrets"))
                .is_none()
        );
        assert_eq!(
            faults
                .take_failure(&request(Verb::List, "configmaps"))
                .map(|e| e.code),
            Some(500)
        );
        faults.check_invariants();
        assert_eq!(
            faults
                .take_failure(&request(Verb::List, "configmaps"))
                .map(|e| e.code),
            Some(500)
        );
        assert!(
            faults
                .take_failure(&request(Verb::List, "configmaps"))
                .is_none()
        );
        faults.check_invariants();
    }

    #[test]
    fn too_many_requests_carries_retry_after() {
        let faults = faults();
        faults.fail_next(
            1,
            RequestMatch::any(),
            Failure::TooManyRequests {
                retry_after_seconds: 7,
            },
        );
        let err = faults.take_failure(&request(Verb::Watch, "pods")).unwrap();
        assert_eq!((err.code, err.retry_after), (429, Some(7)));
    }

    #[test]
    fn forbidden_is_worded_like_the_rbac_authorizer() {
        let faults = faults();
        let denied = Failure::Forbidden { user: "nobody" };
        faults.fail_next(2, RequestMatch::any(), denied);
        let cluster = faults
            .take_failure(&request(Verb::List, "configmaps"))
            .unwrap();
        assert_eq!((cluster.code, &*cluster.reason), (403, "Forbidden"));
        assert_eq!(
            cluster.message,
            "configmaps is forbidden: User \"nobody\" cannot list resource \"configmaps\" in API group \"\" at the cluster scope"
        );
        let named = FaultRequest {
            group: "apps",
            subresource: Some("status"),
            namespace: Some("police-demo"),
            name: Some("web"),
            ..request(Verb::Get, "deployments")
        };
        let err = faults.take_failure(&named).unwrap();
        assert_eq!(
            err.message,
            "deployments.apps \"web\" is forbidden: User \"nobody\" cannot get resource \"deployments/status\" in API group \"apps\" in the namespace \"police-demo\""
        );
        assert_eq!(
            (
                err.details.group.as_str(),
                err.details.kind.as_str(),
                err.details.name.as_str()
            ),
            ("apps", "deployments", "web")
        );
    }
}
