//! Leader election over real HTTP against kubegen-testserver. These run in wall-clock time (a socket
//! cannot be driven by tokio's paused clock), so timings are scaled down to a 5 s lease and the
//! assertions leave generous slack; the exact protocol timings are covered in virtual time by the
//! unit tests in `src/elector_tests.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kubegen_client::{Client, Config};
use kubegen_leaderelection::{
    LeaderCallbacks, LeaderElectionConfig, LeaderElector, Leadership, RunOutcome,
};
use kubegen_testserver::{Failure, RequestMatch, TestServer};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

/// Counts terms started and stopped.
#[derive(Clone, Default)]
struct Counter {
    started: Arc<AtomicUsize>,
    stopped: Arc<AtomicUsize>,
}

impl LeaderCallbacks for Counter {
    fn started_leading(&self, _leadership: Leadership) {
        self.started.fetch_add(1, Ordering::SeqCst);
    }
    fn stopped_leading(&self) {
        self.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

struct Candidate {
    elector: LeaderElector,
    counter: Counter,
    task: JoinHandle<kubegen_leaderelection::Result<RunOutcome>>,
    shutdown: Option<oneshot::Sender<()>>,
}

fn client(server: &TestServer) -> Client {
    let url = match server.url().parse() {
        Ok(url) => url,
        Err(error) => panic!("test server url: {error}"),
    };
    match Client::new(Config::new(url)) {
        Ok(client) => client,
        Err(error) => panic!("client: {error}"),
    }
}

/// 5 s lease, 3 s renew deadline, 250 ms retry.
fn fast_config(identity: &str, release_on_cancel: bool) -> LeaderElectionConfig {
    let mut config = LeaderElectionConfig::new("default", "election-test", identity);
    config.lease_duration = Duration::from_secs(5);
    config.renew_deadline = Duration::from_secs(3);
    config.retry_period = Duration::from_millis(250);
    config.release_on_cancel = release_on_cancel;
    config
}

fn start(server: &TestServer, config: LeaderElectionConfig) -> Candidate {
    let elector = match LeaderElector::new(client(server), config) {
        Ok(elector) => elector,
        Err(error) => panic!("config: {error}"),
    };
    let counter = Counter::default();
    let (tx, rx) = oneshot::channel::<()>();
    let (e, c) = (elector.clone(), counter.clone());
    let task = tokio::spawn(async move {
        e.run(c, async move {
            let _ = rx.await;
        })
        .await
    });
    Candidate {
        elector,
        counter,
        task,
        shutdown: Some(tx),
    }
}

async fn time_until(limit: Duration, condition: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() <= limit,
            "condition not met within {limit:?}"
        );
        sleep(Duration::from_millis(20)).await;
    }
    start.elapsed()
}

#[tokio::test]
async fn only_one_leads_and_the_other_takes_over_after_the_leader_dies() {
    let server = TestServer::start().await;
    let a = start(&server, fast_config("a", false));
    time_until(Duration::from_secs(3), || a.elector.is_leader()).await;
    let b = start(&server, fast_config("b", false));
    for _ in 0..10 {
        sleep(Duration::from_millis(200)).await;
        assert!(
            a.elector.is_leader() && !b.elector.is_leader(),
            "exactly one leader"
        );
    }
    a.task.abort();
    let took = time_until(Duration::from_secs(10), || b.elector.is_leader()).await;
    eprintln!("takeover after the leader died: {took:?} (lease 5 s)");
    // b waits a full lease from its last sighting of a's renewal (at most one retry old).
    assert!(
        took >= Duration::from_millis(4_500),
        "took over before the lease expired: {took:?}"
    );
    assert!(
        took <= Duration::from_millis(7_500),
        "took over too late: {took:?}"
    );
    assert_eq!(b.elector.leader().as_deref(), Some("b"));
    assert_eq!(b.counter.started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn released_lease_is_taken_over_immediately() {
    let server = TestServer::start().await;
    let mut a = start(&server, fast_config("a", true));
    time_until(Duration::from_secs(3), || a.elector.is_leader()).await;
    let b = start(&server, fast_config("b", false));
    sleep(Duration::from_secs(1)).await;
    if let Some(shutdown) = a.shutdown.take() {
        let _ = shutdown.send(());
    }
    let took = time_until(Duration::from_secs(10), || b.elector.is_leader()).await;
    eprintln!("takeover after release: {took:?}");
    assert!(
        took <= Duration::from_millis(2_000),
        "release should hand over within a retry or two, took {took:?}"
    );
    assert!(matches!(
        a.task.await,
        Ok(Ok(RunOutcome::ShutdownRequested))
    ));
    assert_eq!(a.counter.stopped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn leader_stops_when_lease_updates_fail_past_the_deadline() {
    let server = TestServer::start().await;
    let a = start(&server, fast_config("a", false));
    time_until(Duration::from_secs(3), || a.elector.is_leader()).await;
    server.faults().fail_next(
        usize::MAX,
        RequestMatch::any().verb("update").resource("leases"),
        Failure::InternalError,
    );
    let failing_since = Instant::now();
    sleep(Duration::from_millis(1_500)).await;
    assert!(
        a.elector.is_leader(),
        "gave up before the 3 s renew deadline"
    );
    let outcome = a.task.await;
    let lasted = failing_since.elapsed();
    eprintln!(
        "leadership lasted {lasted:?} after lease updates began failing (renew deadline 3 s)"
    );
    assert!(
        matches!(outcome, Ok(Ok(RunOutcome::LeadershipLost))),
        "{outcome:?}"
    );
    assert!(
        lasted <= Duration::from_millis(4_000),
        "kept leading for {lasted:?}"
    );
    assert!(!a.elector.is_leader());
    assert_eq!(a.counter.stopped.load(Ordering::SeqCst), 1);
}
