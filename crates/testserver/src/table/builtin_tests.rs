use super::*;

fn now() -> jiff::Timestamp {
    "2024-01-01T12:00:00Z".parse().unwrap()
}

const CREATED: &str = "2024-01-01T11:55:00Z";

#[test]
fn deployment_cells_show_ready_of_desired_and_wide_columns() {
    let deployment = json!({
        "metadata": {"name": "web", "creationTimestamp": CREATED},
        "spec": {"replicas": 3,
                 "selector": {"matchLabels": {"app": "web"},
                              "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]},
                 "template": {"spec": {"containers": [{"name": "c1", "image": "nginx:1"}, {"name": "c2", "image": "busybox"}]}}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 1},
    });
    assert_eq!(
        Kind::Deployment.cells(&deployment, now()),
        vec![
            json!("web"),
            json!("2/3"),
            json!(3),
            json!(1),
            json!("5m"),
            json!("c1,c2"),
            json!("nginx:1,busybox"),
            json!("app=web,tier in (a,b)"),
        ]
    );
}

#[test]
fn missing_replicas_print_the_real_default_of_one() {
    let rs = json!({"metadata": {"name": "r"}});
    let cells = Kind::ReplicaSet.cells(&rs, now());
    assert_eq!(
        &cells[..5],
        &[json!("r"), json!(1), json!(0), json!(0), json!("<unknown>")]
    );
    assert_eq!(cells[7], json!("<none>"));
    let sts =
        json!({"metadata": {"name": "s"}, "spec": {"replicas": 2}, "status": {"readyReplicas": 1}});
    assert_eq!(Kind::StatefulSet.cells(&sts, now())[1], json!("1/2"));
}

#[test]
fn configmap_and_secret_count_their_data() {
    let cm = json!({"metadata": {"name": "c", "creationTimestamp": CREATED},
                    "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
    assert_eq!(
        Kind::ConfigMap.cells(&cm, now()),
        vec![json!("c"), json!(3), json!("5m")]
    );
    let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "MQ=="}});
    assert_eq!(
        Kind::Secret.cells(&secret, now()),
        vec![json!("s"), json!("Opaque"), json!(1), json!("<unknown>")]
    );
}

#[test]
fn pod_status_follows_the_container_states() {
    let pod = json!({
        "metadata": {"name": "p", "creationTimestamp": CREATED},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}],
            "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}},
                 "lastState": {"terminated": {"finishedAt": "2024-01-01T11:58:00Z"}}},
                {"name": "b", "ready": false, "restartCount": 0,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
    });
    assert_eq!(
        Kind::Pod.cells(&pod, now()),
        vec![
            json!("p"),
            json!("1/2"),
            json!("CrashLoopBackOff"),
            json!("2 (2m ago)"),
            json!("5m"),
            json!("10.0.0.1"),
            json!("n1"),
            json!("<none>"),
            json!("<none>"),
        ]
    );
}

#[test]
fn pending_init_and_terminating_pods() {
    let init = json!({
        "metadata": {"name": "p"},
        "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]},
        "status": {"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"running": {}}}]},
    });
    assert_eq!(Kind::Pod.cells(&init, now())[2], json!("Init:0/1"));
    let deleting = json!({
        "metadata": {"name": "p", "deletionTimestamp": CREATED},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Running"},
    });
    assert_eq!(Kind::Pod.cells(&deleting, now())[2], json!("Terminating"));
    // No status yet: the real server would have set the phase to Pending.
    let pending = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
    assert_eq!(
        &Kind::Pod.cells(&pending, now())[1..4],
        &[json!("0/1"), json!("Pending"), json!("0")]
    );
}

#[test]
fn service_cells_default_type_and_protocol() {
    let svc = json!({"metadata": {"name": "s"},
        "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 53, "protocol": "UDP"}, {"port": 80, "nodePort": 30080}],
                 "selector": {"k": "v"}}});
    assert_eq!(
        &Kind::Service.cells(&svc, now())[1..5],
        &[
            json!("ClusterIP"),
            json!("10.96.0.10"),
            json!("<none>"),
            json!("53/UDP,80:30080/TCP")
        ]
    );
    let lb = json!({"metadata": {"name": "l"}, "spec": {"type": "LoadBalancer"}});
    assert_eq!(Kind::Service.cells(&lb, now())[3], json!("<pending>"));
}

