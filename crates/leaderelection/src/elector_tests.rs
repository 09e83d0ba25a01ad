//! Election scenarios against the fake client (in-process API server, no socket), in virtual time:
//! every duration below is exact protocol time, not wall time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kubegen_client::{GetOptions, ResourceClient};
use kubegen_fake::FakeClient;
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

use super::*;
use crate::record::LeaderElectionRecord;

const NAMESPACE: &str = "kube-system";
const LOCK: &str = "image-police";

/// Records callback invocations in order and keeps the latest leadership token.
#[derive(Clone, Default)]
struct Recorder {
    events: Arc<Mutex<Vec<String>>>,
    leadership: Arc<Mutex<Option<Leadership>>>,
}

impl LeaderCallbacks for Recorder {
    fn started_leading(&self, leadership: Leadership) {
        self.events.lock().push("started".to_owned());
        *self.leadership.lock() = Some(leadership);
    }
    fn stopped_leading(&self) {
        self.events.lock().push("stopped".to_owned());
    }
    fn new_leader(&self, identity: &str) {
        self.events.lock().push(format!("leader {identity}"));
    }
}

impl Recorder {
    fn events(&self) -> Vec<String> {
        self.events.lock().clone()
    }
    fn token(&self) -> Option<Leadership> {
        self.leadership.lock().clone()
    }
}

/// A running candidate: its elector, callbacks, task and shutdown trigger.
struct Candidate {
    elector: LeaderElector,
    recorder: Recorder,
    task: JoinHandle<Result<RunOutcome>>,
    shutdown: Option<oneshot::Sender<()>>,
}

fn config(identity: &str) -> LeaderElectionConfig {
    LeaderElectionConfig::new(NAMESPACE, LOCK, identity)
}

fn start(fake: &FakeClient, config: LeaderElectionConfig) -> Candidate {
    let elector = match LeaderElector::new(fake.client(), config) {
        Ok(elector) => elector,
        Err(error) => panic!("valid config rejected: {error}"),
    };
    let recorder = Recorder::default();
    let (tx, rx) = oneshot::channel::<()>();
    let (task_elector, task_recorder) = (elector.clone(), recorder.clone());
    let task = tokio::spawn(async move {
        task_elector
            .run(task_recorder, async move {
                let _ = rx.await;
            })
            .await
    });
    Candidate {
        elector,
        recorder,
        task,
        shutdown: Some(tx),
    }
}

async fn lease(fake: &FakeClient) -> LeaderElectionRecord {
    let api = ResourceClient::<Lease>::namespaced(fake.client(), NAMESPACE);
    match api.get(LOCK, &GetOptions::default()).await {
        Ok(lease) => LeaderElectionRecord::from_spec(lease.spec.as_ref()),
        Err(error) => panic!("lease unreadable: {error}"),
    }
}

/// Sleeps in small steps until `condition` holds; returns the virtual time it took.
async fn time_until(limit: Duration, condition: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() <= limit,
            "condition not met within {limit:?}"
        );
        sleep(Duration::from_millis(100)).await;
    }
    start.elapsed()
}

