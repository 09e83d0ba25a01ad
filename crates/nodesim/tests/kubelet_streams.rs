//! kubegen-client's logs, exec, attach and port-forward through the test server to the simulated
//! kubelet: the API server's `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`
//! proxied to the kubelet endpoint the simulated Node advertises.

#![allow(clippy::unwrap_used)]

use std::{future::Future, time::Duration};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, Error, ExecOptions, GetOptions, LogOptions,
    ResourceClient,
};
use kubegen_nodesim::{NodeSimOptions, NodeSimulator};
use kubegen_testserver::{Failure, RequestMatch};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Polls `check` until it returns `Some`, for at most 30 s.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..300 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Runs `scenario` against a test server with one simulated Node whose Pods answer HTTP on
/// port 8080.
async fn with_kubelet<F, Fut>(scenario: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = ()>,
{
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    let options = NodeSimOptions::default()
        .nodes(1)
        .job_duration(Duration::from_millis(1500))
        .http_port(8080, "hello from the pod");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let simulator = tokio::spawn(NodeSimulator::new(client.clone(), options).run(async {
        let _ = stopped.await;
    }));
    scenario(client).await;
    let _ = stop.send(());
    simulator.await.unwrap().unwrap();
}

fn pods(client: &Client) -> ResourceClient<Pod> {
    ResourceClient::namespaced(client.clone(), "default")
}

/// Creates the Pod `name` (containers `c` and, with `two`, `d`; `restartPolicy` as given) and
/// waits until it runs. A Pod with `restartPolicy: Never` is owned by a suspended Job of the same
/// name, so that it runs to completion (after the simulator's job duration) and nothing else
/// creates Pods for it.
async fn running_pod(client: &Client, name: &str, two: bool, restart_policy: &str) -> Pod {
    let mut owners = Vec::new();
    if restart_policy == "Never" {
        let job: Job = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}]}}},
        }))
        .unwrap();
        let jobs: ResourceClient<Job> = ResourceClient::namespaced(client.clone(), "default");
        let job = jobs.create(&job, &CreateOptions::default()).await.unwrap();
        owners.push(
            json!({"apiVersion": "batch/v1", "kind": "Job", "name": name,
                           "uid": job.metadata.uid}),
        );
    }
    let mut containers = vec![
        json!({"name": "c", "image": "busybox", "command": ["sleep", "3600"],
                                     "env": [{"name": "GREETING", "value": "hi"}]}),
    ];
    if two {
        containers.push(json!({"name": "d", "image": "nginx"}));
    }
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "ownerReferences": owners},
        "spec": {"containers": containers, "restartPolicy": restart_policy},
    }))
    .unwrap();
    pods(client)
        .create(&pod, &CreateOptions::default())
        .await
        .unwrap();
    eventually("the pod to run", || async {
        let pod = pods(client).get(name, &GetOptions::default()).await.ok()?;
        let phase = pod.status.as_ref()?.phase.as_deref()?;
        (phase == "Running").then_some(pod)
    })
    .await
}

fn container(name: &str) -> Option<String> {
    Some(name.to_owned())
}

