//! vm-controller: a VirtualMachine gets the finalizer, goes Pending then Running with an address
//! and a Ready condition; deleting it destroys the machine before the object goes.

use std::time::Duration;

use kubegen_api::cloudnative::v1alpha1::{VirtualMachine, VirtualMachinePhase};
use kubegen_client::{DeleteOptions, GetOptions, ResourceClient};
use kubegen_examples::target::create_if_absent;
use kubegen_examples::vm::{self, FINALIZER, VmController, VmOptions};

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
