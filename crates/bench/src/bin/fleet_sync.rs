//! `fleet-sync`: one manager engaging a fleet of in-process member clusters (kubegen-runtime's
//! `multicluster`), each holding `--objects` ConfigMaps; prints how long it takes from the
//! manager's start until every member is engaged, its informer synced and every object reconciled
//! once, and the memory (live heap, resident set) per engaged member. Issue 36's target: 100
//! members × 1,000 objects under 30 s on 2 cores. A measurement printed as a table, never a timed
//! assertion.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin fleet-sync                       # 100 × 1,000
//! cargo run --release -p kubegen-bench --bin fleet-sync -- --members 10 --objects 100
//! ```
//!
//! The members are `kubegen_testserver::TestFleet` servers in this process, each on its own
//! port; the hub holds their Cluster API kubeconfig Secrets. The memory figures are deltas from
//! just before the manager starts, so the servers' stored objects are not counted, but their
//! side of each member's watch (a few buffers per watch) is: it lives in the same process.

use std::alloc::System;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_bench::http::RawClient;
use kubegen_bench::loader;
use kubegen_bench::measure::Snapshot;
use kubegen_bench::roles::Dataset;
use kubegen_bench::table::markdown;
use kubegen_runtime::multicluster::{
    ClusterContext, Fleet, FleetOptions, FleetReconciler, KubeconfigSecrets, SecretOptions,
};
use kubegen_runtime::{Action, Manager, ManagerOptions};
use kubegen_testserver::TestFleet;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

/// Counting allocator: the live heap before and after.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The namespace of the members' objects.
const NAMESPACE: &str = "fleet-bench";

#[derive(Parser, Debug)]
#[command(
    name = "fleet-sync",
    about = "One manager over N in-process member clusters: time to engage and sync, memory per member"
)]
struct Args {
    /// Member clusters.
    #[arg(long, default_value_t = 100)]
    members: usize,
    /// ConfigMaps per member.
    #[arg(long, default_value_t = 1000)]
    objects: usize,
    /// Workers per controller and member.
    #[arg(long, default_value_t = 1)]
    workers: usize,
}

/// Counts reconciles.
struct Count(Arc<AtomicUsize>);

impl FleetReconciler<ConfigMap> for Count {
    type Error = std::convert::Infallible;

    async fn reconcile(
        &self,
        _: Arc<ConfigMap>,
        _: &ClusterContext,
    ) -> Result<Action, Self::Error> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(Action::Done)
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let args = Args::parse();
    let servers = TestFleet::start(args.members).await;
    let loading = Instant::now();
    for index in 0..args.members {
        let Some(member) = servers.member(index) else {
            bail!("member {index} did not start");
        };
        let raw = RawClient::new(&member.url());
        loader::load(&raw, Dataset::ConfigMaps, NAMESPACE, args.objects).await?;
    }
    servers.install_kubeconfig_secrets("default").await?;
    eprintln!(
        "loaded {} members × {} ConfigMaps in {:.1} s",
        args.members,
        args.objects,
        loading.elapsed().as_secs_f64()
    );

    let before = Snapshot::take();
    let started = Instant::now();
    let hub = servers.hub().client();
    let mut manager = Manager::new(hub.clone(), ManagerOptions::default());
    // Members' caches as an operator would keep them: without managedFields.
    let factory = kubegen_cache::FactoryOptions::default()
        .transform(Arc::new(|meta: &mut ObjectMeta| meta.managed_fields = None));
    let options = FleetOptions::default()
        .workers(args.workers)
        .factory(factory);
    let fleet = Fleet::new(&manager, options);
    fleet.add_provider(KubeconfigSecrets::new(
        hub,
        SecretOptions::cluster_api("default"),
    ));
    let reconciled = Arc::new(AtomicUsize::new(0));
    fleet.add_controller(
        "fleet-sync",
        |cluster| cluster.controller("fleet-sync", &cluster.factory().informer::<ConfigMap>()),
        Count(Arc::clone(&reconciled)),
    );
    fleet.attach(&mut manager);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(manager.run(async move {
        let _ = stopped.await;
    }));

    // Every member's own objects (plus the namespace's kube-root-ca.crt, where published).
    let wanted = args.members * args.objects;
    let mut engaged_at = None;
    loop {
        if engaged_at.is_none() && fleet.clusters().len() == args.members {
            engaged_at = Some(started.elapsed());
        }
        if reconciled.load(Ordering::Relaxed) >= wanted {
            break;
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!(
                "gave up after 600 s: {} of {wanted} reconciled",
                reconciled.load(Ordering::Relaxed)
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let synced = started.elapsed();
    let after = Snapshot::take();
    let _ = stop.send(());
    task.await??;

    let members = args.members as f64;
    let heap_mib = (after.live - before.live) as f64 / 1024.0 / 1024.0;
    let rss_mib = after.rss_kib.saturating_sub(before.rss_kib) as f64 / 1024.0;
    let cpu = after.cpu.saturating_sub(before.cpu).as_secs_f64();
    let rows = vec![vec![
        format!("{} × {}", args.members, args.objects),
        format!("{:.2}", engaged_at.unwrap_or(synced).as_secs_f64()),
        format!("{:.2}", synced.as_secs_f64()),
        format!("{cpu:.1}"),
        format!("{heap_mib:.1}"),
        format!("{:.2}", heap_mib / members),
        format!("{rss_mib:.1}"),
        format!("{:.2}", rss_mib / members),
    ]];
    println!(
        "{}",
        markdown(
            "fleet-sync: one manager engaging in-process members (time from the manager's start)",
            &[
                "members × objects",
                "all engaged s",
                "all reconciled s",
                "CPU s",
                "live heap Δ MiB",
                "heap MiB / member",
                "RSS Δ MiB",
                "RSS MiB / member",
            ],
            &rows,
        )
    );
    Ok(())
}
