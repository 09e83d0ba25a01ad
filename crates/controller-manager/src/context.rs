//! What every controller is built from ([`Context`]) and what it hands back ([`Runner`]), below both
//! the controllers and the [`ControllerManager`](crate::ControllerManager) that starts them, so that
//! the manager imports the controllers and no controller imports the manager.

use std::{future::Future, pin::Pin};

use kubegen_cache::{ClientListWatchSource, InformerFactory};
use kubegen_client::Client;
use tokio::sync::watch;

use crate::options::ControllerManagerOptions;

/// A controller's work once its informers are registered: runs until the stop signal.
pub(crate) type Runner = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What every controller is built from.
pub(crate) struct Context {
    pub(crate) client: Client,
    /// The shared factory of typed informers (one watch per kind, whoever reads it).
    pub(crate) factory: InformerFactory<ClientListWatchSource>,
    pub(crate) options: ControllerManagerOptions,
    /// Turns true when the manager stops.
    pub(crate) stop: watch::Receiver<bool>,
}

/// Resolves once `stop` turns true (or its sender is gone).
pub(crate) async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}
