//! The `job` and `cronjob` controllers of kube-controller-manager (`pkg/controller/job`,
//! `pkg/controller/cronjob`): CronJob → Job → Pod. Each is started on its own
//! ([`job::start`], [`cronjob::start`]) over the manager's shared informers.
//!
//! # Why
//! A Job created on an API server alone never gets a Pod, so `kubectl wait
//! --for=condition=complete` never returns and an operator that runs Jobs cannot be tested.
//! With these controllers and simulated Nodes (`kubegen-nodesim`) a Job's Pods run, succeed or
//! fail, and the Job reaches `Complete` or `Failed` with the status and Events v1.36 writes.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `cronjob`, `job`

pub(crate) mod cronjob;
pub(crate) mod job;
