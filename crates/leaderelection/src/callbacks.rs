//! How the elector tells the application about leadership. Mirrors `LeaderCallbacks` in client-go
//! `tools/leaderelection/leaderelection.go`, with a [`Leadership`] token in place of the context
//! passed to `OnStartedLeading`.

use tokio::sync::watch;

/// Reactions to election events. Called from inside [`crate::LeaderElector::run`]; keep them short
/// and spawn real work (the elector cannot renew while a callback blocks).
pub trait LeaderCallbacks: Send + Sync {
    /// This candidate became leader. Start leader-only work here, and stop it when
    /// [`Leadership::lost`] resolves.
    fn started_leading(&self, leadership: Leadership);

    /// This candidate stopped leading (renewal failed past the deadline, or shutdown). Called once
    /// after every `started_leading`, after `leadership` has been marked lost.
    fn stopped_leading(&self) {}

    /// A different holder than last reported was observed (including ourselves). Empty identities
    /// (a released lock) are not reported.
    fn new_leader(&self, identity: &str) {
        let _ = identity;
    }
}

/// Held by the application while it leads; tells it when leadership is gone.
///
/// # Guarantees
/// Once lost, always lost: a later leadership term hands out a new token. If the elector is dropped
/// the token reports lost too, so leader work never outlives its election.
#[derive(Clone, Debug)]
pub struct Leadership {
    /// Becomes `true` when this term ends; a closed channel means the same.
    lost: watch::Receiver<bool>,
}

/// The elector's side of a [`Leadership`] token.
#[derive(Debug)]
pub(crate) struct LeadershipSender {
    lost: watch::Sender<bool>,
}

impl Leadership {
    /// A token for a new term and the sender that ends it.
    pub(crate) fn new_term() -> (Leadership, LeadershipSender) {
        let (tx, rx) = watch::channel(false);
        (Leadership { lost: rx }, LeadershipSender { lost: tx })
    }

    /// Whether this term has ended.
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow() || self.lost.has_changed().is_err()
    }

    /// Resolves when this term ends. Use it in `select!` next to the leader-only work.
    pub async fn lost(&self) {
        let mut lost = self.lost.clone();
        // An error means the sender is gone: the elector ended without saying so, which is a loss too.
        let _ = lost.wait_for(|lost| *lost).await;
    }
}

impl LeadershipSender {
    /// Ends the term; every clone of the token observes it.
    pub(crate) fn end(&self) {
        self.lost.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn token_reports_loss_after_end() {
        let (leadership, sender) = Leadership::new_term();
        let clone = leadership.clone();
        assert!(!leadership.is_lost());
        let waiter = tokio::spawn(async move { clone.lost().await });
        sender.end();
        assert!(waiter.await.is_ok());
        assert!(leadership.is_lost());
    }

    #[tokio::test]
    async fn dropped_sender_counts_as_loss() {
        let (leadership, sender) = Leadership::new_term();
        drop(sender);
        assert!(leadership.is_lost());
        leadership.lost().await;
    }
}
