//! One reconcile of one VirtualMachine under the runtime's [`finalizer()`]: it adds the
//! finalizer to a new machine, applies (the machine, then the status with the runtime's
//! `conditions` helpers) while the object lives, and once it is deleted destroys the machine
//! and removes the finalizer.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubegen_api::cloudnative::v1alpha1::{
    VirtualMachine, VirtualMachinePhase, VirtualMachineStatus,
};
use kubegen_client::{Client, UpdateOptions};
use kubegen_clientset::cloudnative::v1alpha1::CloudnativeV1alpha1Client;
use kubegen_runtime::finalizer::{self, Event, finalizer};
use kubegen_runtime::{Action, Context, Reconciler, conditions};

use super::hypervisor::{Hypervisor, MachineState};

/// The finalizer that keeps a deleted VirtualMachine until its machine is destroyed.
pub const FINALIZER: &str = "cloudnative.example.com/machine";

/// Why a reconcile failed; the runtime retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// Adding or removing the finalizer, or the reconcile under it, failed.
    #[error("reconciling VirtualMachine {key} failed")]
    Finalizer {
        /// The VirtualMachine.
        key: String,
        /// What failed.
        #[source]
        source: Box<finalizer::Error<VmError>>,
    },
    /// Writing the status failed.
    #[error("writing the status of VirtualMachine {key} failed")]
    StatusWriteFailed {
        /// The VirtualMachine.
        key: String,
        /// The server's answer.
        #[source]
        source: kubegen_client::Error,
    },
}

/// The vm-controller's business logic.
pub struct VmReconciler {
    client: Client,
    vms: CloudnativeV1alpha1Client,
    hypervisor: Hypervisor,
}

impl VmReconciler {
    /// A reconciler writing through `client` and running machines on `hypervisor`.
    pub fn new(client: Client, hypervisor: Hypervisor) -> VmReconciler {
        let vms = kubegen_clientset::Clientset::new(client.clone()).cloudnative_v1alpha1();
        VmReconciler {
            client,
            vms,
            hypervisor,
        }
    }

    /// The simulated hypervisor.
    pub fn hypervisor(&self) -> &Hypervisor {
        &self.hypervisor
    }
}

impl Reconciler<VirtualMachine> for VmReconciler {
    type Error = VmError;

    async fn reconcile(
        &self,
        vm: Arc<VirtualMachine>,
        context: &Context,
    ) -> Result<Action, VmError> {
        let key = context.key().as_str();
        finalizer(&self.client, FINALIZER, vm, |event| async move {
            match event {
                Event::Apply(vm) => self.apply(&vm, key).await,
                Event::Cleanup(_) => {
                    self.hypervisor.destroy_machine(key);
                    tracing::info!(vm = key, "machine destroyed; releasing the object");
                    Ok(Action::Done)
                }
            }
        })
        .await
        .map_err(|source| VmError::Finalizer {
            key: key.to_owned(),
            source: Box::new(source),
        })
    }
}

impl VmReconciler {
    /// Runs the machine `vm` asks for and reports it in the status; while it boots, asks to be
    /// called again when it should be up.
    async fn apply(&self, vm: &VirtualMachine, key: &str) -> Result<Action, VmError> {
        let memory = &vm.spec.memory.0;
        let state = self.hypervisor.ensure_machine(key, vm.spec.cpu, memory);
        self.write_status(vm, key, &state).await?;
        Ok(match state {
            MachineState::Booting { ready_in } => Action::RequeueAfter(ready_in),
            MachineState::Running { .. } => Action::Done,
        })
    }

    /// Writes the status `state` calls for, unless the object has it already.
    async fn write_status(
        &self,
        vm: &VirtualMachine,
        key: &str,
        state: &MachineState,
    ) -> Result<(), VmError> {
        let current = vm.status.clone().unwrap_or_default();
        let wanted = status_for(
            &current,
            vm.metadata.generation,
            state,
            jiff::Timestamp::now(),
        );
        if wanted == current {
            return Ok(());
        }
        tracing::info!(vm = key, phase = ?wanted.phase, ip = ?wanted.ip, "writing status");
        let mut updated = vm.clone();
        updated.status = Some(wanted);
        self.vms
            .virtual_machines(vm.metadata.namespace.as_deref().unwrap_or_default())
            .update_status(&updated, &UpdateOptions::default())
            .await
            .map_err(|source| VmError::StatusWriteFailed {
                key: key.to_owned(),
                source,
            })?;
        Ok(())
    }
}

/// The status a machine in `state` calls for, keeping `current`'s start time and condition
/// transition times where nothing changed.
fn status_for(
    current: &VirtualMachineStatus,
    generation: Option<i64>,
    state: &MachineState,
    now: jiff::Timestamp,
) -> VirtualMachineStatus {
    let (phase, ip, ready, reason, message) = match state {
        MachineState::Booting { .. } => (
            VirtualMachinePhase::Pending,
            None,
            false,
            "Booting",
            "the hypervisor is booting the machine".to_owned(),
        ),
        MachineState::Running { ip } => (
            VirtualMachinePhase::Running,
            Some(ip.clone()),
            true,
            "Running",
            format!("running at {ip}"),
        ),
    };
    let started_at = match phase {
        VirtualMachinePhase::Running => current.started_at.clone().or(Some(Time(now))),
        _ => None,
    };
    let mut conditions = current.conditions.clone();
    let ready = conditions::condition("Ready", ready, reason, &message, generation, &Time(now));
    conditions::set_condition(&mut conditions, ready);
    VirtualMachineStatus {
        phase: Some(phase),
        ip,
        started_at,
        conditions,
        observed_generation: generation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(seconds).unwrap()
    }

    fn running() -> MachineState {
        MachineState::Running {
            ip: "10.0.0.2".to_owned(),
        }
    }

    #[test]
    fn booting_is_pending_and_not_ready() {
        let booting = MachineState::Booting {
            ready_in: std::time::Duration::from_secs(1),
        };
        let status = status_for(&VirtualMachineStatus::default(), Some(1), &booting, at(10));
        assert_eq!(status.phase, Some(VirtualMachinePhase::Pending));
        assert_eq!((status.ip, status.started_at), (None, None));
        let ready = &status.conditions[0];
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "Booting")
        );
        assert_eq!(ready.last_transition_time, Time(at(10)));
    }

    #[test]
    fn the_transition_time_and_start_time_change_only_when_the_state_does() {
        let booting = MachineState::Booting {
            ready_in: std::time::Duration::from_secs(1),
        };
        let pending = status_for(&VirtualMachineStatus::default(), Some(1), &booting, at(10));
        let up = status_for(&pending, Some(1), &running(), at(20));
        assert_eq!(up.phase, Some(VirtualMachinePhase::Running));
        assert_eq!(up.started_at, Some(Time(at(20))));
        assert_eq!(up.conditions[0].last_transition_time, Time(at(20)));
        assert_eq!(up.conditions.len(), 1, "one Ready condition, replaced");

        let later = status_for(&up, Some(2), &running(), at(30));
        assert_eq!(later.started_at, Some(Time(at(20))));
        assert_eq!(later.conditions[0].last_transition_time, Time(at(20)));
        assert_eq!(later.observed_generation, Some(2));
        assert_eq!(later.conditions[0].observed_generation, Some(2));
    }
}
