//! The shutdown signal of an operator process: SIGTERM (kubelet stopping the pod) or SIGINT
//! (Ctrl-C), whichever comes first. Hand it to [`crate::Manager::run`], which then drains.

/// Resolves on SIGTERM or SIGINT, logging which. On platforms without SIGTERM, Ctrl-C only.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM; only Ctrl-C stops the process");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT received; shutting down"),
        () = term => tracing::info!("SIGTERM received; shutting down"),
    }
}
