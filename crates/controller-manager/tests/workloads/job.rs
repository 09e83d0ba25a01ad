//! Jobs as `kubectl create job` and manifests drive them: a NonIndexed Job of two parallel Pods,
//! an Indexed Job of three completions two at a time, a Job whose Pods fail past its
//! `backoffLimit` (after the 10 s back-off), Jobs whose `podFailurePolicy` fails them at the
//! first failure or ignores it, an Indexed Job whose `successPolicy` completes it early, and
//! Indexed Jobs whose indexes fail one by one (`backoffLimitPerIndex`, `maxFailedIndexes`).
//! Final statuses, conditions, Pods and Events are what the real job-controller produces with
//! the same simulated Nodes.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kubegen_client::{Client, CreateOptions, GetOptions, ListOptions, ResourceClient};
use serde_json::{Value, json};

use crate::{Sim, events, eventually, eventually_equal, scenarios};

scenarios! {
    completing_jobs => non_indexed_and_indexed_jobs_complete_as_with_the_real_controller,
        non_indexed_and_indexed_jobs_complete_on_cluster;
    failing_job => a_job_failing_past_its_backoff_limit_fails_as_with_the_real_controller,
        a_job_failing_past_its_backoff_limit_fails_on_cluster;
    suspended_job => a_suspended_job_loses_its_pods_and_a_deleted_one_releases_them,
        a_suspended_job_loses_its_pods_and_a_deleted_one_releases_them_on_cluster;
    policy_jobs => a_pod_failure_policy_fails_a_job_at_once_or_ignores_its_failure,
        a_pod_failure_policy_fails_a_job_at_once_or_ignores_its_failure_on_cluster;
    early_success => a_success_policy_completes_an_indexed_job_early,
        a_success_policy_completes_an_indexed_job_early_on_cluster;
    per_index_jobs => indexes_fail_one_by_one_with_a_backoff_limit_per_index,
        indexes_fail_one_by_one_with_a_backoff_limit_per_index_on_cluster;
}

fn job(sim: &Sim, name: &str, spec: Value, labels: Value) -> Job {
    on_pool(sim.pool(), sim, name, spec, labels)
}

/// A Job whose Pods select the Nodes of `pool` (none but the scenario's exist).
fn on_pool(pool: &str, sim: &Sim, name: &str, spec: Value, labels: Value) -> Job {
    let mut spec = spec;
    spec["template"] = json!({
        "metadata": {"labels": labels},
        "spec": {
            "schedulerName": sim.scheduler,
            "nodeSelector": {"nodesim.kubegen.io/pool": pool},
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]
        }
    });
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
}

async fn create(client: &Client, ns: &str, job: Job) {
    ResourceClient::<Job>::namespaced(client.clone(), ns)
        .create(&job, &CreateOptions::default())
        .await
        .unwrap();
}

/// The Job once it has a true `Complete` or `Failed` condition.
async fn finished(client: &Client, ns: &str, name: &str) -> Job {
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), ns);
    eventually(&format!("Job {name} to finish"), || async {
        let job = jobs.get(name, &GetOptions::default()).await.ok()?;
        let conditions = job.status.as_ref()?.conditions.as_ref()?;
        conditions
            .iter()
            .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
            .then_some(job)
    })
    .await
}

/// The status without its times, as JSON: the counters and the conditions' type, status,
/// reason and message.
fn settled(job: &Job) -> Value {
    let mut status = serde_json::to_value(job.status.clone().unwrap_or_default()).unwrap();
    let times = ["startTime", "completionTime"];
    let present: Vec<bool> = times.iter().map(|t| status.get(*t).is_some()).collect();
    for t in times {
        status.as_object_mut().unwrap().remove(t);
    }
    let conditions = status.get_mut("conditions").and_then(Value::as_array_mut);
    for c in conditions.into_iter().flatten() {
        assert_eq!(c["lastProbeTime"], c["lastTransitionTime"]);
        let c = c.as_object_mut().unwrap();
        c.remove("lastProbeTime");
        c.remove("lastTransitionTime");
    }
    status["startTime?"] = json!(present[0]);
    status["completionTime?"] = json!(present[1]);
    status
}

