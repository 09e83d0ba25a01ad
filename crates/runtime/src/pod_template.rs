//! Where each kind that runs containers keeps its pod spec: one trait over Pod and the seven
//! workload kinds, so a controller or admission webhook that judges containers (images,
//! resources, security settings) is written once for all of them. image-police's policy judges
//! the images of every kind that creates Pods with it, so a forbidden image cannot reach a node
//! through a ReplicaSet, a Job or a bare Pod either.
//!
//! client-go has no such interface (each controller switches on the kind); kube-rs leaves it to
//! the user. It lives in the runtime because an operator needs it in production, in its
//! reconciles and webhooks.

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec, StatefulSet,
    StatefulSetSpec,
};
use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec};
use k8s_openapi::api::core::v1::{Pod, PodSpec, PodTemplateSpec};

/// A kind with a pod spec (its own, or its pod template's).
pub trait PodTemplate {
    /// The pod spec, if the object has one.
    fn pod_spec(&self) -> Option<&PodSpec>;
}

/// A field that is `Option<T>` in the Kubernetes versions where the API said it was optional
/// and `T` in the newer ones that made it required (k8s-openapi follows each version's OpenAPI:
/// `spec` of the workload kinds, for one). A library compiles against whichever version the
/// application picks, so it reads such fields through this, never as one or the other.
trait Present<T> {
    fn present(&self) -> Option<&T>;
}

impl<T> Present<T> for Option<T> {
    fn present(&self) -> Option<&T> {
        self.as_ref()
    }
}

/// The types that are a required field's own type in some version.
macro_rules! required_somewhere {
    ($($ty:ty),*) => {$(
        impl Present<$ty> for $ty {
            fn present(&self) -> Option<&$ty> {
                Some(self)
            }
        }
    )*};
}

required_somewhere!(
    PodSpec,
    PodTemplateSpec,
    ReplicaSetSpec,
    DeploymentSpec,
    StatefulSetSpec,
    DaemonSetSpec,
    JobSpec,
    JobTemplateSpec,
    CronJobSpec
);

impl PodTemplate for Pod {
    fn pod_spec(&self) -> Option<&PodSpec> {
        self.spec.present()
    }
}

impl PodTemplate for ReplicaSet {
    fn pod_spec(&self) -> Option<&PodSpec> {
        self.spec.present()?.template.present()?.spec.present()
    }
}

impl PodTemplate for CronJob {
    fn pod_spec(&self) -> Option<&PodSpec> {
        self.spec
            .present()?
            .job_template
            .present()?
            .spec
            .present()?
            .template
            .present()?
            .spec
            .present()
    }
}

/// Kinds whose `spec.template` is a pod template.
macro_rules! template_kinds {
    ($($kind:ty),*) => {$(
        impl PodTemplate for $kind {
            fn pod_spec(&self) -> Option<&PodSpec> {
                self.spec.present()?.template.present()?.spec.present()
            }
        }
    )*};
}

template_kinds!(Deployment, StatefulSet, DaemonSet, Job);
