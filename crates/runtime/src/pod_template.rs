//! Where each kind that runs containers keeps its pod spec: one trait over Pod and the seven
//! workload kinds, so a controller or admission webhook that judges containers (images,
//! resources, security settings) is written once for all of them. image-police's policy judges
//! the images of every kind that creates Pods with it, so a forbidden image cannot reach a node
//! through a ReplicaSet, a Job or a bare Pod either.
//!
//! client-go has no such interface (each controller switches on the kind); kube-rs leaves it to
//! the user. It lives in the runtime because an operator needs it in production, in its
//! reconciles and webhooks.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{Pod, PodSpec};

/// A kind with a pod spec (its own, or its pod template's).
pub trait PodTemplate {
    /// The pod spec, if the object has one.
    fn pod_spec(&self) -> Option<&PodSpec>;
}

impl PodTemplate for Pod {
    fn pod_spec(&self) -> Option<&PodSpec> {
        self.spec.as_ref()
    }
}

impl PodTemplate for ReplicaSet {
    fn pod_spec(&self) -> Option<&PodSpec> {
        self.spec.as_ref()?.template.as_ref()?.spec.as_ref()
    }
}

impl PodTemplate for CronJob {
    fn pod_spec(&self) -> Option<&PodSpec> {
        self.spec
            .as_ref()?
            .job_template
            .spec
            .as_ref()?
            .template
            .spec
            .as_ref()
    }
}

/// Kinds whose `spec.template` is a pod template.
macro_rules! template_kinds {
    ($($kind:ty),*) => {$(
        impl PodTemplate for $kind {
            fn pod_spec(&self) -> Option<&PodSpec> {
                self.spec.as_ref()?.template.spec.as_ref()
            }
        }
    )*};
}

template_kinds!(Deployment, StatefulSet, DaemonSet, Job);