/// `(generateName, index annotation, index label, hostname, finalizers, phase)` of the Job's Pods.
async fn pods(
    client: &Client,
    ns: &str,
    job: &str,
) -> Vec<(String, String, String, String, usize, String)> {
    let list = ResourceClient::<Pod>::namespaced(client.clone(), ns)
        .list(&ListOptions::default().labels(format!("batch.kubernetes.io/job-name={job}")))
        .await
        .unwrap();
    let index = "batch.kubernetes.io/job-completion-index";
    let mut out: Vec<_> = list
        .items
        .into_iter()
        .map(|p| {
            let annotation = p
                .metadata
                .annotations
                .unwrap_or_default()
                .get(index)
                .cloned();
            let label = p.metadata.labels.unwrap_or_default().get(index).cloned();
            let spec = p.spec.unwrap_or_default();
            (
                p.metadata.generate_name.unwrap_or_default(),
                annotation.unwrap_or_default(),
                label.unwrap_or_default(),
                spec.hostname.unwrap_or_default(),
                p.metadata.finalizers.unwrap_or_default().len(),
                p.status.and_then(|s| s.phase).unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The namespace's Events about Jobs, with generated Pod names cut to their `generateName`.
async fn job_events(client: &Client, ns: &str) -> Vec<EventRow> {
    let mut out: Vec<_> = events(client, ns)
        .await
        .into_iter()
        .filter(|e| e.2.starts_with("Job/"))
        .map(|(kind, reason, object, message, count)| {
            let names_pod =
                message.starts_with("Created pod: ") || message.starts_with("Deleted pod: ");
            let message = match message.rsplit_once('-') {
                Some((prefix, suffix)) if names_pod && suffix.len() == 5 => {
                    format!("{prefix}-*")
                }
                _ => message,
            };
            (kind, reason, object, message, count)
        })
        .collect();
    out.sort();
    out
}

/// Waits (up to 30 s) until the Jobs' Events are `want` (in any order); panics with what it saw.
async fn wait_for_job_events(client: &Client, ns: &str, mut want: Vec<EventRow>) {
    want.sort();
    let within = std::time::Duration::from_secs(30);
    eventually_equal("the Jobs' Events", within, &want, || job_events(client, ns)).await;
}

type EventRow = (String, String, String, String, i32);

fn event(kind: &str, reason: &str, job: &str, message: &str) -> EventRow {
    (
        kind.into(),
        reason.into(),
        format!("Job/{job}"),
        message.into(),
        1,
    )
}

async fn completing_jobs(client: Client, sim: Sim) {
    let ns = sim.ns.as_str();
    let simple = job(
        &sim,
        "simple",
        json!({"completions": 2, "parallelism": 2}),
        json!({}),
    );
    create(&client, ns, simple).await;
    let indexed_spec = json!({"completions": 3, "parallelism": 2, "completionMode": "Indexed"});
    create(
        &client,
        ns,
        job(&sim, "indexed", indexed_spec, json!({"app": "idx"})),
    )
    .await;

    let simple = finished(&client, ns, "simple").await;
    let completed = json!([
        {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
        {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}
    ]);
    assert_eq!(
        settled(&simple),
        json!({"conditions": completed, "ready": 0, "succeeded": 2, "terminating": 0,
            "uncountedTerminatedPods": {}, "startTime?": true, "completionTime?": true})
    );
    let uid = simple.metadata.uid.clone().unwrap();
    let labels = simple.metadata.labels.clone().unwrap();
    assert_eq!(labels.get("batch.kubernetes.io/controller-uid"), Some(&uid));
    assert_eq!(labels.get("job-name").map(String::as_str), Some("simple"));
    let pod = (
        "simple-".to_string(),
        String::new(),
        String::new(),
        String::new(),
        0,
        "Succeeded".to_string(),
    );
    assert_eq!(pods(&client, ns, "simple").await, vec![pod.clone(), pod]);

    let indexed = finished(&client, ns, "indexed").await;
    assert_eq!(
        settled(&indexed),
        json!({"completedIndexes": "0-2", "conditions": completed, "ready": 0, "succeeded": 3,
            "terminating": 0, "uncountedTerminatedPods": {}, "startTime?": true, "completionTime?": true})
    );
    assert_eq!(
        indexed
            .metadata
            .labels
            .unwrap()
            .get("app")
            .map(String::as_str),
        Some("idx")
    );
    let indexed_pod = |i: usize| {
        (
            format!("indexed-{i}-"),
            i.to_string(),
            i.to_string(),
            format!("indexed-{i}"),
            0,
            "Succeeded".to_string(),
        )
    };
    assert_eq!(
        pods(&client, ns, "indexed").await,
        (0..3).map(indexed_pod).collect::<Vec<_>>()
    );

    let want = vec![
        event(
            "Normal",
            "SuccessfulCreate",
            "simple",
            "Created pod: simple-*",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            "simple",
            "Created pod: simple-*",
        ),
        event("Normal", "Completed", "simple", "Job completed"),
        event(
            "Normal",
            "SuccessfulCreate",
            "indexed",
            "Created pod: indexed-0-*",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            "indexed",
            "Created pod: indexed-1-*",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            "indexed",
            "Created pod: indexed-2-*",
        ),
        event("Normal", "Completed", "indexed", "Job completed"),
    ];
    wait_for_job_events(&client, ns, want).await;
}

async fn failing_job(client: Client, sim: Sim) {
    let ns = sim.ns.as_str();
    let failing = job(
        &sim,
        "failing",
        json!({"backoffLimit": 1}),
        json!({"nodesim.kubegen.io/failure": "crashloop"}),
    );
    create(&client, ns, failing).await;
    let failed = finished(&client, ns, "failing").await;
    let message = "Job has reached the specified backoff limit";
    assert_eq!(
        settled(&failed),
        json!({"conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": message},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": message}
        ], "failed": 2, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
            "startTime?": true, "completionTime?": false})
    );
    let pod = (
        "failing-".to_string(),
        String::new(),
        String::new(),
        String::new(),
        0,
        "Failed".to_string(),
    );
    assert_eq!(pods(&client, ns, "failing").await, vec![pod.clone(), pod]);
    let want = vec![
        event(
            "Normal",
            "SuccessfulCreate",
            "failing",
            "Created pod: failing-*",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            "failing",
            "Created pod: failing-*",
        ),
        event("Warning", "BackoffLimitExceeded", "failing", message),
    ];
    wait_for_job_events(&client, ns, want).await;
}

/// The names of Job `job`'s Pods, sorted.
async fn pod_names(client: &Client, ns: &str, job: &str) -> Vec<String> {
    let list = ResourceClient::<Pod>::namespaced(client.clone(), ns)
        .list(&ListOptions::default().labels(format!("batch.kubernetes.io/job-name={job}")))
        .await
        .unwrap();
    let mut names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    names.sort();
    names
}

async fn policy_jobs(client: Client, sim: Sim) {
    let ns = sim.ns.as_str();
    // The simulated container of a crash-looping Pod exits with code 1.
    let crashing = json!({"nodesim.kubegen.io/failure": "crashloop"});
    let fail_fast = json!({"backoffLimit": 6, "podFailurePolicy": {"rules": [
        {"action": "Ignore", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}},
        {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In", "values": [1]}}
    ]}});
    create(
        &client,
        ns,
        job(&sim, "fail-fast", fail_fast, crashing.clone()),
    )
    .await;
    let ignoring = json!({"backoffLimit": 0, "podFailurePolicy": {"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}
    ]}});
    create(&client, ns, job(&sim, "ignoring", ignoring, crashing)).await;

    // FailJob: the first failure fails the Job, though its backoffLimit allows six.
    let failed = finished(&client, ns, "fail-fast").await;
    let names = pod_names(&client, ns, "fail-fast").await;
    assert_eq!(names.len(), 1, "{names:?}");
    let message = format!(
        "Container c for pod {ns}/{} failed with exit code 1 matching FailJob rule at index 1",
        names[0]
    );
    assert_eq!(
        settled(&failed),
        json!({"conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "PodFailurePolicy", "message": message},
            {"type": "Failed", "status": "True", "reason": "PodFailurePolicy", "message": message}
        ], "failed": 1, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
            "startTime?": true, "completionTime?": false})
    );

    // Ignore: with a backoffLimit of 0 the failure neither counts nor fails the Job, and the
    // Pod is replaced after the 10 s back-off.
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), ns);
    eventually("a replacement for the ignored failure", || async {
        (pod_names(&client, ns, "ignoring").await.len() == 2).then_some(())
    })
    .await;
    let ignoring = jobs.get("ignoring", &GetOptions::default()).await.unwrap();
    let status = ignoring.status.unwrap_or_default();
    assert_eq!(
        (status.failed, status.conditions),
        (None, None),
        "an ignored failure is not counted"
    );
    let first = pods(&client, ns, "ignoring").await;
    assert!(
        first.iter().any(|p| p.5 == "Failed" && p.4 == 0),
        "the failed Pod is released: {first:?}"
    );
    jobs.delete("ignoring", &kubegen_client::DeleteOptions::default())
        .await
        .unwrap();

    let want = vec![
        event(
            "Normal",
            "SuccessfulCreate",
            "fail-fast",
            "Created pod: fail-fast-*",
        ),
        event("Warning", "PodFailurePolicy", "fail-fast", &message),
        event(
            "Normal",
            "SuccessfulCreate",
            "ignoring",
            "Created pod: ignoring-*",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            "ignoring",
            "Created pod: ignoring-*",
        ),
    ];
    wait_for_job_events(&client, ns, want).await;
}

