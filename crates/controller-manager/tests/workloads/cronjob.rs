//! A CronJob scheduled every minute, on the test server only: its controller-manager reads a
//! clock set two seconds before a minute starts (and then moved on a minute), so the test does
//! not wait for the wall clock. What it checks (the Job's name, annotation and labels, the
//! CronJob's status and Events, the history limit) was read from the real cronjob-controller
//! with the same CronJob and simulated Nodes.

use std::sync::{
    Arc,
    atomic::{AtomicI64, Ordering},
};
use std::time::Duration;

use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kubegen_client::{CreateOptions, GetOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use kubegen_controller_manager::{Clock, ControllerManager, ControllerManagerOptions};
use kubegen_nodesim::NodeSimOptions;
use kubegen_testserver::{ServerOptions, TestServer};
use serde_json::json;

use crate::{events, eventually, eventually_equal};

/// Seconds the clock runs ahead of the system clock (shared with the test so it can move it).
fn shifted(offset: Arc<AtomicI64>) -> Clock {
    Clock::new(move || {
        Timestamp::now() + SignedDuration::from_millis(offset.load(Ordering::SeqCst))
    })
}

/// The offset that puts the clock two seconds before the next minute.
fn two_seconds_before_a_minute() -> i64 {
    let now = Timestamp::now().as_millisecond();
    let next_minute = (now.div_euclid(60_000) + 1) * 60_000;
    next_minute - 2_000 - now
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cronjob_runs_each_minute_and_keeps_its_history_as_the_real_controller() {
    let mut server_options = ServerOptions::default();
    server_options.controller_manager = false;
    server_options.simulated_nodes = Some(NodeSimOptions::default().nodes(1));
    let server = TestServer::start_with(server_options).await;
    let client = server.client();
    let offset = Arc::new(AtomicI64::new(two_seconds_before_a_minute()));
    let options = ControllerManagerOptions::default().clock(shifted(offset.clone()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let manager = tokio::spawn(ControllerManager::new(client.clone(), options).run(async {
        let _ = stopped.await;
    }));

    let cronjob: CronJob = serde_json::from_value(json!({
        "metadata": {"name": "every"},
        "spec": {
            "schedule": "*/1 * * * *",
            "successfulJobsHistoryLimit": 1,
            "jobTemplate": {
                "metadata": {"labels": {"from": "cron"}, "annotations": {"a": "b"}},
                "spec": {"template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}]
                }}}
            }
        }
    }))
    .unwrap();
    let cronjobs = ResourceClient::<CronJob>::namespaced(client.clone(), "default");
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), "default");
    cronjobs
        .create(&cronjob, &CreateOptions::default())
        .await
        .unwrap();
    let first_minute = (Timestamp::now().as_millisecond() + offset.load(Ordering::SeqCst) + 2_000)
        .div_euclid(60_000);
    let first = format!("every-{first_minute}");

    let job = eventually("the first Job", || async {
        jobs.get(&first, &GetOptions::default()).await.ok()
    })
    .await;
    let scheduled = Timestamp::from_second(first_minute * 60).unwrap();
    let annotations = job.metadata.annotations.clone().unwrap();
    assert_eq!(annotations.get("a").map(String::as_str), Some("b"));
    let stamp = scheduled.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    assert_eq!(
        annotations.get("batch.kubernetes.io/cronjob-scheduled-timestamp"),
        Some(&stamp)
    );
    assert_eq!(
        job.metadata
            .labels
            .clone()
            .unwrap()
            .get("from")
            .map(String::as_str),
        Some("cron")
    );
    let owner = &job.metadata.owner_references.clone().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("CronJob", "every", Some(true))
    );
    assert_eq!(
        job.spec.clone().unwrap().backoff_limit,
        Some(6),
        "the Job is defaulted"
    );

    let status = eventually("the first Job to be counted a success", || async {
        let status = cronjobs
            .get("every", &GetOptions::default())
            .await
            .ok()?
            .status?;
        status.last_successful_time.is_some().then_some(status)
    })
    .await;
    assert_eq!(status.last_schedule_time.map(|t| t.0), Some(scheduled));
    assert_eq!(status.active, None, "a finished Job leaves the active list");

    // A minute later (by the clock), the next run; the first Job goes over the history limit.
    offset.fetch_add(60_000, Ordering::SeqCst);
    let touch = Patch::Merge(json!({"metadata": {"labels": {"touched": "1"}}}));
    cronjobs
        .patch("every", &touch, &PatchOptions::default())
        .await
        .unwrap();
    let second = format!("every-{}", first_minute + 1);
    eventually("the second Job", || async {
        jobs.get(&second, &GetOptions::default()).await.ok()
    })
    .await;
    // The controller writes the CronJob's status after creating the Job. Suspending it before
    // that write lands would make the write conflict, and the retried sync would then find
    // an unlisted Job (`UnexpectedJob`, and no `SawCompletedJob`), here as on a real cluster.
    let second_scheduled = Timestamp::from_second((first_minute + 1) * 60).unwrap();
    eventually("the second Job in the CronJob's status", || async {
        let status = cronjobs
            .get("every", &GetOptions::default())
            .await
            .ok()?
            .status?;
        (status.last_schedule_time.map(|t| t.0) == Some(second_scheduled)).then_some(())
    })
    .await;
    // Suspended, it starts nothing more (a slow machine would otherwise reach the next minute
    // of the shifted clock), and still keeps its history.
    let suspend = Patch::Merge(json!({"spec": {"suspend": true}}));
    cronjobs
        .patch("every", &suspend, &PatchOptions::default())
        .await
        .unwrap();
    eventually(
        "the second Job to succeed and the first to be deleted",
        || async {
            let names: Vec<String> = jobs
                .list(&ListOptions::default())
                .await
                .ok()?
                .items
                .into_iter()
                .filter_map(|j| j.metadata.name)
                .collect();
            (names == vec![second.clone()]).then_some(())
        },
    )
    .await;

    let mut want = [
        ("Normal", "SuccessfulCreate", format!("Created job {first}")),
        (
            "Normal",
            "SawCompletedJob",
            format!("Saw completed job: {first}, condition: Complete"),
        ),
        (
            "Normal",
            "SuccessfulCreate",
            format!("Created job {second}"),
        ),
        (
            "Normal",
            "SawCompletedJob",
            format!("Saw completed job: {second}, condition: Complete"),
        ),
        ("Normal", "SuccessfulDelete", format!("Deleted job {first}")),
    ];
    want.sort();
    let want: Vec<_> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.clone()))
        .collect();
    eventually_equal(
        "the CronJob's Events",
        Duration::from_secs(60),
        &want,
        || async {
            let mut seen: Vec<_> = events(&client, "default")
                .await
                .into_iter()
                .filter(|e| e.2 == "CronJob/every")
                .map(|e| (e.0, e.1, e.3))
                .collect();
            seen.sort();
            seen
        },
    )
    .await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), manager)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