async fn outcome(task: JoinHandle<Result<RunOutcome>>) -> RunOutcome {
    match task.await {
        Ok(Ok(outcome)) => outcome,
        other => panic!("run failed: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn first_candidate_creates_the_lease_and_leads() {
    let fake = FakeClient::new();
    let a = start(&fake, config("a"));
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    a.elector.check_invariants();
    let record = lease(&fake).await;
    assert_eq!(
        (
            record.holder_identity.as_str(),
            record.lease_duration_seconds,
            record.leader_transitions
        ),
        ("a", 15, 0)
    );
    assert_eq!(a.recorder.events(), ["leader a", "started"]);
    assert_eq!(a.elector.leader().as_deref(), Some("a"));
}

#[tokio::test(start_paused = true)]
async fn leader_renews_every_retry_period() {
    let fake = FakeClient::new();
    let a = start(&fake, config("a"));
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    let first = lease(&fake).await;
    fake.clear_actions();
    sleep(Duration::from_secs(10)).await;
    let renewals = fake
        .actions()
        .iter()
        .filter(|action| action.matches("update", "leases"))
        .count();
    assert_eq!(renewals, 5, "one optimistic update per 2 s retry period");
    let later = lease(&fake).await;
    assert_eq!(later.acquire_time, first.acquire_time);
    assert_eq!(later.leader_transitions, 0);
    a.elector.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn only_one_of_two_candidates_leads() {
    let fake = FakeClient::new();
    let a = start(&fake, config("a"));
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    let b = start(&fake, config("b"));
    for _ in 0..30 {
        sleep(Duration::from_secs(1)).await;
        assert!(a.elector.is_leader() && !b.elector.is_leader());
    }
    assert_eq!(b.recorder.events(), ["leader a"]);
    assert_eq!(b.elector.leader().as_deref(), Some("a"));
    b.elector.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn dropped_leader_is_replaced_within_the_lease_duration() {
    let fake = FakeClient::new();
    let a = start(&fake, config("a"));
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    let b = start(&fake, config("b"));
    sleep(Duration::from_secs(5)).await;
    let token = a.recorder.token();
    a.task.abort();
    let _ = a.task.await;
    assert!(!a.elector.is_leader(), "dropping run ends the term");
    assert!(token.is_some_and(|t| t.is_lost()));
    // b waits a full lease from the moment it first *saw* a's last record, as client-go does. a
    // renewed at most one retry period (2 s) before the abort, so that sighting lies between 2 s
    // before the abort and one jittered retry (up to 4.4 s) after that renewal, which can be after
    // the abort. b then notices expiry at its next poll, up to another 4.4 s later (+0.1 s for
    // `time_until`'s step).
    let took = time_until(Duration::from_secs(30), || b.elector.is_leader()).await;
    assert!(
        took >= Duration::from_secs(13),
        "took over too early: {took:?}"
    );
    assert!(
        took <= Duration::from_millis(15_000 + 4_400 + 4_400 + 100),
        "took over too late: {took:?}"
    );
    let record = lease(&fake).await;
    assert_eq!(
        (record.holder_identity.as_str(), record.leader_transitions),
        ("b", 1)
    );
    assert_eq!(b.recorder.events(), ["leader a", "leader b", "started"]);
    a.elector.check_invariants();
    b.elector.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn release_on_cancel_lets_the_next_candidate_take_over_at_once() {
    let fake = FakeClient::new();
    let mut released = config("a");
    released.release_on_cancel = true;
    let mut a = start(&fake, released);
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    let b = start(&fake, config("b"));
    sleep(Duration::from_secs(5)).await;
    if let Some(shutdown) = a.shutdown.take() {
        let _ = shutdown.send(());
    }
    assert_eq!(outcome(a.task).await, RunOutcome::ShutdownRequested);
    assert_eq!(a.recorder.events(), ["leader a", "started", "stopped"]);
    let record = lease(&fake).await;
    assert_eq!(
        (
            record.holder_identity.as_str(),
            record.lease_duration_seconds
        ),
        ("", 1)
    );
    let took = time_until(Duration::from_secs(15), || b.elector.is_leader()).await;
    a.elector.check_invariants();
    b.elector.check_invariants();
    assert!(
        took <= Duration::from_millis(4_500),
        "a released lease is taken within one retry: {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn release_after_a_renewal_whose_answer_was_lost_still_releases() {
    let fake = FakeClient::new();
    let mut released = config("a");
    released.release_on_cancel = true;
    let mut a = start(&fake, released);
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    // The server applies a renewal whose answer never reaches the elector (a shutdown dropped the
    // request in flight): the Lease moves one version past the elector's copy, still held by "a".
    let leases = ResourceClient::<Lease>::namespaced(fake.client(), NAMESPACE);
    let mut current = leases
        .get(LOCK, &GetOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    current
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("renewed".into(), "unseen".into());
    leases
        .update(&current, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    current = leases
        .get(LOCK, &GetOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        current.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("a")
    );
    if let Some(shutdown) = a.shutdown.take() {
        let _ = shutdown.send(());
    }
    assert_eq!(outcome(a.task).await, RunOutcome::ShutdownRequested);
    assert_eq!(lease(&fake).await.holder_identity, "");
    a.elector.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn leader_stops_when_renewal_fails_past_the_renew_deadline() {
    let fake = FakeClient::new();
    let failing = Arc::new(AtomicBool::new(false));
    let switch = Arc::clone(&failing);
    fake.prepend_reactor("update", "leases", move |action| {
        switch
            .load(Ordering::SeqCst)
            .then(|| Err(kubegen_fake::internal_error(action, "injected")))
    });
    let a = start(&fake, config("a"));
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    sleep(Duration::from_millis(500)).await;
    failing.store(true, Ordering::SeqCst);
    let failing_since = Instant::now();
    // The last success started at most one retry period (2 s) before failures began, so leadership
    // lasts at least 10 - 2 = 8 s more, and ends no later than 10 s after failures began.
    sleep(Duration::from_secs(7)).await;
    assert!(a.elector.is_leader(), "gave up before the renew deadline");
    assert_eq!(outcome(a.task).await, RunOutcome::LeadershipLost);
    let lasted = failing_since.elapsed();
    assert!(
        lasted <= Duration::from_secs(10),
        "kept leading past the deadline: {lasted:?}"
    );
    assert_eq!(a.recorder.events(), ["leader a", "started", "stopped"]);
    assert!(a.recorder.token().is_some_and(|t| t.is_lost()));
    assert!(!a.elector.is_leader());
}

#[tokio::test(start_paused = true)]
async fn leader_that_finds_another_holder_stops_at_once() {
    let fake = FakeClient::new();
    let a = start(&fake, config("a"));
    time_until(Duration::from_secs(1), || a.elector.is_leader()).await;
    // Someone overwrites the lease (e.g. an operator or a misconfigured replica).
    let api = ResourceClient::<Lease>::namespaced(fake.client(), NAMESPACE);
    let mut stolen = match api.get(LOCK, &GetOptions::default()).await {
        Ok(lease) => lease,
        Err(error) => panic!("{error}"),
    };
    if let Some(spec) = stolen.spec.as_mut() {
        spec.holder_identity = Some("intruder".to_owned());
    }
    if let Err(error) = api
        .update(&stolen, &kubegen_client::UpdateOptions::default())
        .await
    {
        panic!("{error}");
    }
    let stolen_at = Instant::now();
    // The next renewal conflicts, re-reads, sees the intruder: no waiting for the renew deadline.
    assert_eq!(outcome(a.task).await, RunOutcome::LeadershipLost);
    assert!(
        stolen_at.elapsed() <= Duration::from_secs(2),
        "stopped after {:?}",
        stolen_at.elapsed()
    );
    assert_eq!(
        a.recorder.events(),
        ["leader a", "started", "leader intruder", "stopped"]
    );
    assert_eq!(
        lease(&fake).await.holder_identity,
        "intruder",
        "the loser never overwrites"
    );
}

#[tokio::test(start_paused = true)]
async fn a_second_run_of_the_same_elector_is_rejected() {
    let fake = FakeClient::new();
    let a = start(&fake, config("a"));
    sleep(Duration::from_millis(100)).await;
    let second = a.elector.run(Recorder::default(), async {}).await;
    assert!(matches!(second, Err(Error::AlreadyRunning)));
}

#[tokio::test(start_paused = true)]
async fn health_check_flags_a_leader_that_stopped_renewing() {
    let fake = FakeClient::new();
    let elector = match LeaderElector::new(fake.client(), config("a")) {
        Ok(elector) => elector,
        Err(error) => panic!("{error}"),
    };
    assert!(
        elector.check_health(Duration::ZERO).is_ok(),
        "a follower is healthy"
    );
    {
        let mut state = elector.shared.state.lock();
        state.running = true;
        state.leading = true;
        state.last_renewal = Some(Instant::now());
    }
    sleep(Duration::from_secs(20)).await;
    assert!(
        elector.check_health(Duration::from_secs(5)).is_ok(),
        "15 s lease + 5 s tolerance not yet exceeded"
    );
    sleep(Duration::from_secs(1)).await;
    assert!(matches!(
        elector.check_health(Duration::from_secs(5)),
        Err(Error::RenewalOverdue { .. })
    ));
}

#[test]
fn invalid_config_is_rejected_by_new() {
    let fake = FakeClient::new();
    let result = LeaderElector::new(fake.client(), LeaderElectionConfig::default());
    assert!(matches!(result, Err(Error::InvalidConfig { .. })));
}
