//! vm-controller: a VirtualMachine gets the finalizer, goes Pending then Running with an address
//! and a Ready condition; deleting it destroys the machine before the object goes.

use std::time::Duration;

use kubegen_api::cloudnative::v1alpha1::{VirtualMachine, VirtualMachinePhase};
use kubegen_client::{DeleteOptions, GetOptions, ListOptions, ResourceClient};
use kubegen_examples::target::create_if_absent;
use kubegen_examples::vm::{self, FINALIZER, VmController, VmOptions};
use kubegen_sharding::{HashRing, ReplicaConfig, Ring, RingKey};

use crate::harness::{Env, on_both_targets, poll};

on_both_targets!(
    a_machine_runs_until_its_object_is_deleted,
    a_machine_runs_until_its_object_is_deleted_on_testserver,
    a_machine_runs_until_its_object_is_deleted_on_cluster
);

async fn a_machine_runs_until_its_object_is_deleted(env: Env) {
    let ns = env.namespace("vm").await;
    let mut options = VmOptions::default();
    options.namespace = Some(ns.clone());
    options.boot_time = Duration::from_millis(500);
    let controller = VmController::start(env.client().clone(), options)
        .await
        .unwrap();
    create_if_absent(env.client(), &vm::sample(&ns, "web"))
        .await
        .unwrap();
    let vms = ResourceClient::<VirtualMachine>::namespaced(env.client().clone(), &ns);
    let get = || async { vms.get("web", &GetOptions::default()).await.ok() };

    let pending = poll("phase Pending", || async {
        get()
            .await
            .filter(|vm| phase(vm) == Some(VirtualMachinePhase::Pending))
    })
    .await;
    assert_eq!(
        pending.metadata.finalizers,
        Some(vec![FINALIZER.to_owned()])
    );
    let booting = &pending.status.as_ref().unwrap().conditions[0];
    assert_eq!(
        (
            booting.type_.as_str(),
            booting.status.as_str(),
            booting.reason.as_str()
        ),
        ("Ready", "False", "Booting")
    );

    let running = poll("phase Running", || async {
        get()
            .await
            .filter(|vm| phase(vm) == Some(VirtualMachinePhase::Running))
    })
    .await;
    let status = running.status.unwrap();
    assert_eq!(status.ip.as_deref(), Some("10.0.0.2"));
    assert!(status.started_at.is_some());
    assert_eq!(status.observed_generation, running.metadata.generation);
    let ready = &status.conditions[0];
    assert_eq!(
        (
            ready.type_.as_str(),
            ready.status.as_str(),
            ready.reason.as_str()
        ),
        ("Ready", "True", "Running")
    );
    assert_eq!(controller.machines(), vec![format!("{ns}/web")]);

    vms.delete("web", &DeleteOptions::default()).await.unwrap();
    poll("the VirtualMachine gone", || async {
        match vms.get("web", &GetOptions::default()).await {
            Err(error) if error.is_not_found() => Some(()),
            _ => None,
        }
    })
    .await;
    assert_eq!(controller.machines(), Vec::<String>::new());
    controller.shutdown().await.unwrap();
    env.cleanup(&ns).await;
}

fn phase(vm: &VirtualMachine) -> Option<VirtualMachinePhase> {
    vm.status.as_ref()?.phase
}

on_both_targets!(
    sharded_replicas_run_each_machine_once,
    sharded_replicas_run_each_machine_once_on_testserver,
    sharded_replicas_run_each_machine_once_on_cluster
);

/// Two vm-controllers sharded over one ring (scoped to the scenario's namespace): every
/// VirtualMachine runs on exactly one of their hypervisors, and when one replica stops, the
/// other takes its VirtualMachines over (their deletion is reconciled there).
async fn sharded_replicas_run_each_machine_once(env: Env) {
    const MACHINES: usize = 8;
    let ns = env.namespace("vm-sharded").await;
    let start = |identity: &str| {
        let mut ring = ReplicaConfig::new(Ring::new("vm-controller", &ns), "");
        ring.namespace = Some(ns.clone());
        ring.lease_duration = Duration::from_secs(2);
        ring.renew_deadline = Duration::from_millis(1500);
        ring.retry_period = Duration::from_millis(300);
        ring.assign_period = Duration::from_millis(100);
        let mut options = VmOptions::default();
        options.namespace = Some(ns.clone());
        options.boot_time = Duration::from_millis(200);
        options.sharding = Some(ring);
        options.identity = Some(identity.to_owned());
        VmController::start(env.client().clone(), options)
    };
    let (a, b) = (start("vm-a").await.unwrap(), start("vm-b").await.unwrap());
    let names: Vec<String> = (0..MACHINES).map(|i| format!("vm-{i}")).collect();
    for name in &names {
        create_if_absent(env.client(), &vm::sample(&ns, name))
            .await
            .unwrap();
    }
    let vms = ResourceClient::<VirtualMachine>::namespaced(env.client().clone(), &ns);
    let ring = HashRing::new(["vm-a", "vm-b"]);
    let label = Ring::new("vm-controller", &ns).shard_label();
    poll("every VirtualMachine labelled with its shard", || async {
        let list = vms.list(&ListOptions::default()).await.ok()?;
        let settled = list.items.len() == MACHINES
            && list.items.iter().all(|vm| {
                let shard = vm.metadata.labels.as_ref().and_then(|l| l.get(&label));
                shard.map(String::as_str) == ring.owner(&RingKey::Object.of(&vm.metadata))
            });
        settled.then_some(())
    })
    .await;
    let expected: Vec<String> = names.iter().map(|n| format!("{ns}/{n}")).collect();
    let (on_a, on_b) = poll("every machine running on one replica", || async {
        let (on_a, on_b) = (a.machines(), b.machines());
        let mut all: Vec<String> = on_a.iter().chain(&on_b).cloned().collect();
        all.sort();
        (all == expected).then_some((on_a, on_b))
    })
    .await;
    assert!(
        on_a.iter().all(|m| !on_b.contains(m)),
        "a machine runs twice: {on_a:?} {on_b:?}"
    );
    b.shutdown().await.unwrap();
    // a adopts b's VirtualMachines: deleting every one (the finalizer holds each until its
    // reconcile destroys the machine and lets go) needs a to reconcile all of them. It also
    // leaves no finalizer behind to hold the namespace on a real cluster.
    for name in &names {
        vms.delete(name, &DeleteOptions::default()).await.unwrap();
    }
    poll("every VirtualMachine deleted through a", || async {
        let left = vms.list(&ListOptions::default()).await.ok()?;
        left.items.is_empty().then_some(())
    })
    .await;
    assert_eq!(a.machines(), Vec::<String>::new());
    a.shutdown().await.unwrap();
    env.cleanup(&ns).await;
}
