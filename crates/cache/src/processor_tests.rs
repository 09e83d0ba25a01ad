use std::sync::Mutex as StdMutex;

use k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::test_util::{cm, rv};

/// Records every call as a short string.
#[derive(Default)]
struct Recorder(StdMutex<Vec<String>>);

impl Recorder {
    fn calls(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl EventHandler<ConfigMap> for Recorder {
    fn on_add(&self, obj: &Arc<ConfigMap>, initial: bool) {
        self.0
            .lock()
            .unwrap()
            .push(format!("add {} {initial}", rv(obj)));
    }
    fn on_update(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.0.lock().unwrap().push(format!("update {}", rv(new)));
    }
    fn on_resync(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.0.lock().unwrap().push(format!("resync {}", rv(new)));
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("delete {}", rv(obj.object())));
    }
}

/// Blocks in every call until the test drops the sender (a stuck handler).
struct Stuck(StdMutex<std::sync::mpsc::Receiver<()>>);

impl EventHandler<ConfigMap> for Stuck {
    fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
        let _ = self.0.lock().unwrap().recv();
    }
}

struct Panicky;

impl EventHandler<ConfigMap> for Panicky {
    fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
        assert_ne!(rv(obj), "1", "handler bug");
    }
}

fn add(rv: &str) -> Notification<ConfigMap> {
    Notification::Add {
        obj: Arc::new(cm("ns", "x", rv)).into(),
        is_in_initial_list: false,
    }
}

fn update(rv: &str) -> Notification<ConfigMap> {
    let o = Arc::new(cm("ns", "x", rv));
    Notification::Update {
        old: Arc::clone(&o).into(),
        new: o.into(),
        is_resync: true,
    }
}

/// Lets spawned listener tasks run until they are idle (virtual time only advances when idle).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

