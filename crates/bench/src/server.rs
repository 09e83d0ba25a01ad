//! The server every benchmark talks to: an in-process kubegen-testserver, or an external URL.

use anyhow::{Result, bail};

/// A running server, or the address of one someone else runs.
pub enum Server {
    /// Given on the command line (`--url`).
    External(String),
}

impl Server {
    /// Starts an in-process test server on an ephemeral port.
    pub async fn start() -> Result<Server> {
        bail!("in-process test server not wired yet: pass --url")
    }

    /// Base URL, `http://host:port`.
    pub fn url(&self) -> String {
        match self {
            Server::External(url) => url.clone(),
        }
    }
}
