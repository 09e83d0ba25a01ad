//! The binary's main loop, as library functions so the e2e tests run exactly what `image-police`
//! runs. The counterpart of sample-controller's `main.go`: flags in, a [`kubegen_runtime::Manager`]
//! out; the manager does the rest (endpoints, cache sync, leader election, workers, drain).
//!
//! # Order of events
//! 1. Build the client from the configuration (`--kubeconfig`, `--context`, `--master`; in a pod the
//!    service account).
//! 2. [`manager`]: one manager (one informer factory, one metrics registry with
//!    `image_police_*` next to controller-runtime's families), the WhiteList and Deployment
//!    informers, the controller's handlers and its reconciler. Nothing runs yet.
//!    The admission webhook ([`crate::webhook`]) is registered on the manager's webhook server.
//! 3. [`kubegen_runtime::Manager::run`]: serve `/healthz`, `/readyz` and `/metrics`, and the
//!    webhooks on `--webhook-port` (generating a certificate first with `--webhook-self-signed`); wait for
//!    the caches (`--cache-sync-timeout`), then `/readyz` turns ready; run the workers (with
//!    `--leader-elect` only while holding the Lease; losing it ends the process so it restarts
//!    as a fresh candidate, as client-go's controllers do). With `--sharding-ring` every
//!    replica runs at once on the namespaces the ring gives it (WhiteLists labelled with its
//!    shard), and the webhook judges from an unsharded WhiteList cache.
//! 4. On SIGTERM (or SIGINT): stop handing out keys, let in-flight reconciles finish
//!    (`--shutdown-timeout`), release the Lease, stop the informers.

use std::future::Future;
use std::sync::Arc;

use kubegen_api::police::v1beta1::WhiteList;
use kubegen_cache::FactoryOptions;
use kubegen_client::Client;
use kubegen_clientset::Clientset;
use kubegen_informers::SharedInformerFactory;
use kubegen_runtime::webhook::{CaBundleTarget, SelfSigned};
use kubegen_runtime::{Error, Manager};
use kubegen_sharding::RingKey;

use crate::controller::NAME;
use crate::flags::Flags;
use crate::metrics::PoliceMetrics;
use crate::namespaces::ProtectedNamespaces;
use crate::reconcile::{COMPONENT, Reconciler};
use crate::webhook::ImagePolicyWebhook;
use crate::writer::Writer;

/// The ServiceAccount image-police runs as (deploy/sa.yaml) and the namespace it lives in:
/// `--embedded` and the e2e suite hand the controller a token of it, so it has exactly the
/// permissions deploy/rbac.yaml grants.
pub const SERVICE_ACCOUNT: (&str, &str) = ("image-police", "image-police");

/// Runs image-police as the binary does until `shutdown` resolves (or leadership is lost).
///
/// # Errors
/// Any [`Error`] that stops the controller; `Ok(())` after a clean shutdown.
pub async fn run(
    flags: &Flags,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let client = flags.manager.client().await?;
    manager(flags, client)?.run(shutdown).await
}

/// The manager of image-police for `flags` over `client`: its controller, informers and
/// metrics registered, nothing started. [`Manager::run`] runs it.
///
/// # Errors
/// [`Error::InvalidFlag`] for contradicting leader election flags.
pub fn manager(flags: &Flags, client: Client) -> Result<Manager, Error> {
    let own_namespace = flags
        .own_namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let mut manager_flags = flags.manager.clone();
    if manager_flags.leader_elect_resource_namespace.is_none() {
        manager_flags.leader_elect_resource_namespace = Some(own_namespace.clone());
    }
    // managedFields are never read here and can be half of an object's size.
    let factory = FactoryOptions::default()
        .namespace(flags.namespace.clone())
        .transform(Arc::new(|meta| meta.managed_fields = None));
    // Sharded (`--sharding-ring`): a namespace is image-police's unit of work, so the ring
    // hashes namespaces and a namespace's WhiteLists all belong to one replica.
    let ring = manager_flags.ring(&client)?.map(|mut ring| {
        ring.namespace.clone_from(&flags.namespace);
        ring.key = RingKey::Namespace;
        ring
    });
    let mut options = manager_flags
        .options(&client, NAME)?
        .sharding::<WhiteList>(ring);
    if let Some(identity) = &flags.leader_elect_identity {
        options = options.identity(identity);
    }
    let webhook = manager_flags.webhook_options().map(|webhook| {
        webhook.self_signed(
            flags
                .webhook_self_signed
                .then(|| self_signed(flags, &own_namespace)),
        )
    });
    let options = options
        .webhook(webhook)
        .workers(usize::from(flags.workers))
        .cache_sync_timeout(flags.cache_sync_timeout)
        .shutdown_timeout(flags.shutdown_timeout)
        .factory(factory)
        .store_mode(manager_flags.cache_store.mode());
    let mut manager = Manager::new(client, options);
    let police_metrics = PoliceMetrics::default();
    police_metrics.register_in(manager.metrics());
    let informers = SharedInformerFactory::from(manager.factory().clone());
    let (whitelists, deployments) = (
        informers.police_v1beta1().white_lists(),
        informers.apps_v1().deployments(),
    );
    let reconciler = Reconciler {
        whitelists: whitelists.lister(),
        deployments: deployments.lister(),
        writer: Writer::new(Clientset::new(manager.client().clone())),
        protected: ProtectedNamespaces::new(&own_namespace, flags.allow_protected_namespaces),
        events: manager.recorder(COMPONENT),
        metrics: police_metrics,
    };
    // Every replica answers admission requests for every namespace: with sharding, from a cache
    // of every shard's WhiteLists.
    let all_whitelists = SharedInformerFactory::from(manager.unsharded_factory().clone())
        .police_v1beta1()
        .white_lists();
    ImagePolicyWebhook {
        whitelists: all_whitelists.lister(),
        informer: all_whitelists.informer(),
        protected: ProtectedNamespaces::new(&own_namespace, flags.allow_protected_namespaces),
    }
    .register(manager.webhook_server());
    let builder = manager.controller(NAME, &whitelists.informer());
    let controller =
        crate::controller::build(builder, &whitelists.informer(), &deployments.informer())?;
    tracing::info!(
        namespace = flags.namespace.as_deref().unwrap_or("<all>"),
        own_namespace,
        "starting"
    );
    manager.add(controller, reconciler);
    Ok(manager)
}

/// The self-signed bootstrap of `--webhook-self-signed`: a certificate for the webhook Service
/// in `namespace` (and for loopback, where a developer's API server calls it by `url`), its CA
/// written into the `--webhook-configuration`.
fn self_signed(flags: &Flags, namespace: &str) -> SelfSigned {
    let service = &flags.webhook_service;
    SelfSigned {
        dns_names: vec![
            format!("{service}.{namespace}.svc"),
            format!("{service}.{namespace}.svc.cluster.local"),
            "localhost".to_owned(),
        ],
        ip_addresses: vec![std::net::IpAddr::from([127, 0, 0, 1])],
        targets: vec![CaBundleTarget::Validating(
            flags.webhook_configuration.clone(),
        )],
    }
}