const LOG: &str = "nodesim: container c of pod default/web started\n\
                   nodesim: image docker.io/library/busybox:latest\n\
                   nodesim: command [sleep 3600]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_are_read_whole_tailed_and_limited() {
    with_kubelet(|client| async move {
        running_pod(&client, "web", true, "Always").await;
        let whole = LogOptions {
            container: container("c"),
            ..LogOptions::default()
        };
        let log = client.pod_logs("default", "web", &whole).await.unwrap();
        assert_eq!(String::from_utf8(log).unwrap(), LOG);
        let tail = LogOptions {
            tail_lines: Some(1),
            ..whole.clone()
        };
        let log = client.pod_logs("default", "web", &tail).await.unwrap();
        assert_eq!(log, b"nodesim: command [sleep 3600]\n");
        let limited = LogOptions {
            limit_bytes: Some(10),
            ..whole.clone()
        };
        let log = client.pod_logs("default", "web", &limited).await.unwrap();
        assert_eq!(log, b"nodesim: c");
        let stamped = LogOptions {
            timestamps: true,
            tail_lines: Some(1),
            ..whole.clone()
        };
        let log = String::from_utf8(client.pod_logs("default", "web", &stamped).await.unwrap()).unwrap();
        let (stamp, line) = log.split_once(' ').unwrap();
        assert!(stamp.parse::<k8s_openapi::jiff::Timestamp>().is_ok(), "{log:?}");
        assert_eq!(line, "nodesim: command [sleep 3600]\n");

        // The API server's own checks, as v1.36 words them.
        let err = client
            .pod_logs("default", "web", &LogOptions::default())
            .await
            .unwrap_err();
        assert_api_error(&err, 400, "a container name must be specified for pod web, choose one of: [c d]");
        let err = client
            .pod_logs("default", "web", &LogOptions { container: container("zz"), ..LogOptions::default() })
            .await
            .unwrap_err();
        assert_api_error(&err, 400, "container zz is not valid for pod web");
        let err = client
            .pod_logs("default", "web", &LogOptions { tail_lines: Some(-1), ..whole })
            .await
            .unwrap_err();
        assert_api_error(
            &err,
            422,
            "PodLogOptions \"web\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0",
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_log_ends_when_the_container_finishes_or_the_pod_is_deleted() {
    with_kubelet(|client| async move {
        // A Job's Pod runs to completion: its container exits 0 after the job duration.
        running_pod(&client, "job", false, "Never").await;
        let follow = LogOptions {
            follow: true,
            ..LogOptions::default()
        };
        let mut stream = client
            .pod_log_stream("default", "job", &follow)
            .await
            .unwrap();
        let mut lines = Vec::new();
        while let Some(line) = stream.next_line().await {
            lines.push(line.unwrap());
        }
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[3], "nodesim: container c exited with code 0");

        running_pod(&client, "web", false, "Always").await;
        let mut stream = client
            .pod_log_stream("default", "web", &follow)
            .await
            .unwrap();
        for _ in 0..3 {
            stream.next_line().await.unwrap().unwrap();
        }
        pods(&client)
            .delete("web", &DeleteOptions::default())
            .await
            .unwrap();
        let end = tokio::time::timeout(Duration::from_secs(30), stream.next_line()).await;
        assert!(matches!(end, Ok(None)), "{end:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_runs_built_in_commands_with_stdin_stderr_and_exit_codes() {
    with_kubelet(|client| async move {
        running_pod(&client, "web", false, "Always").await;
        let opts = ExecOptions::default();
        let out = client.exec("default", "web", &["echo", "hello"], &opts).await.unwrap().output().await.unwrap();
        assert_eq!((out.status.code(), out.stdout.as_slice()), (0, b"hello\n".as_slice()));
        assert_eq!(client.exec("default", "web", &["printenv"], &opts).await.unwrap().output().await.unwrap().stdout,
                   b"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nHOSTNAME=web\nGREETING=hi\n");

        let script = ["sh", "-c", "echo out; echo oops >&2; exit 3"];
        let out = client.exec("default", "web", &script, &opts).await.unwrap().output().await.unwrap();
        assert_eq!(out.status.code(), 3);
        assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (b"out\n".as_slice(), b"oops\n".as_slice()));

        // stdin, closed by the client (v5's close signal): `cat` ends with it.
        let with_stdin = ExecOptions { stdin: true, ..ExecOptions::default() };
        let mut process = client.exec("default", "web", &["cat"], &with_stdin).await.unwrap();
        let mut stdin = process.take_stdin().unwrap();
        stdin.write_all(b"piped through\n").await.unwrap();
        stdin.shutdown().await.unwrap();
        drop(stdin);
        let out = process.output().await.unwrap();
        assert_eq!((out.status.code(), out.stdout.as_slice()), (0, b"piped through\n".as_slice()));

        // A command outside the built-in set does not start: the runtime's error, no host command.
        let err = client.exec("default", "web", &["rm", "-rf", "/"], &opts).await.unwrap().output().await.unwrap_err();
        let Error::RemoteCommandFailed { status, .. } = &err else { panic!("{err:?}") };
        assert_eq!(status.reason, "InternalError");
        assert!(status.message.contains("exec: \"rm\": executable file not found in $PATH"), "{}", status.message);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_echoes_stdin_until_it_closes() {
    with_kubelet(|client| async move {
        running_pod(&client, "web", false, "Always").await;
        let opts = ExecOptions {
            stdin: true,
            ..ExecOptions::default()
        };
        let mut process = client.attach("default", "web", &opts).await.unwrap();
        let mut stdin = process.take_stdin().unwrap();
        stdin.write_all(b"typed\n").await.unwrap();
        stdin.shutdown().await.unwrap();
        drop(stdin);
        let out = process.output().await.unwrap();
        assert_eq!(
            (out.status.code(), out.stdout.as_slice()),
            (0, b"typed\n".as_slice())
        );
    })
    .await;
}

/// The SPDY path of exec, attach and port-forward: the WebSocket attempt (a `GET`) is refused once by an
/// injected fault, so the client retries over SPDY (a `POST`), which the test server passes to
/// the simulated kubelet's SPDY endpoint unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_attach_and_port_forward_over_spdy_when_the_websocket_is_refused() {
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = NodeSimOptions::default().nodes(1);
    let simulator = tokio::spawn(NodeSimulator::new(client.clone(), options).run(async {
        let _ = stopped.await;
    }));
    running_pod(&client, "web", false, "Always").await;
    let refuse_websocket = |resource: &str| {
        let matcher = RequestMatch::any().verb("get").resource(resource);
        server
            .faults()
            .fail_next(1, matcher, Failure::InternalError);
    };

    refuse_websocket("pods/exec");
    let script = ["sh", "-c", "echo out; echo oops >&2; exit 3"];
    let process = client
        .exec("default", "web", &script, &ExecOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (process.over_spdy(), process.protocol()),
        (true, "v4.channel.k8s.io")
    );
    let out = process.output().await.unwrap();
    assert_eq!(out.status.code(), 3);
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice()),
        (b"out\n".as_slice(), b"oops\n".as_slice())
    );

    // stdin, half-closed with a FIN: `cat` ends with it.
    refuse_websocket("pods/exec");
    let with_stdin = ExecOptions {
        stdin: true,
        ..ExecOptions::default()
    };
    let mut process = client
        .exec("default", "web", &["cat"], &with_stdin)
        .await
        .unwrap();
    assert!(process.over_spdy());
    let mut stdin = process.take_stdin().unwrap();
    stdin.write_all(b"piped through\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let out = process.output().await.unwrap();
    assert_eq!(
        (out.status.code(), out.stdout.as_slice()),
        (0, b"piped through\n".as_slice())
    );

    // A command that cannot start: the InternalError status on the error stream.
    refuse_websocket("pods/exec");
    let process = client
        .exec(
            "default",
            "web",
            &["rm", "-rf", "/"],
            &ExecOptions::default(),
        )
        .await
        .unwrap();
    let err = process.output().await.unwrap_err();
    let Error::RemoteCommandFailed { status, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(status.reason, "InternalError");

    refuse_websocket("pods/attach");
    let mut process = client.attach("default", "web", &with_stdin).await.unwrap();
    assert!(process.over_spdy());
    let mut stdin = process.take_stdin().unwrap();
    stdin.write_all(b"typed\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let out = process.output().await.unwrap();
    assert_eq!(
        (out.status.code(), out.stdout.as_slice()),
        (0, b"typed\n".as_slice())
    );

    // Port-forward: the WebSocket refused, plain SPDY (`portforward.k8s.io`) carries the
    // connection, half-closed when the local side ends its writes.
    refuse_websocket("pods/portforward");
    let mut connection = client.port_forward("default", "web", 9000).await.unwrap();
    assert_eq!(connection.protocol(), "portforward.k8s.io");
    let mut stream = connection.take_stream().unwrap();
    stream.write_all(b"round trip").await.unwrap();
    stream.shutdown().await.unwrap();
    let mut back = Vec::new();
    stream.read_to_end(&mut back).await.unwrap();
    assert_eq!(back, b"round trip");
    drop(stream);
    connection.wait().await.unwrap();

    let _ = stop.send(());
    simulator.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_forward_reaches_the_pods_echo_and_http_responders() {
    with_kubelet(|client| async move {
        running_pod(&client, "web", false, "Always").await;
        let mut connection = client.port_forward("default", "web", 9000).await.unwrap();
        assert_eq!(connection.protocol(), "SPDY/3.1+portforward.k8s.io");
        let mut stream = connection.take_stream().unwrap();
        stream.write_all(b"round trip").await.unwrap();
        let mut back = [0; 10];
        stream.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"round trip");
        drop(stream);

        let mut connection = client.port_forward("default", "web", 8080).await.unwrap();
        let mut stream = connection.take_stream().unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: web\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0; 200];
        let mut read = 0;
        while !String::from_utf8_lossy(&answer[..read]).ends_with("hello from the pod") {
            let n = stream.read(&mut answer[read..]).await.unwrap();
            assert_ne!(n, 0, "{:?}", String::from_utf8_lossy(&answer[..read]));
            read += n;
        }
        assert!(answer.starts_with(b"HTTP/1.1 200 OK\r\n"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_without_a_node_has_an_empty_log_and_refuses_streams() {
    with_kubelet(|client| async move {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "pending"},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "busybox"}]},
        }))
        .unwrap();
        pods(&client)
            .create(&pod, &CreateOptions::default())
            .await
            .unwrap();
        let log = client
            .pod_logs("default", "pending", &LogOptions::default())
            .await
            .unwrap();
        assert!(log.is_empty());
        let err = client
            .exec("default", "pending", &["true"], &ExecOptions::default())
            .await
            .unwrap_err();
        assert_api_error(&err, 400, "pod pending does not have a host assigned");
        let err = client
            .port_forward("default", "pending", 80)
            .await
            .unwrap_err();
        assert_api_error(&err, 400, "pod pending does not have a host assigned");
        let err = client
            .pod_logs("default", "missing", &LogOptions::default())
            .await
            .unwrap_err();
        assert_api_error(&err, 404, "pods \"missing\" not found");
    })
    .await;
}

fn assert_api_error(err: &Error, code: u16, message: &str) {
    let Error::Api { status, .. } = err else {
        panic!("expected the server's {code}, got {err:?}");
    };
    assert_eq!(
        (status.code, status.message.as_str()),
        (code, message),
        "{status:?}"
    );
}

/// The same client calls through a real v1.36 kube-apiserver (`KUBEGEN_E2E_KUBECONFIG`) to the
/// simulated kubelet. The API server dials a Node by its `kubernetes.io/hostname` label first
/// (`--kubelet-preferred-address-types`' default), so the one Node is named `127.0.0.10` and
/// served there: reachable without DNS. Its `declaredFeatures` make v1.36 pass the WebSockets
/// through instead of translating them to SPDY.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real v1.36 API server: set KUBEGEN_E2E_KUBECONFIG"]
async fn logs_exec_and_attach_through_a_real_api_server_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    let node = "127.0.0.10";
    let options = NodeSimOptions::default()
        .nodes(1)
        .name_prefix("127.0.0.1")
        .kubelet_address(node.parse().unwrap())
        .scheduler(false);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let simulator = tokio::spawn(NodeSimulator::new(client.clone(), options).run(async {
        let _ = stopped.await;
    }));
    let nodes: ResourceClient<k8s_openapi::api::core::v1::Node> =
        ResourceClient::cluster(client.clone());
    eventually("the node to register", || async {
        nodes.get(node, &GetOptions::default()).await.ok()
    })
    .await;
    // What the node lifecycle controller would do once the Node is Ready (the reference
    // cluster runs without it): lift the not-ready taint TaintNodesByCondition added.
    let untaint = kubegen_client::Patch::Merge(json!({"spec": {"taints": []}}));
    nodes
        .patch(node, &untaint, &kubegen_client::PatchOptions::default())
        .await
        .unwrap();
    kubegen_e2e_support::in_scratch_namespace(&client, "kubelet-streams-", |client, ns| async move {
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(client.clone(), &ns);
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "talk"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]},
        }))
        .unwrap();
        pods.create(&pod, &CreateOptions::default()).await.unwrap();
        eventually("the pod to run", || async {
            let pod = pods.get("talk", &GetOptions::default()).await.ok()?;
            (pod.status?.phase.as_deref() == Some("Running")).then_some(())
        })
        .await;
        let log = client.pod_logs(&ns, "talk", &LogOptions::default()).await.unwrap();
        assert!(String::from_utf8(log).unwrap().starts_with(&format!("nodesim: container c of pod {ns}/talk started\n")));
        let script = ["sh", "-c", "echo out; echo oops >&2; exit 3"];
        let out = client.exec(&ns, "talk", &script, &ExecOptions::default()).await.unwrap().output().await.unwrap();
        assert_eq!((out.status.code(), out.stdout.as_slice(), out.stderr.as_slice()), (3, b"out\n".as_slice(), b"oops\n".as_slice()));
        let opts = ExecOptions { stdin: true, ..ExecOptions::default() };
        let mut process = client.attach(&ns, "talk", &opts).await.unwrap();
        let mut stdin = process.take_stdin().unwrap();
        stdin.write_all(b"typed\n").await.unwrap();
        stdin.shutdown().await.unwrap();
        drop(stdin);
        assert_eq!(process.output().await.unwrap().stdout, b"typed\n");
        pods.delete("talk", &DeleteOptions::default()).await.unwrap();
        eventually("the pod to be gone", || async {
            pods.get("talk", &GetOptions::default()).await.is_err().then_some(())
        })
        .await;
    })
    .await;
    let _ = stop.send(());
    simulator.await.unwrap().unwrap();
    let _ = nodes.delete(node, &DeleteOptions::default()).await;
}

