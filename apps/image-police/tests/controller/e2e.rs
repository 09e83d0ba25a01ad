//! End-to-end tests: the binary's main loop ([`run`]) against a real API server protocol.
//!
//! Every scenario runs twice: against kubegen-testserver (always), and against a real cluster
//! when `KUBEGEN_E2E_KUBECONFIG` names a kubeconfig. The real-cluster variants are `#[ignore]`d,
//! so without a cluster nextest counts them as skipped (with the reason), never as passed;
//! `scripts/test.sh` runs them when the variable is set. Each scenario applies the CRDs itself (deploy/crd.yaml, or deploy/crd-v1beta1.yaml
//! on a server without apiextensions.k8s.io/v1) and works in its own namespace. Latency is
//! injected by a TCP proxy in front of the target ([`crate::latency_proxy`]), so no scenario
//! depends on the test server's fault injection and every one runs on a real cluster too.
//!
//! These tests talk to a server over HTTP, so they wait in real time, with generous deadlines;
//! nothing asserts on exact timings except the documented takeover bound.

use std::time::{Duration, Instant};

use crate::harness::{
    Env, WHITELIST, allowed_deployment, forbidden_deployment, is_ready, whitelist,
    whitelist_allowing,
};

macro_rules! on_both_targets {
    ($scenario:ident, $testserver:ident, $cluster:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $testserver() {
            $scenario(Env::testserver().await).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
        async fn $cluster() {
            $scenario(Env::cluster().await).await;
        }
    };
}

on_both_targets!(
    forbidden_deployment_is_deleted_with_event_and_status,
    forbidden_deployment_is_deleted_on_testserver,
    forbidden_deployment_is_deleted_on_cluster
);
on_both_targets!(
    deleting_the_list_that_allowed_an_image_deletes_its_deployment,
    deleting_the_allowing_list_on_testserver,
    deleting_the_allowing_list_on_cluster
);
on_both_targets!(
    only_the_leader_acts,
    only_the_leader_acts_on_testserver,
    only_the_leader_acts_on_cluster
);
on_both_targets!(
    standby_takes_over_when_the_leader_dies,
    standby_takes_over_on_testserver,
    standby_takes_over_on_cluster
);
on_both_targets!(
    shutdown_drains_in_flight_work_and_releases_the_lease,
    shutdown_drains_on_testserver,
    shutdown_drains_on_cluster
);

on_both_targets!(
    sharded_replicas_one_owner_acts_and_a_survivor_takes_over,
    sharded_replicas_on_testserver,
    sharded_replicas_on_cluster
);

/// Three replicas sharded as deploy/deployment.yaml runs them (`--sharding-ring`, the ring
/// scoped to the scenario's namespace), with the controller's own RBAC: the namespace's shard
/// alone acts; when it stops, a survivor adopts the namespace and acts.
async fn sharded_replicas_one_owner_acts_and_a_survivor_takes_over(env: Env) {
    let ns = env.namespace("sharded").await;
    env.create(whitelist(&ns)).await;
    let mut replicas = Vec::new();
    for name in ["a", "b", "c"] {
        let replica = env.spawn_sharded_controller(name, &ns).await;
        replica.wait_ready().await;
        replicas.push((name, replica));
    }
    env.create(forbidden_deployment(&ns, "bad-0")).await;
    env.wait_deployment_gone(&ns, "bad-0").await;
    let events = env.wait_events(&ns, "DeletedForbiddenImage", 1).await;
    let owner = events[0].reporting_instance.clone().unwrap_or_default();
    let index = replicas
        .iter()
        .position(|(name, _)| owner.starts_with(&format!("{name}-")))
        .unwrap_or_else(|| panic!("no replica named like {owner:?}"));
    // The Event is recorded inside the reconcile, so its count moves a moment later.
    replicas[index].1.wait_reconciles(1).await;
    let acted: Vec<&str> = replicas
        .iter()
        .filter(|(_, r)| r.metrics.reconciles_finished() > 0)
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(acted, [replicas[index].0], "replicas that reconciled");
    let (_, stopped) = replicas.remove(index);
    assert_eq!(stopped.stop().await, Ok(()));
    env.create(forbidden_deployment(&ns, "bad-1")).await;
    env.wait_deployment_gone(&ns, "bad-1").await;
    let events = env.wait_events(&ns, "DeletedForbiddenImage", 2).await;
    let takeover: Vec<&str> = events
        .iter()
        .filter_map(|e| e.reporting_instance.as_deref())
        .filter(|instance| *instance != owner)
        .collect();
    assert_eq!(takeover.len(), 1, "Events: {events:?}");
    for (_, replica) in replicas {
        assert_eq!(replica.stop().await, Ok(()));
    }
    env.cleanup(&ns).await;
}

async fn forbidden_deployment_is_deleted_with_event_and_status(env: Env) {
    let ns = env.namespace("deny").await;
    env.create(whitelist(&ns)).await;
    env.create(allowed_deployment(&ns, "web")).await;
    let controller = env.start_controller("solo", false, &ns).await;
    env.create(forbidden_deployment(&ns, "cache")).await;

    env.wait_deployment_gone(&ns, "cache").await;
    assert!(
        env.deployment_exists(&ns, "web").await,
        "the allowed Deployment must stay"
    );
    let events = env.wait_events(&ns, "DeletedForbiddenImage", 1).await;
    assert_eq!(events[0].involved_object.name.as_deref(), Some("cache"));
    let status = env
        .wait_status(&ns, WHITELIST, |s| s.violations_handled == Some(1))
        .await;
    assert_eq!(status.last_violations[0].deployment, "cache");
    assert_eq!(status.last_violations[0].image, "redis:7.4");
    let ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .cloned()
        .unwrap_or_default();
    assert_eq!(ready.status, "True");
    let text = controller.process.encode();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .unwrap_or_else(|e| panic!("{e}"));
    let value = |metric: &str, labels: &[(&str, &str)]| {
        scrape
            .samples
            .iter()
            .find(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| s.value.clone())
    };
    use prometheus_parse::Value;
    assert_eq!(
        value("image_police_deployments_deleted_total", &[]),
        Some(Value::Untyped(1.0)),
        "{text}"
    );
    // controller-runtime's families, labelled with the controller's name, as dashboards query them.
    let police = [("controller", "image-police"), ("result", "success")];
    assert!(
        matches!(value("controller_runtime_reconcile_total", &police), Some(Value::Untyped(n)) if n >= 1.0),
        "controller-runtime reconcile metrics missing:\n{text}"
    );
    for family in [
        "controller_runtime_reconcile_time_seconds",
        "controller_runtime_active_workers",
        "controller_runtime_max_concurrent_reconciles",
    ] {
        assert!(
            scrape.docs.contains_key(family),
            "{family} missing:\n{text}"
        );
    }
    let queue = [("name", "image-police")];
    assert!(
        matches!(value("workqueue_adds_total", &queue), Some(Value::Untyped(n)) if n >= 1.0),
        "workqueue metrics missing:\n{text}"
    );
    // The informers listed and watched, through the client, which counted successful GETs.
    let gets = [("code", "200"), ("method", "GET")];
    assert!(
        matches!(value("rest_client_requests_total", &gets), Some(Value::Untyped(n)) if n >= 1.0),
        "client request metrics missing:\n{text}"
    );
    assert!(
        matches!(
            value("rest_client_request_duration_seconds", &[]),
            Some(Value::Histogram(_))
        ),
        "{text}"
    );
    let informer = [("informer", "deployments")];
    assert!(
        matches!(value("informer_lists_total", &informer), Some(Value::Untyped(n)) if n >= 1.0),
        "informer metrics missing:\n{text}"
    );
    assert_eq!(controller.stop().await, Ok(()));
    env.cleanup(&ns).await;
}

async fn deleting_the_list_that_allowed_an_image_deletes_its_deployment(env: Env) {
    let ns = env.namespace("unlist").await;
    env.create(whitelist(&ns)).await;
    env.create(whitelist_allowing(&ns, "redis-ok", "redis", "7.4"))
        .await;
    env.create(allowed_deployment(&ns, "web")).await;
    env.create(forbidden_deployment(&ns, "cache")).await; // redis:7.4: allowed by redis-ok only
    let controller = env.start_controller("unlist", false, &ns).await;
    // One reconcile of the namespace enforces the union, then writes both statuses: once both
    // say Ready, the Deployments have been judged, and the union allows the cache.
    env.wait_status(&ns, WHITELIST, is_ready).await;
    env.wait_status(&ns, "redis-ok", is_ready).await;
    assert!(
        env.deployment_exists(&ns, "cache").await,
        "redis-ok allows redis:7.4"
    );

    env.delete_whitelist(&ns, "redis-ok").await;
    env.wait_deployment_gone(&ns, "cache").await;
    assert!(
        env.deployment_exists(&ns, "web").await,
        "the remaining list allows nginx"
    );
    let status = env
        .wait_status(&ns, WHITELIST, |s| s.violations_handled == Some(1))
        .await;
    assert_eq!(status.last_violations[0].deployment, "cache");
    let events = env.wait_events(&ns, "DeploymentDeleted", 1).await;
    assert_eq!(
        events[0].involved_object.name.as_deref(),
        Some(WHITELIST),
        "the Event is on the remaining list"
    );
    assert_eq!(controller.stop().await, Ok(()));
    env.cleanup(&ns).await;
}

async fn only_the_leader_acts(env: Env) {
    let ns = env.namespace("leader").await;
    env.create(whitelist(&ns)).await;
    let a = env.start_controller("a", true, &ns).await;
    let b = env.start_controller("b", true, &ns).await;
    let leader = env.wait_lease_holder(|holder| holder.is_some()).await;
    for i in 0..3 {
        env.create(forbidden_deployment(&ns, &format!("bad-{i}")))
            .await;
    }
    for i in 0..3 {
        env.wait_deployment_gone(&ns, &format!("bad-{i}")).await;
    }
    let events = env.wait_events(&ns, "DeletedForbiddenImage", 3).await;
    for event in &events {
        assert_eq!(
            event.reporting_instance, leader,
            "an Event from the standby: {event:?}"
        );
    }
    assert!(
        a.metrics.reconciles_finished() == 0 || b.metrics.reconciles_finished() == 0,
        "both replicas reconciled"
    );
    assert_eq!(a.stop().await, Ok(()));
    assert_eq!(b.stop().await, Ok(()));
    env.cleanup(&ns).await;
}

async fn standby_takes_over_when_the_leader_dies(env: Env) {
    let ns = env.namespace("takeover").await;
    env.create(whitelist(&ns)).await;
    let first = env.start_controller("first", true, &ns).await;
    env.wait_lease_holder(|holder| holder.is_some_and(|h| h.starts_with("first")))
        .await;
    let second = env.start_controller("second", true, &ns).await;

    let killed = Instant::now();
    first.kill(); // no release: the standby must wait for the lease to expire
    env.wait_lease_holder(|holder| holder.is_some_and(|h| h.starts_with("second")))
        .await;
    let takeover = killed.elapsed();
    println!(
        "takeover after the leader died: {takeover:?} (lease duration {:?})",
        crate::harness::LEASE_DURATION
    );
    // Bound: the lease duration since the last renewal the standby saw, plus its acquire retries
    // (with jitter) and our polling.
    assert!(
        takeover <= crate::harness::LEASE_DURATION + crate::harness::RETRY_PERIOD * 4,
        "takeover took {takeover:?}"
    );

    env.create(forbidden_deployment(&ns, "late")).await;
    env.wait_deployment_gone(&ns, "late").await;
    let events = env.wait_events(&ns, "DeletedForbiddenImage", 1).await;
    assert!(
        events[0]
            .reporting_instance
            .as_deref()
            .is_some_and(|i| i.starts_with("second"))
    );
    assert_eq!(second.stop().await, Ok(()));
    env.cleanup(&ns).await;
}

async fn shutdown_drains_in_flight_work_and_releases_the_lease(env: Env) {
    let ns = env.namespace("drain").await;
    env.create(whitelist(&ns)).await;
    // Only the controller's requests are slowed, on any target: the harness talks directly.
    let proxy = env.latency_proxy().await;
    let controller = env
        .start_controller_via(Some(&proxy), "drainer", true, &ns)
        .await;
    env.wait_lease_holder(|holder| holder.is_some()).await;
    // The first reconcile (the WhiteList's namespace) must be over: the one caught in flight
    // below has to be the Deployment's, or the drain would have nothing of it to finish.
    controller.wait_reconciles(1).await;
    // Slow enough to catch the reconcile in flight, fast enough for Lease renewals (1.5 s deadline).
    proxy.set_latency(Duration::from_millis(200));
    env.create(forbidden_deployment(&ns, "slow")).await;
    controller.wait_in_flight().await;

    let metrics = controller.metrics.clone();
    assert_eq!(
        controller.stop().await,
        Ok(()),
        "shutdown must drain cleanly"
    );
    assert_eq!(metrics.in_flight(), 0);
    assert!(metrics.reconciles_finished() >= 1);
    assert!(
        !env.deployment_exists(&ns, "slow").await,
        "the in-flight reconcile was cut short"
    );
    let released = env.wait_lease_holder(|holder| holder.is_none()).await;
    assert_eq!(released, None);
    env.cleanup(&ns).await;
}