#[tokio::test(start_paused = true)]
async fn notifications_buffer_until_start_then_arrive_in_order() {
    let p = Processor::new(Duration::ZERO, Arc::default(), Arc::default());
    let rec = Arc::new(Recorder::default());
    let (_, progress) = p.add(rec.clone(), Duration::ZERO, vec![]);
    p.distribute(add("1"), false);
    p.distribute(
        Notification::Delete(DeletedObject::Known(Arc::new(cm("ns", "x", "2")))),
        false,
    );
    settle().await;
    assert!(rec.calls().is_empty(), "no task before start");
    p.start();
    settle().await;
    assert_eq!(rec.calls(), ["add 1 false", "delete 2"]);
    assert_eq!(progress.processed.load(Ordering::Acquire), 2);
    p.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn late_listener_first_gets_initial_adds() {
    let p = Processor::new(Duration::ZERO, Arc::default(), Arc::default());
    p.start();
    let rec = Arc::new(Recorder::default());
    let cached = vec![Arc::new(cm("ns", "a", "1")), Arc::new(cm("ns", "b", "2"))];
    p.add(rec.clone(), Duration::ZERO, cached);
    p.distribute(add("3"), false);
    settle().await;
    assert_eq!(rec.calls(), ["add 1 true", "add 2 true", "add 3 false"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_handler_does_not_block_others() {
    let p = Processor::new(Duration::ZERO, Arc::default(), Arc::default());
    p.start();
    let (release, gate) = std::sync::mpsc::channel();
    p.add(Arc::new(Stuck(StdMutex::new(gate))), Duration::ZERO, vec![]);
    let rec = Arc::new(Recorder::default());
    p.add(rec.clone(), Duration::ZERO, vec![]);
    for i in 0..100 {
        p.distribute(add(&i.to_string()), false); // never blocks, whatever the handlers do
    }
    let all_delivered = async {
        while rec.calls().len() < 100 {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), all_delivered)
        .await
        .expect("fast handler starved");
    drop(release);
}

#[tokio::test(start_paused = true)]
async fn panicking_handler_is_isolated_and_keeps_running() {
    let p = Processor::new(Duration::ZERO, Arc::default(), Arc::default());
    p.start();
    let (_, panicky) = p.add(Arc::new(Panicky), Duration::ZERO, vec![]);
    let rec = Arc::new(Recorder::default());
    p.add(rec.clone(), Duration::ZERO, vec![]);
    p.distribute(add("1"), false);
    p.distribute(add("2"), false);
    settle().await;
    assert_eq!(rec.calls(), ["add 1 false", "add 2 false"]);
    assert_eq!(
        panicky.processed.load(Ordering::Acquire),
        2,
        "survived its panic"
    );
}

#[tokio::test(start_paused = true)]
async fn removed_listener_gets_nothing_more() {
    let p = Processor::new(Duration::ZERO, Arc::default(), Arc::default());
    p.start();
    let rec = Arc::new(Recorder::default());
    let (id, _) = p.add(rec.clone(), Duration::ZERO, vec![]);
    p.distribute(add("1"), false);
    settle().await;
    assert!(p.remove(id));
    p.distribute(add("2"), false);
    settle().await;
    assert_eq!(rec.calls(), ["add 1 false"]);
    assert!(!p.remove(id));
}

#[tokio::test(start_paused = true)]
async fn resync_goes_only_to_listeners_that_are_due() {
    let p = Processor::new(Duration::from_secs(10), Arc::default(), Arc::default());
    let fast = Arc::new(Recorder::default());
    let slow = Arc::new(Recorder::default());
    let never = Arc::new(Recorder::default());
    p.add(fast.clone(), Duration::from_secs(10), vec![]);
    p.add(slow.clone(), Duration::from_secs(30), vec![]);
    p.add(never.clone(), Duration::ZERO, vec![]);
    p.start();
    let t0 = Instant::now();
    assert!(!p.should_resync(t0));
    assert!(p.should_resync(t0 + Duration::from_secs(10)));
    p.distribute(update("a"), true);
    assert!(p.should_resync(t0 + Duration::from_secs(30)));
    p.distribute(update("b"), true);
    p.distribute(add("c"), false); // real news goes to everyone
    settle().await;
    assert_eq!(fast.calls(), ["resync a", "resync b", "add c false"]);
    assert_eq!(slow.calls(), ["resync b", "add c false"]);
    assert_eq!(never.calls(), ["add c false"]);
}

#[tokio::test(start_paused = true)]
async fn resync_periods_follow_client_go_rules() {
    // Before start, a handler asking for less than the check period lowers the check period.
    let p: Processor<ConfigMap> =
        Processor::new(Duration::from_secs(60), Arc::default(), Arc::default());
    p.add(
        Arc::new(Recorder::default()),
        Duration::from_secs(120),
        vec![],
    );
    p.add(
        Arc::new(Recorder::default()),
        Duration::from_millis(10),
        vec![],
    ); // floored to 1 s
    assert_eq!(p.resync_check_period(), MINIMUM_RESYNC_PERIOD);
    assert_eq!(
        p.resync_periods(),
        [Duration::from_secs(120), MINIMUM_RESYNC_PERIOD]
    );
    p.check_invariants();

    // After start, the check period is fixed: the handler is raised to it instead.
    let p: Processor<ConfigMap> =
        Processor::new(Duration::from_secs(60), Arc::default(), Arc::default());
    p.state.lock().started = true;
    p.add(
        Arc::new(Recorder::default()),
        Duration::from_secs(5),
        vec![],
    );
    assert_eq!(p.resync_periods(), [Duration::from_secs(60)]);

    // An informer without resync cannot resync its handlers.
    let p: Processor<ConfigMap> = Processor::new(Duration::ZERO, Arc::default(), Arc::default());
    p.add(
        Arc::new(Recorder::default()),
        Duration::from_secs(5),
        vec![],
    );
    assert_eq!(p.resync_periods(), [Duration::ZERO]);
}
