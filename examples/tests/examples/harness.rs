//! Where a scenario runs: a fresh kubegen-testserver, or the cluster of
//! `KUBEGEN_E2E_KUBECONFIG`, reached through the examples' own [`Target`] (so the tests install
//! the CRDs exactly as the binaries do), plus a namespace of the scenario's own.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{Client, DeleteOptions, ResourceClient};
use kubegen_e2e_support::kubeconfig_path;
use kubegen_examples::target::{Target, TargetFlags, create_if_absent, unique_suffix};

/// Runs `$scenario(env)` on the test server as `$testserver`, and on the cluster of
/// `KUBEGEN_E2E_KUBECONFIG` as the ignored `$cluster`.
macro_rules! on_both_targets {
    ($scenario:ident, $testserver:ident, $cluster:ident) => {
        #[tokio::test(flavor = "current_thread")]
        async fn $testserver() {
            $scenario(crate::harness::Env::testserver().await).await;
        }

        #[tokio::test(flavor = "current_thread")]
        #[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
        async fn $cluster() {
            $scenario(crate::harness::Env::cluster().await).await;
        }
    };
}
pub(crate) use on_both_targets;

/// A connected target with the CRDs installed.
pub struct Env {
    target: Target,
}

impl Env {
    /// A fresh in-process test server.
    pub async fn testserver() -> Env {
        let flags = TargetFlags {
            embedded: true,
            kubeconfig: None,
            no_install_crds: false,
        };
        Env::connect(&flags).await
    }

    /// The cluster of `KUBEGEN_E2E_KUBECONFIG`.
    pub async fn cluster() -> Env {
        let flags = TargetFlags {
            embedded: false,
            kubeconfig: Some(kubeconfig_path()),
            no_install_crds: false,
        };
        Env::connect(&flags).await
    }

    async fn connect(flags: &TargetFlags) -> Env {
        let target = Target::connect(flags)
            .await
            .unwrap_or_else(|e| panic!("connecting: {e:#}"));
        Env { target }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        self.target.client()
    }

    /// Creates a namespace unique to this run of `scenario`.
    pub async fn namespace(&self, scenario: &str) -> String {
        let name = format!("examples-{scenario}-{}", unique_suffix());
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        create_if_absent(self.client(), &namespace)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
        name
    }

    /// Deletes `namespace` (best effort: on a cluster without a controller-manager it stays
    /// Terminating, which is harmless).
    pub async fn cleanup(&self, namespace: &str) {
        let namespaces = ResourceClient::<Namespace>::cluster(self.client().clone());
        let _ = namespaces
            .delete(namespace, &DeleteOptions::default())
            .await;
    }
}

pub use kubegen_e2e_support::poll;