/// A measurement, not a check: `echo` exec round trips (upgrade, output, exit status) of
/// kubegen's client against the server of `$KUBECONFIG`, to set beside kubectl's on the same
/// Pod (`docs/performance.md`). `KUBEGEN_EXEC_BENCH_POD=namespace/pod` names a running Pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored, see docs/performance.md"]
async fn exec_echo_round_trip_p50() {
    let target = std::env::var("KUBEGEN_EXEC_BENCH_POD").expect("KUBEGEN_EXEC_BENCH_POD=ns/pod");
    let (namespace, pod) = target.split_once('/').expect("namespace/pod");
    let load = kubegen_client::LoadOptions::default();
    let client = Client::new(kubegen_client::Config::load(&load).await.unwrap()).unwrap();
    let opts = ExecOptions::default();
    let mut times = Vec::new();
    for _ in 0..200 {
        let start = std::time::Instant::now();
        let process = client
            .exec(namespace, pod, &["echo", "hi"], &opts)
            .await
            .unwrap();
        let out = process.output().await.unwrap();
        assert_eq!(out.stdout, b"hi\n");
        times.push(start.elapsed());
    }
    times.sort();
    let at = |q: usize| times[(times.len() * q / 100).min(times.len() - 1)];
    println!(
        "kubegen-client exec echo: n={} p50={:?} p90={:?} p99={:?}",
        times.len(),
        at(50),
        at(90),
        at(99)
    );
}
