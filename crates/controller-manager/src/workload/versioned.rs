//! Fields whose Rust type depends on the Kubernetes version k8s-openapi is built for.
//!
//! From 1.37 on, k8s-openapi makes `Deployment.spec`, `ReplicaSet.spec`, `StatefulSet.spec`, `DaemonSet.spec` (and from 1.36 `CronJob.spec`) and
//! `ControllerRevision.data` required (`T` where older versions have `Option<T>`),
//! `ControllerRevision.revision` optional, and the `type` and `status` of their conditions optional
//! (`Option<String>` where older versions have `String`). A library does not pick the version
//! (the application does), so the controllers read and write these fields through [`Field`],
//! which both shapes implement, and the same code compiles for every version.

use k8s_openapi::api::apps::v1::{DaemonSetSpec, DeploymentSpec, ReplicaSetSpec, StatefulSetSpec};
use k8s_openapi::api::batch::v1::CronJobSpec;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

/// A field of type `T` that may be stored as `T` or as `Option<T>`.
pub(crate) trait Field<T> {
    /// The value, if present.
    fn value(&self) -> Option<&T>;
    /// The value, set to `T::default()` first when absent.
    fn value_mut(&mut self) -> &mut T;
    /// The field holding `value`.
    fn of(value: T) -> Self;
}

impl<T: Default> Field<T> for Option<T> {
    fn value(&self) -> Option<&T> {
        self.as_ref()
    }

    fn value_mut(&mut self) -> &mut T {
        self.get_or_insert_with(T::default)
    }

    fn of(value: T) -> Self {
        Some(value)
    }
}

macro_rules! required {
    ($($t:ty),*) => {$(
        impl Field<$t> for $t {
            fn value(&self) -> Option<&$t> {
                Some(self)
            }

            fn value_mut(&mut self) -> &mut $t {
                self
            }

            fn of(value: $t) -> Self {
                value
            }
        }
    )*};
}

required!(
    String,
    i64,
    RawExtension,
    DeploymentSpec,
    ReplicaSetSpec,
    StatefulSetSpec,
    DaemonSetSpec,
    CronJobSpec
);

/// The text of a string field; empty when absent.
pub(crate) fn text(field: &impl Field<String>) -> &str {
    field.value().map_or("", String::as_str)
}

/// A string field holding `s`.
pub(crate) fn string<F: Field<String>>(s: &str) -> F {
    F::of(s.to_owned())
}
