//! A simulated hypervisor for `vm-controller`: machines take a while to boot, get an address,
//! and must be destroyed explicitly, which is why the controller needs a finalizer (a deleted
//! VirtualMachine object must not leave a running machine behind).
//!
//! Time is tokio's, so unit tests run on virtual time.

use std::collections::BTreeMap;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// What the hypervisor says about one machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MachineState {
    /// Booting: ask again in `ready_in`.
    Booting {
        /// The remaining boot time.
        ready_in: Duration,
    },
    /// Running at `ip`.
    Running {
        /// The machine's address.
        ip: String,
    },
}

/// The simulated hypervisor, shared by the workers.
#[derive(Debug)]
pub struct Hypervisor {
    boot_time: Duration,
    machines: Mutex<Machines>,
}

#[derive(Debug, Default)]
struct Machines {
    /// By `namespace/name`. Invariant: every address is unique.
    by_key: BTreeMap<String, Machine>,
    /// The host part of the last address handed out (never reused).
    last_host: u32,
}

#[derive(Debug)]
struct Machine {
    created: Instant,
    ip: String,
}

impl Hypervisor {
    /// A hypervisor whose machines take `boot_time` to boot.
    pub fn new(boot_time: Duration) -> Hypervisor {
        Hypervisor {
            boot_time,
            machines: Mutex::default(),
        }
    }

    /// Creates machine `key` with `cpu` CPUs and `memory`, or reports how far its boot is: one
    /// idempotent call, as a controller makes on every reconcile. (The size is only logged: a
    /// resize is out of this simulation's scope.)
    pub fn ensure_machine(&self, key: &str, cpu: i32, memory: &str) -> MachineState {
        let mut machines = self.machines.lock();
        let Machines { by_key, last_host } = &mut *machines;
        let machine = by_key.entry(key.to_owned()).or_insert_with(|| {
            tracing::info!(machine = key, cpu, memory, "hypervisor: creating machine");
            *last_host += 1;
            let host = *last_host + 1;
            Machine {
                created: Instant::now(),
                ip: format!(
                    "10.{}.{}.{}",
                    host >> 16 & 0xff,
                    host >> 8 & 0xff,
                    host & 0xff
                ),
            }
        });
        let ready_at = machine.created + self.boot_time;
        let now = Instant::now();
        if now < ready_at {
            MachineState::Booting {
                ready_in: ready_at - now,
            }
        } else {
            MachineState::Running {
                ip: machine.ip.clone(),
            }
        }
    }

    /// Destroys machine `key`; returns whether it existed.
    pub fn destroy_machine(&self, key: &str) -> bool {
        self.machines.lock().by_key.remove(key).is_some()
    }

    /// The keys of the existing machines, sorted.
    pub fn machines(&self) -> Vec<String> {
        self.machines.lock().by_key.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_machine_boots_for_the_boot_time_then_runs_at_its_address() {
        let hypervisor = Hypervisor::new(Duration::from_secs(3));
        let booting = |secs| MachineState::Booting {
            ready_in: Duration::from_secs(secs),
        };
        assert_eq!(hypervisor.ensure_machine("ns/a", 2, "4Gi"), booting(3));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(hypervisor.ensure_machine("ns/a", 2, "4Gi"), booting(2));
        tokio::time::advance(Duration::from_secs(2)).await;
        let running = MachineState::Running {
            ip: "10.0.0.2".to_owned(),
        };
        assert_eq!(hypervisor.ensure_machine("ns/a", 2, "4Gi"), running);
    }

    #[tokio::test(start_paused = true)]
    async fn destroy_removes_only_that_machine() {
        let hypervisor = Hypervisor::new(Duration::ZERO);
        hypervisor.ensure_machine("ns/a", 1, "1Gi");
        hypervisor.ensure_machine("ns/b", 1, "1Gi");
        assert!(hypervisor.destroy_machine("ns/a"));
        assert!(!hypervisor.destroy_machine("ns/a"));
        assert_eq!(hypervisor.machines(), vec!["ns/b".to_owned()]);
        let again = hypervisor.ensure_machine("ns/a", 1, "1Gi");
        let new_address = MachineState::Running {
            ip: "10.0.0.4".to_owned(),
        };
        assert_eq!(again, new_address, "addresses are not reused");
    }
}
