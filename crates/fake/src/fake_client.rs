//! The fake client: a [`kubegen_client::Client`] whose transport records every request, lets
//! reactors answer first, and otherwise serves it in-process with kubegen-testserver's
//! [`ApiServer`]. Mirrors client-go `testing.Fake` + `testing.ObjectTracker` (`testing/fake.go`,
//! `testing/fixture.go`), with a real API server as the tracker.
//!
//! # Why a real server instead of an object tracker
//! client-go's tracker is a map with its own, simpler semantics: no resourceVersion checks, no
//! field selectors, and a watch that only sees changes made after it was opened, so an informer under
//! test can miss every event between its List and its Watch. Routing through [`ApiServer::handle`]
//! gives the fake the server's semantics (optimistic concurrency, status subresource, generation,
//! watch replay from a resourceVersion) at the cost of no network: still microseconds per request.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use kubegen_client::{Body, Client, Transport};
use kubegen_testserver::{ApiServer, ServerOptions, Verb};
use parking_lot::Mutex;

use crate::action::Action;
use crate::reactor::{Reaction, Reactor, status_body};

/// A fake API for unit tests: hand [`client`](Self::client) to the code under test, then assert on
/// [`actions`](Self::actions).
///
/// # Guarantees
/// - Every request that names a resource is recorded, in the order received, before reactors or
///   the server see it; requests served by reactors are recorded too. Seeding is not recorded.
/// - Reactors are consulted newest first; the first that returns `Some` answers, the rest and the
///   server are skipped.
/// - Without a reactor, the request gets exactly the in-process server's response.
#[derive(Clone)]
pub struct FakeClient {
    shared: Arc<Shared>,
}

/// State shared between the handle and its transport.
struct Shared {
    /// The in-process server that stores objects and serves watches.
    api: ApiServer,
    /// Recorded actions, oldest first.
    actions: Mutex<Vec<Action>>,
    /// Reactors, consulted front to back (prepending puts new ones first).
    reactors: Mutex<Vec<Reactor>>,
}

impl Default for FakeClient {
    fn default() -> Self {
        FakeClient::new()
    }
}

impl FakeClient {
    /// An empty fake serving the test server's built-in kinds (namespaces, pods, deployments,
    /// events, leases, ...); [`register`](Self::register) adds custom kinds.
    pub fn new() -> FakeClient {
        let shared = Shared {
            api: ApiServer::new(ServerOptions::default()),
            actions: Mutex::new(Vec::new()),
            reactors: Mutex::new(Vec::new()),
        };
        FakeClient {
            shared: Arc::new(shared),
        }
    }

    /// A client backed by this fake, with `default` as its default namespace.
    pub fn client(&self) -> Client {
        Client::with_transport(
            Arc::new(FakeTransport {
                shared: Arc::clone(&self.shared),
            }),
            "default",
        )
    }

    /// The in-process server behind the fake, for registering kinds or reading state directly.
    pub fn api_server(&self) -> &ApiServer {
        &self.shared.api
    }

    /// A copy of every action recorded so far, oldest first.
    pub fn actions(&self) -> Vec<Action> {
        self.shared.actions.lock().clone()
    }

    /// Forgets the recorded actions (typically after seeding through the client, before the step
    /// under test).
    pub fn clear_actions(&self) {
        self.shared.actions.lock().clear();
    }

    /// Lets `react` answer requests with `verb` (`get`, `list`, `watch`, `create`, `update`,
    /// `patch`, `delete`, `delete-collection`, or `*`) on `resource` (`whitelists`,
    /// `whitelists/status`, or `*`). Consulted before every reactor added earlier.
    ///
    /// `Some(Ok(value))` is sent with status 200 (201 for create) and `value` as the body;
    /// `Some(Err(status))` with `status.code` (500 if unset) and the `Status` body. For `watch`
    /// only errors make sense: a value is not an event stream.
    pub fn prepend_reactor(
        &self,
        verb: &str,
        resource: &str,
        react: impl Fn(&Action) -> Reaction + Send + Sync + 'static,
    ) {
        self.shared
            .reactors
            .lock()
            .insert(0, Reactor::new(verb, resource, react));
    }
}

/// The [`Transport`] behind [`FakeClient::client`].
struct FakeTransport {
    shared: Arc<Shared>,
}

impl Transport for FakeTransport {
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<Response<Body>>> + Send + '_>> {
        Box::pin(async move {
            if let Some(action) = Action::from_request(&request) {
                self.shared.actions.lock().push(action.clone());
                // Clone the list so a reactor may itself add reactors or read actions.
                let reactors = self.shared.reactors.lock().clone();
                if let Some(reaction) = reactors.iter().find_map(|r| r.react(&action)) {
                    return Ok(reaction_response(action.verb, reaction));
                }
            }
            Ok(self.shared.api.handle(request).await.map(Body::new))
        })
    }
}

/// The HTTP response a reactor's answer stands for.
fn reaction_response(
    verb: Verb,
    reaction: Result<serde_json::Value, Box<kube_core::Status>>,
) -> Response<Body> {
    let (status, body) = match reaction {
        Ok(value) => (
            if verb == Verb::Create {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            },
            value,
        ),
        Err(status) => {
            let code = StatusCode::from_u16(status.code)
                .ok()
                .filter(|c| c.as_u16() >= 400);
            (
                code.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                status_body(&status),
            )
        }
    };
    let mut response = Response::new(Body::from_bytes(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
