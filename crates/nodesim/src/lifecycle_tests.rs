use super::*;

const T0: &str = "2026-11-28T10:00:00Z";

fn at(seconds: i64) -> Timestamp {
    T0.parse::<Timestamp>().unwrap() + SignedDuration::from_secs(seconds)
}

fn pod(extra: Value) -> Pod {
    let mut pod = json!({
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "generation": 1},
        "spec": {"nodeName": "nodesim-0", "restartPolicy": "Always",
                 "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Pending", "qosClass": "BestEffort",
                   "conditions": [{"type": "PodScheduled", "status": "True",
                                   "lastTransitionTime": "2026-11-28T09:59:59Z"}]},
    });
    merge(&mut pod, extra);
    serde_json::from_value(pod).unwrap()
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        for (k, v) in from {
            match into.get_mut(&k) {
                Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                _ => {
                    into.insert(k, v);
                }
            }
        }
    }
}

/// `pod` after the status `step` wrote.
fn with_status(pod: &Pod, status: &Value) -> Pod {
    let mut value = serde_json::to_value(pod).unwrap();
    merge(&mut value["status"], status.clone());
    value["status"]["conditions"] = status["conditions"].clone();
    value["status"]["containerStatuses"] = status["containerStatuses"].clone();
    serde_json::from_value(value).unwrap()
}

fn run(pod: &Pod, options: &NodeSimOptions, now: i64) -> Step {
    let node = SimNode {
        name: "nodesim-0".into(),
        index: 0,
    };
    let context = Context {
        node: &node,
        pod_ip: "10.64.0.7".into(),
        now: at(now),
        options,
    };
    step(pod, &context)
}

fn status_of(step: Step) -> (Value, Option<Duration>) {
    match step {
        Step::Status(status, next) => (status, next),
        other => panic!("expected a status, got {other:?}"),
    }
}

fn condition<'a>(status: &'a Value, kind: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == kind)
        .unwrap()
}

#[test]
fn a_bound_pod_runs_and_is_ready_at_once_without_a_probe() {
    let (status, next) = status_of(run(&pod(json!({})), &NodeSimOptions::default(), 0));
    assert_eq!(next, None);
    assert_eq!(status["phase"], "Running");
    assert_eq!(
        (status["hostIP"].as_str(), status["podIP"].as_str()),
        (Some("172.18.0.2"), Some("10.64.0.7"))
    );
    assert_eq!(status["podIPs"], json!([{"ip": "10.64.0.7"}]));
    assert_eq!(status["hostIPs"], json!([{"ip": "172.18.0.2"}]));
    assert_eq!(status["startTime"], T0);
    assert_eq!(status["observedGeneration"], 1);
    let kinds: Vec<&str> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled"
        ]
    );
    for kind in &kinds {
        assert_eq!(condition(&status, kind)["status"], "True", "{kind}");
    }
    assert_eq!(
        condition(&status, "PodScheduled")["lastTransitionTime"],
        "2026-11-28T09:59:59Z"
    );
    let container = &status["containerStatuses"][0];
    assert_eq!(container["name"], "c");
    assert_eq!(container["ready"], true);
    assert_eq!(container["started"], true);
    assert_eq!(container["state"], json!({"running": {"startedAt": T0}}));
    assert_eq!(container["image"], "docker.io/library/nginx:latest");
    assert!(
        container["imageID"]
            .as_str()
            .unwrap()
            .starts_with("docker.io/library/nginx@sha256:")
    );
    assert!(
        container["containerID"]
            .as_str()
            .unwrap()
            .starts_with("containerd://")
    );
    assert_eq!(
        run(
            &with_status(&pod(json!({})), &status),
            &NodeSimOptions::default(),
            5
        ),
        Step::Nothing
    );
}

#[test]
fn readiness_waits_for_the_delay_and_the_probe() {
    let options = NodeSimOptions::default().ready_after(Duration::from_secs(3));
    let probed = pod(
        json!({"spec": {"containers": [{"name": "c", "image": "nginx",
        "readinessProbe": {"httpGet": {"port": 80}, "initialDelaySeconds": 5}}]}}),
    );
    let (status, next) = status_of(run(&probed, &options, 0));
    assert_eq!(next, Some(Duration::from_secs(5)));
    assert_eq!(status["containerStatuses"][0]["ready"], false);
    let ready = condition(&status, "Ready");
    assert_eq!(
        (ready["status"].as_str(), ready["reason"].as_str()),
        (Some("False"), Some("ContainersNotReady"))
    );
    assert_eq!(ready["message"], "containers with unready status: [c]");
    let running = with_status(&probed, &status);
    assert_eq!(
        run(&running, &options, 2),
        Step::Wait(Duration::from_secs(3))
    );
    let (ready_status, next) = status_of(run(&running, &options, 5));
    assert_eq!(next, None);
    assert_eq!(ready_status["containerStatuses"][0]["ready"], true);
    assert_eq!(condition(&ready_status, "Ready")["status"], "True");
    assert_eq!(ready_status["startTime"], T0, "the start time is kept");
    assert_eq!(ready_status["podIP"], "10.64.0.7");
}