async fn early_success(client: Client, sim: Sim) {
    let ns = sim.ns.as_str();
    // One Pod at a time: once index 0 succeeds, the rule is met and indexes 1 and 2 never start.
    let spec = json!({"completions": 3, "parallelism": 1, "completionMode": "Indexed",
        "successPolicy": {"rules": [{"succeededIndexes": "0-2", "succeededCount": 1}]}});
    create(&client, ns, job(&sim, "early", spec, json!({}))).await;
    let early = finished(&client, ns, "early").await;
    let message = "Matched rules at index 0";
    assert_eq!(
        settled(&early),
        json!({"completedIndexes": "0", "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "SuccessPolicy", "message": message},
            {"type": "Complete", "status": "True", "reason": "SuccessPolicy", "message": message}
        ], "ready": 0, "succeeded": 1, "terminating": 0, "uncountedTerminatedPods": {},
            "startTime?": true, "completionTime?": true})
    );
    assert_eq!(pod_names(&client, ns, "early").await.len(), 1);
    let want = vec![
        event(
            "Normal",
            "SuccessfulCreate",
            "early",
            "Created pod: early-0-*",
        ),
        event("Normal", "Completed", "early", "Job completed"),
    ];
    wait_for_job_events(&client, ns, want).await;
}

async fn job_pods(client: &Client, ns: &str) -> usize {
    ResourceClient::<Pod>::namespaced(client.clone(), ns)
        .list(&ListOptions::default().labels("batch.kubernetes.io/job-name=parked"))
        .await
        .unwrap()
        .items
        .len()
}

