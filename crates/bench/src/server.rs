//! The server every benchmark talks to: an in-process kubegen-testserver, or an external URL.

use anyhow::Result;

/// A running server, or the address of one someone else runs.
pub enum Server {
    /// Started here; stops when dropped.
    InProcess(Box<kubegen_testserver::TestServer>),
    /// Given on the command line (`--url`).
    External(String),
}

impl Server {
    /// Starts an in-process test server (plain HTTP, 127.0.0.1, ephemeral port).
    pub async fn start() -> Result<Server> {
        Server::start_with(kubegen_testserver::ServerOptions::default()).await
    }

    /// Starts an in-process test server with `options` (e.g. `sharded_list_and_watch`).
    pub async fn start_with(options: kubegen_testserver::ServerOptions) -> Result<Server> {
        Ok(Server::InProcess(Box::new(
            kubegen_testserver::TestServer::start_with(options).await,
        )))
    }

    /// Base URL, `http://host:port`.
    pub fn url(&self) -> String {
        match self {
            Server::InProcess(server) => server.url(),
            Server::External(url) => url.clone(),
        }
    }
}
