//! Request authentication: where the bearer token of each request comes from.
//!
//! Mirrors client-go `transport/token_source.go` (cached, periodically re-read token files) and the
//! bearer half of `transport/round_trippers.go`. Client certificates are TLS, see `tls.rs`.
//!
//! # Guarantees
//! - Tokens never appear in `Debug` output or logs: they live in [`SecretToken`]
//!   (`secret_token.rs`).
//! - A token file is re-read at most every `period` (bound service-account tokens rotate about
//!   hourly; the kubelet rewrites the file). If a re-read fails, the last good token is kept.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::config::exec::ExecAuth;
use crate::error::{Error, Result};
use crate::secret_token::SecretToken;

/// How requests are authenticated (besides a TLS client certificate).
#[derive(Clone, Debug, Default)]
pub(crate) enum Auth {
    /// No `Authorization` header.
    #[default]
    None,
    /// A fixed token from the kubeconfig.
    Token(SecretToken),
    /// A token file, re-read periodically (kubeconfig `tokenFile`, in-cluster service account).
    TokenFile(Arc<TokenFile>),
    /// An exec credential plugin.
    Exec(Arc<ExecAuth>),
}

impl Auth {
    /// The `Authorization` header for the next request, if any.
    pub(crate) async fn header(&self) -> Result<Option<HeaderValue>> {
        let token = match self {
            Auth::None => return Ok(None),
            Auth::Token(token) => token.clone(),
            Auth::TokenFile(file) => file.token()?,
            // A certificate-only plugin authenticates through TLS (see `tls::ExecClientCert`).
            Auth::Exec(exec) => match exec.token().await? {
                Some(token) => token,
                None => return Ok(None),
            },
        };
        token.header().map(Some)
    }

    /// The server answered 401: forget cached credentials so the next request fetches fresh ones.
    pub(crate) fn invalidate(&self) {
        match self {
            Auth::TokenFile(file) => file.invalidate(),
            Auth::Exec(exec) => exec.invalidate(),
            Auth::None | Auth::Token(_) => {}
        }
    }
}

/// A token read from a file and re-read every `period`.
#[derive(Debug)]
pub(crate) struct TokenFile {
    path: PathBuf,
    period: Duration,
    /// The last token read and when. Invariant: `Some` once a read succeeded.
    cached: Mutex<Option<(SecretToken, Instant)>>,
    /// Set by a 401: the next `token()` re-reads the file whatever its age.
    stale: std::sync::atomic::AtomicBool,
}

impl TokenFile {
    /// A token file re-read every `period`. The file is first read on the first request.
    pub(crate) fn new(path: PathBuf, period: Duration) -> TokenFile {
        TokenFile {
            path,
            period,
            cached: Mutex::new(None),
            stale: Default::default(),
        }
    }

    /// The current token: cached if read less than `period` ago, else read now.
    ///
    /// # Errors
    /// [`Error::TokenFile`] if the file cannot be read (or is empty) and no earlier token exists.
    pub(crate) fn token(&self) -> Result<SecretToken> {
        let now = Instant::now();
        let mut cached = self.cached.lock();
        let stale = self.stale.swap(false, std::sync::atomic::Ordering::Relaxed);
        if let Some((token, read_at)) = cached.as_ref()
            && !stale
            && now.saturating_duration_since(*read_at) < self.period
        {
            return Ok(token.clone());
        }
        match self.read() {
            Ok(token) => {
                *cached = Some((token.clone(), now));
                Ok(token)
            }
            Err(e) => match cached.as_mut() {
                Some((token, read_at)) => {
                    tracing::warn!(error = %e, "keeping the previous token");
                    *read_at = now;
                    Ok(token.clone())
                }
                None => Err(e),
            },
        }
    }

    fn read(&self) -> Result<SecretToken> {
        let text = std::fs::read_to_string(&self.path).map_err(|e| Error::TokenFile {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(Error::TokenFile {
                path: self.path.clone(),
                message: "file is empty".into(),
            });
        }
        Ok(SecretToken::new(token))
    }

    /// Makes the next `token()` re-read the file.
    fn invalidate(&self) {
        self.stale.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_token_debug_is_redacted() {
        let auth = Auth::Token(SecretToken::new("s3cr3t"));
        assert!(!format!("{auth:?}").contains("s3cr3t"));
        let header = SecretToken::new("s3cr3t").header().expect("valid header");
        assert!(header.is_sensitive());
        assert!(!format!("{header:?}").contains("s3cr3t"));
    }

    #[tokio::test(start_paused = true)]
    async fn token_file_is_reread_after_the_period() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::InCluster(e.to_string()))?;
        let path = dir.path().join("token");
        let write = |t: &str| std::fs::write(&path, t).map_err(|e| Error::InCluster(e.to_string()));
        write("one\n")?;
        let file = TokenFile::new(path.clone(), Duration::from_secs(60));
        assert_eq!(file.token()?.expose(), "one");
        write("two")?;
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(file.token()?.expose(), "one", "cached within the period");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(file.token()?.expose(), "two", "re-read after the period");
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn token_file_keeps_last_token_when_file_vanishes() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::InCluster(e.to_string()))?;
        let path = dir.path().join("token");
        std::fs::write(&path, "one").map_err(|e| Error::InCluster(e.to_string()))?;
        let file = TokenFile::new(path.clone(), Duration::from_secs(1));
        assert_eq!(file.token()?.expose(), "one");
        std::fs::remove_file(&path).map_err(|e| Error::InCluster(e.to_string()))?;
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(file.token()?.expose(), "one");
        Ok(())
    }

    #[test]
    fn missing_token_file_names_the_path() {
        let file = TokenFile::new(PathBuf::from("/nonexistent/token"), Duration::from_secs(1));
        let err = file.token().expect_err("missing file");
        assert!(
            err.to_string()
                .starts_with("token file /nonexistent/token:"),
            "{err}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn invalidate_forces_a_reread() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::InCluster(e.to_string()))?;
        let path = dir.path().join("token");
        std::fs::write(&path, "one").map_err(|e| Error::InCluster(e.to_string()))?;
        let auth = Auth::TokenFile(Arc::new(TokenFile::new(
            path.clone(),
            Duration::from_secs(600),
        )));
        auth.header().await?;
        std::fs::write(&path, "two").map_err(|e| Error::InCluster(e.to_string()))?;
        auth.invalidate();
        let header = auth.header().await?.expect("a header");
        assert_eq!(header.to_str().ok(), Some("Bearer two"));
        Ok(())
    }
}