async fn suspended_job(client: Client, sim: Sim) {
    let ns = sim.ns.as_str();
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), ns);
    // Its Pods select no Node: they stay Pending, active and not ready, with their finalizer.
    let nowhere = format!("{}-nowhere", sim.pool());
    let spec = json!({"completions": 4, "parallelism": 2});
    create(
        &client,
        ns,
        on_pool(&nowhere, &sim, "parked", spec, json!({})),
    )
    .await;
    let running = eventually("two active Pods", || async {
        let job = jobs.get("parked", &GetOptions::default()).await.ok()?;
        (job.status.as_ref()?.active == Some(2)).then_some(job)
    })
    .await;
    assert_eq!(
        settled(&running),
        json!({"active": 2, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
            "startTime?": true, "completionTime?": false})
    );
    assert_eq!(job_pods(&client, ns).await, 2);

    let suspend = kubegen_client::Patch::Merge(json!({"spec": {"suspend": true}}));
    jobs.patch("parked", &suspend, &kubegen_client::PatchOptions::default())
        .await
        .unwrap();
    let suspended = eventually("the Job to be suspended without Pods", || async {
        let job = jobs.get("parked", &GetOptions::default()).await.ok()?;
        let status = job.status.as_ref()?;
        let done =
            status.active.is_none() && status.terminating == Some(0) && status.conditions.is_some();
        (done && job_pods(&client, ns).await == 0).then_some(job)
    })
    .await;
    assert_eq!(
        settled(&suspended),
        json!({"conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended"}],
            "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
            "startTime?": false, "completionTime?": false})
    );
    let want = vec![
        event(
            "Normal",
            "SuccessfulCreate",
            "parked",
            "Created pod: parked-*",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            "parked",
            "Created pod: parked-*",
        ),
        event(
            "Normal",
            "SuccessfulDelete",
            "parked",
            "Deleted pod: parked-*",
        ),
        event(
            "Normal",
            "SuccessfulDelete",
            "parked",
            "Deleted pod: parked-*",
        ),
        event("Normal", "Suspended", "parked", "Job suspended"),
    ];
    wait_for_job_events(&client, ns, want).await;

    // Resumed, it starts anew; deleted, its Pods lose their finalizer and go with it.
    let resume = kubegen_client::Patch::Merge(json!({"spec": {"suspend": false}}));
    jobs.patch("parked", &resume, &kubegen_client::PatchOptions::default())
        .await
        .unwrap();
    eventually("two Pods again", || async {
        (job_pods(&client, ns).await == 2).then_some(())
    })
    .await;
    let background = kubegen_client::DeleteOptions::default()
        .propagation_policy(kubegen_client::PropagationPolicy::Background);
    jobs.delete("parked", &background).await.unwrap();
    eventually("the Job's Pods to be gone", || async {
        (job_pods(&client, ns).await == 0).then_some(())
    })
    .await;
}