#[test]
fn event_cells_for_both_event_apis() {
    let core = json!({"metadata": {"name": "e.1"}, "type": "Normal", "reason": "Scaled",
        "involvedObject": {"kind": "Deployment", "name": "web"}, "message": " scaled up \n",
        "firstTimestamp": "2024-01-01T11:50:00Z", "lastTimestamp": CREATED, "count": 3,
        "source": {"component": "deployment-controller"}});
    assert_eq!(
        Kind::Event.cells(&core, now()),
        vec![
            json!("5m"),
            json!("Normal"),
            json!("Scaled"),
            json!("deployment/web"),
            json!(""),
            json!("deployment-controller"),
            json!("scaled up"),
            json!("10m"),
            json!(3),
            json!("e.1"),
        ]
    );
    let new_api = json!({"metadata": {"name": "e.2"}, "type": "Warning", "reason": "R",
        "regarding": {"kind": "Pod", "name": "p"}, "note": "n", "eventTime": "2024-01-01T11:59:00.000000Z",
        "reportingController": "ctl", "reportingInstance": "ctl-1"});
    let cells = Kind::EventsV1.cells(&new_api, now());
    assert_eq!(cells[0], json!("60s"));
    assert_eq!(cells[3], json!("pod/p"));
    assert_eq!(cells[5], json!("ctl, ctl-1"));
    assert_eq!(cells[8], json!(1));
}

#[test]
fn job_and_cronjob_cells() {
    let job = json!({"metadata": {"name": "j"}, "spec": {"completions": 2},
        "status": {"succeeded": 2, "startTime": "2024-01-01T11:00:00Z", "completionTime": "2024-01-01T11:01:30Z",
                   "conditions": [{"type": "Complete", "status": "True"}]}});
    assert_eq!(
        &Kind::Job.cells(&job, now())[1..4],
        &[json!("Complete"), json!("2/2"), json!("90s")]
    );
    let cron =
        json!({"metadata": {"name": "c"}, "spec": {"schedule": "*/5 * * * *", "suspend": false}});
    assert_eq!(
        &Kind::CronJob.cells(&cron, now())[1..6],
        &[
            json!("*/5 * * * *"),
            json!("<none>"),
            json!("False"),
            json!(0),
            json!("<none>")
        ]
    );
    let unset = json!({"metadata": {"name": "c"}, "spec": {"schedule": "@daily"}});
    assert_eq!(
        Kind::CronJob.cells(&unset, now())[3],
        json!("False"),
        "suspend defaults to false as on the real server"
    );
}

#[test]
fn node_namespace_and_lease_cells() {
    let node = json!({"metadata": {"name": "n", "labels": {"node-role.kubernetes.io/control-plane": ""}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "nodeInfo": {"kubeletVersion": "v1.34.1", "kernelVersion": "6.1", "architecture": "amd64"}}});
    let cells = Kind::Node.cells(&node, now());
    assert_eq!(
        &cells[1..3],
        &[json!("Ready,SchedulingDisabled"), json!("control-plane")]
    );
    assert_eq!(cells[4], json!("v1.34.1"));
    assert_eq!(cells[8], json!("6.1 (amd64)"));
    let ns = json!({"metadata": {"name": "default"}, "status": {"phase": "Active"}});
    assert_eq!(Kind::Namespace.cells(&ns, now())[1], json!("Active"));
    let lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}});
    assert_eq!(Kind::Lease.cells(&lease, now())[1], json!("me"));
}