#[test]
fn job_pods_succeed_with_completed_containers() {
    let job = pod(json!({"metadata": {"ownerReferences": [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j1", "controller": true}]},
        "spec": {"restartPolicy": "Never"}}));
    let (status, _) = status_of(run(&job, &NodeSimOptions::default(), 0));
    assert_eq!(status["phase"], "Succeeded");
    let terminated = &status["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (
            terminated["exitCode"].as_i64(),
            terminated["reason"].as_str()
        ),
        (Some(0), Some("Completed"))
    );
    assert_eq!(condition(&status, "Ready")["reason"], "PodCompleted");
    assert_eq!(
        condition(&status, "PodReadyToStartContainers")["status"],
        "False"
    );
    assert_eq!(
        run(&with_status(&job, &status), &NodeSimOptions::default(), 1),
        Step::Nothing
    );
}

#[test]
fn job_pods_run_for_the_job_duration_first() {
    let options = NodeSimOptions::default().job_duration(Duration::from_secs(4));
    let job = pod(json!({"metadata": {"ownerReferences": [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j1"}]},
        "spec": {"restartPolicy": "OnFailure"}}));
    let (status, next) = status_of(run(&job, &options, 0));
    assert_eq!(
        (status["phase"].as_str(), next),
        (Some("Running"), Some(Duration::from_secs(4)))
    );
    let running = with_status(&job, &status);
    assert_eq!(
        run(&running, &options, 1),
        Step::Wait(Duration::from_secs(3))
    );
    assert_eq!(
        status_of(run(&running, &options, 4)).0["phase"],
        "Succeeded"
    );
}

#[test]
fn pods_not_owned_by_a_job_or_restarting_always_keep_running() {
    let always = pod(json!({"metadata": {"ownerReferences": [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j1"}]}}));
    assert!(!runs_to_completion(&always));
    let bare = pod(json!({"spec": {"restartPolicy": "Never"}}));
    assert!(!runs_to_completion(&bare));
}

#[test]
fn a_deleting_pod_is_deleted_at_once() {
    let deleting = pod(json!({"metadata": {"deletionTimestamp": T0}}));
    assert_eq!(run(&deleting, &NodeSimOptions::default(), 0), Step::Delete);
}

#[test]
fn crashloop_restarts_with_a_growing_count_and_backoff() {
    let crashing = pod(json!({"metadata": {"labels": {FAILURE_LABEL: "crashloop"}}}));
    let options = NodeSimOptions::default();
    let (status, next) = status_of(run(&crashing, &options, 0));
    assert_eq!(next, Some(Duration::from_secs(10)));
    assert_eq!(status["phase"], "Running");
    let container = &status["containerStatuses"][0];
    assert_eq!(container["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(
        container["state"]["waiting"]["message"],
        "back-off 10s restarting failed container=c pod=p_ns(u1)"
    );
    assert_eq!(container["lastState"]["terminated"]["exitCode"], 1);
    assert_eq!(container["restartCount"], 0);
    let once = with_status(&crashing, &status);
    assert_eq!(run(&once, &options, 4), Step::Wait(Duration::from_secs(6)));
    let (again, next) = status_of(run(&once, &options, 10));
    assert_eq!(again["containerStatuses"][0]["restartCount"], 1);
    assert_eq!(next, Some(Duration::from_secs(20)));
    assert_eq!(condition(&again, "Ready")["status"], "False");
}

#[test]
fn crashing_pods_that_never_restart_fail() {
    let options = NodeSimOptions::default().failure(Some(Failure::CrashLoop));
    let never = pod(json!({"spec": {"restartPolicy": "Never"}}));
    let (status, _) = status_of(run(&never, &options, 0));
    assert_eq!(status["phase"], "Failed");
    assert_eq!(
        status["containerStatuses"][0]["state"]["terminated"]["reason"],
        "Error"
    );
}

#[test]
fn not_ready_pods_run_and_stay_unready() {
    let options = NodeSimOptions::default().failure(Some(Failure::NotReady));
    let (status, next) = status_of(run(&pod(json!({})), &options, 0));
    assert_eq!(
        (status["containerStatuses"][0]["ready"].as_bool(), next),
        (Some(false), None)
    );
    assert_eq!(
        run(&with_status(&pod(json!({})), &status), &options, 600),
        Step::Nothing
    );
}

#[test]
fn backoff_doubles_to_five_minutes() {
    let seconds: Vec<u64> = (0..7).map(|n| backoff(n).as_secs()).collect();
    assert_eq!(seconds, [10, 20, 40, 80, 160, 300, 300]);
    assert_eq!(backoff(64).as_secs(), 300);
}

#[test]
fn images_are_qualified_as_containerd_reports_them() {
    let container = |image: &str| Container {
        name: "c".into(),
        image: Some(image.into()),
        ..Container::default()
    };
    for (given, reported) in [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.27", "docker.io/library/nginx:1.27"),
        ("bitnami/redis", "docker.io/bitnami/redis:latest"),
        ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
    ] {
        assert_eq!(image(&container(given)), reported, "{given}");
    }
    assert!(image_id(&container("nginx:1.27")).starts_with("docker.io/library/nginx@sha256:"));
}

#[test]
fn init_containers_are_reported_completed() {
    let with_init = pod(json!({"spec": {"initContainers": [{"name": "i", "image": "busybox"}]}}));
    let (status, _) = status_of(run(&with_init, &NodeSimOptions::default(), 0));
    let init = &status["initContainerStatuses"][0];
    assert_eq!(init["state"]["terminated"]["reason"], "Completed");
    assert_eq!(init["ready"], true);
}
