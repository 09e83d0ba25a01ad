//! Admission: the plugins every write passes after authorization and before storage, run in
//! kube-apiserver's order: every mutating plugin ([`Plugin::admit`]), then every validating one
//! ([`Plugin::validate`]) (apiserver `pkg/admission`, `admission.chainAdmissionHandler`). A
//! plugin answers for one write: a create (with the new object), an update (new and old
//! object) or a delete (the object being deleted).
//!
//! Plugins, in order:
//! - [`namespace_lifecycle`]: NamespaceLifecycle — namespaced content needs an existing
//!   namespace, a terminating namespace takes no new content, the system namespaces cannot be
//!   deleted.
//!
//! - [`node_taint`]: TaintNodesByCondition — a new Node gets the
//!   `node.kubernetes.io/not-ready:NoSchedule` taint, lifted by the node-lifecycle controller.
//!
//! - [`policy`]: MutatingAdmissionPolicy and ValidatingAdmissionPolicy, CEL over stored
//!   policies, each run just before the webhooks of its phase (as kube-apiserver orders its
//!   plugins: MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy,
//!   ValidatingAdmissionWebhook); they ride with the webhooks' [`webhook::Webhooks`].
//!
//! - [`webhook`]: MutatingAdmissionWebhook and ValidatingAdmissionWebhook, the last step of each
//!   phase as on a real server; `async` (they call out over HTTPS), so the write handlers run
//!   them apart from the synchronous chain, outside the storage lock.

pub(crate) mod namespace_lifecycle;
pub(crate) mod node_taint;
pub(crate) mod plugin;
pub(crate) mod policy;
pub(crate) mod webhook;

use serde_json::{Map, Value};

pub(crate) use plugin::{Attributes, Operation, Plugin};

use crate::status::ApiError;

/// The enabled plugins, in kube-apiserver's order.
const PLUGINS: &[&dyn Plugin] = &[
    &namespace_lifecycle::NamespaceLifecycle,
    &node_taint::TaintNodesByCondition,
];

/// Runs the mutating phase of every plugin, in order; the first rejection wins.
///
/// # Errors
/// The rejecting plugin's `Status`.
pub(crate) fn admit(
    attributes: &Attributes<'_>,
    mut object: Option<&mut Map<String, Value>>,
) -> Result<(), ApiError> {
    for plugin in PLUGINS {
        plugin.admit(attributes, object.as_deref_mut())?;
    }
    Ok(())
}

/// Runs the validating phase of every plugin, in order; the first rejection wins.
///
/// # Errors
/// The rejecting plugin's `Status`.
pub(crate) fn validate(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<(), ApiError> {
    for plugin in PLUGINS {
        plugin.validate(attributes, object)?;
    }
    Ok(())
}
