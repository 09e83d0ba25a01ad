//! [`InProcess`]: the transport of the embedded controller-manager and node simulator. Their
//! requests reach [`ApiServer::handle`] as calls instead of through the loopback socket.
//!
//! # Why
//! Every Pod is created, bound and given its status by these components, and every change goes
//! out to their informers' watches. Over the socket, each request and each watch frame went
//! through hyper's HTTP/1 on both ends and the kernel's loopback. In-process, 1,000 simulated
//! Nodes and 30,000 Pods are Ready in half the time with under half the CPU, more than HTTP's
//! own share of the profile: the controllers' work changes with how their events arrive
//! (`docs/performance.md`, "The embedded components in-process").
//!
//! # What stays the same
//! Each request still goes through the whole pipeline: authentication with the administrator's
//! token, authorization, admission, the audit log, fault injection and the same encodings. Its
//! bytes are what the client would have sent, and the answer's bytes are what it would have read.
//! [`kubegen_client::Body`] streams a watch's chunks as the server writes them.
//!
//! # What differs from a socket
//! - No connection: [`TestServer`](crate::TestServer)'s stop cannot cut these clients' watches by
//!   closing connections. The components stop on the same shutdown signal.
//! - The audit log's `sourceIPs` say `127.0.0.1`, as a client on the loopback interface would.
//! - No upgrades (exec, attach, port-forward): the components never make them, and
//!   [`Transport::upgrade`]'s default refuses.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;

use bytes::Bytes;
use http::{HeaderValue, Request, Response};
use kubegen_client::{Body, Transport};

use crate::apiserver::ApiServer;
use crate::audit::PeerAddr;

/// Calls an [`ApiServer`] in this process as the holder of `authorization`.
pub(crate) struct InProcess {
    api: ApiServer,
    /// The `Authorization` header of every request: the administrator's bearer token when the
    /// server authenticates, none when it does not.
    authorization: Option<HeaderValue>,
}

impl InProcess {
    pub(crate) fn new(api: ApiServer, token: Option<&str>) -> InProcess {
        // A token the server generated is base64url text, always a valid header value.
        let authorization = token.and_then(|t| HeaderValue::try_from(format!("Bearer {t}")).ok());
        InProcess { api, authorization }
    }
}

impl Transport for InProcess {
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<Response<Body>>> + Send + '_>> {
        let (mut parts, body) = request.into_parts();
        if let Some(authorization) = &self.authorization {
            parts
                .headers
                .insert(http::header::AUTHORIZATION, authorization.clone());
        }
        parts
            .extensions
            .insert(PeerAddr(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))));
        let request = Request::from_parts(parts, body);
        Box::pin(async move { Ok(self.api.handle(request).await.map(Body::new)) })
    }
}
