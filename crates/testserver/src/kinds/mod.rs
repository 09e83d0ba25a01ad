//! Per-kind strategies: what a kind does differently from the generic verbs, in one place per
//! kind, as kube-apiserver's REST storage gives each resource a strategy
//! (`pkg/registry/<group>/<kind>/strategy.go`: `PrepareForCreate`, `PrepareForUpdate`,
//! `Validate`, and the store hooks `AfterCreate`/`AfterUpdate`/`AfterDelete`, plus the extra REST
//! endpoints a kind installs beside its storage). The generic handlers ask
//! [`strategy_for`] (`lookup.rs`) instead of testing kind names.
//!
//! | kind | file | differs in |
//! |---|---|---|
//! | Namespace | [`namespace`] | defaults on create, the `finalize` subresource, deletion that only terminates (the namespace controller of `kubegen-controller-manager` empties it and calls `finalize`), removal only once `spec.finalizers` is empty too, no `deletecollection` |
//! | CustomResourceDefinition | [`crd`] | validation and status on create/update, serving its resource on write, removing it on delete |
//! | custom resources | `lookup.rs`, its rules in [`custom_resource`] | decoding (pruning, defaulting), validation and CEL by the CRD's schema on every write, in the version the request names; the versions a CRD serves and the conversion of requests and answers between them (strategy `None` or `Webhook`), managedFields per version; defaults of a new schema filled into stored objects |
//! | ConfigMap, Secret | [`config_data`] | at most 1 MiB of data |
//! | Pod, Service, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob | [`builtin_defaults`] | v1.36's defaults filled in when a write is decoded (and after a server-side apply's merge) |
//! | Pod | [`pod`] | `status: {phase: Pending, qosClass}` on create, the `Priority` and `DefaultTolerationSeconds` admission plugins' fields, the `binding` subresource (`crate::handlers::binding`), a `/status` write also changes metadata (`ownerReferences` excepted) |
//! | DaemonSet | [`daemon_set`] | the template generation annotation (`deprecated.daemonset.template.generation`) set on create, kept and raised on template changes |
//! | Job | [`job`] | the selector and labels generated from its uid on create (`manualSelector` false), its labels defaulted from its template's |
//! | Service | [`service`] | the cluster IP and node ports allocated on create and kept on update, as kube-apiserver's allocators do |
//! | ServiceAccount | `lookup.rs` | the `token` subresource (`crate::handlers::token`) |
//! | Deployment, ReplicaSet | `lookup.rs` | a `/status` write also changes metadata (a Deployment's labels excepted) |
//! | Node | `lookup.rs` | a `/status` write also changes metadata |
//! | Mutating/ValidatingWebhookConfiguration | [`webhook_configuration`] | defaults and the required fields on create/update |
//! | Validating/MutatingAdmissionPolicy | [`admission_policy`] | defaults, `status: {}` on create, and the checks of their spec |
//! | Validating/MutatingAdmissionPolicyBinding | [`policy_binding`] | defaulted `matchResources`, the checks of their spec |
//! | access and subject reviews | `lookup.rs` | answered, never stored (`crate::handlers::review`); `create` only |
//!
//! The generic deletion (finalizers, `deletionTimestamp`, the removal hooks) shared by `delete`,
//! `deletecollection`, updates removing the last finalizer and namespace termination is
//! [`deletion`]; the scopes a write is admitted and stored in, [`stages`].
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `deletion`, `stages`
//! - `lookup`
//! - `config_data`, `crd`, `daemon_set`, `job`, `namespace`, `pod`, `policy_binding`, `service`
//! - `admission_policy`
//! - `webhook_configuration`, `policy_types`
//! - `strategy`
//! - `custom_resource`
//! - `builtin_defaults`

pub(crate) mod admission_policy;
pub(crate) mod builtin_defaults;
pub(crate) mod config_data;
pub(crate) mod crd;
pub(crate) mod custom_resource;
pub(crate) mod daemon_set;
pub(crate) mod deletion;
pub(crate) mod job;
mod lookup;
pub(crate) mod namespace;
pub(crate) mod pod;
pub(crate) mod policy_binding;
mod policy_types;
mod service;
pub(crate) mod stages;
pub(crate) mod webhook_configuration;

pub(crate) mod strategy;

pub(crate) use lookup::strategy_for;
pub(crate) use stages::Stages;
pub(crate) use strategy::{Review, Strategy};