/// `(index, failure count)` annotations of Job `job`'s Pods, sorted.
async fn failure_counts(client: &Client, ns: &str, job: &str) -> Vec<(String, String)> {
    let mut out: Vec<_> = kubegen_e2e_support::list_in::<Pod>(client, ns)
        .await
        .into_iter()
        .filter(|p| {
            p.metadata
                .generate_name
                .as_deref()
                .is_some_and(|g| g.starts_with(&format!("{job}-")))
        })
        .map(|p| {
            let annotations = p.metadata.annotations.unwrap_or_default();
            let read = |k: &str| annotations.get(k).cloned().unwrap_or_default();
            (
                read("batch.kubernetes.io/job-completion-index"),
                read("batch.kubernetes.io/job-index-failure-count"),
            )
        })
        .collect();
    out.sort();
    out
}

async fn per_index_jobs(client: Client, sim: Sim) {
    let ns = sim.ns.as_str();
    let crashing = json!({"nodesim.kubegen.io/failure": "crashloop"});
    // Two indexes, each retried once (after its own 10 s back-off), then failed.
    let retried = json!({"completions": 2, "parallelism": 2, "completionMode": "Indexed",
        "backoffLimitPerIndex": 1});
    create(&client, ns, job(&sim, "retried", retried, crashing.clone())).await;
    // No retry and no failed index allowed: the first failure fails the Job.
    let strict = json!({"completions": 3, "parallelism": 1, "completionMode": "Indexed",
        "backoffLimitPerIndex": 0, "maxFailedIndexes": 0});
    create(&client, ns, job(&sim, "strict", strict, crashing)).await;

    let strict = finished(&client, ns, "strict").await;
    let message = "Job has exceeded the specified maximal number of failed indexes";
    assert_eq!(
        settled(&strict),
        json!({"conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "MaxFailedIndexesExceeded", "message": message},
            {"type": "Failed", "status": "True", "reason": "MaxFailedIndexesExceeded", "message": message}
        ], "failed": 1, "failedIndexes": "0", "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {}, "startTime?": true, "completionTime?": false})
    );
    assert_eq!(
        failure_counts(&client, ns, "strict").await,
        vec![("0".into(), "0".into())]
    );

    let retried = finished(&client, ns, "retried").await;
    let failed_indexes = "Job has failed indexes";
    assert_eq!(
        settled(&retried),
        json!({"conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "FailedIndexes", "message": failed_indexes},
            {"type": "Failed", "status": "True", "reason": "FailedIndexes", "message": failed_indexes}
        ], "failed": 4, "failedIndexes": "0,1", "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {}, "startTime?": true, "completionTime?": false})
    );
    let counts = |ix: &str| {
        vec![
            (ix.to_owned(), "0".to_owned()),
            (ix.to_owned(), "1".to_owned()),
        ]
    };
    assert_eq!(
        failure_counts(&client, ns, "retried").await,
        [counts("0"), counts("1")].concat(),
        "each replacement carries the failure of the Pod it replaced"
    );

    let created = |job: &str, ix: u8| {
        event(
            "Normal",
            "SuccessfulCreate",
            job,
            &format!("Created pod: {job}-{ix}-*"),
        )
    };
    let want = vec![
        created("retried", 0),
        created("retried", 0),
        created("retried", 1),
        created("retried", 1),
        event("Warning", "FailedIndexes", "retried", failed_indexes),
        created("strict", 0),
        event("Warning", "MaxFailedIndexesExceeded", "strict", message),
    ];
    wait_for_job_events(&client, ns, want).await;
}
