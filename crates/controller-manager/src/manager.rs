//! [`ControllerManager`]: starts the chosen controllers over one shared informer factory and
//! stops them together. Mirrors `cmd/kube-controller-manager/app/controllermanager.go`
//! (`StartControllers`, then `InformerFactory.Start` once every controller has asked for its
//! informers).

use std::{future::Future, time::Duration};

use kubegen_cache::{ClientListWatchSource, FactoryOptions, InformerFactory};
use kubegen_client::Client;
use tokio::{sync::watch, task::JoinSet};

use crate::context::{Context, Runner};
use crate::options::{Controller, ControllerManagerOptions};
use crate::{
    Error, Result, admissionpolicy, endpointslice, garbagecollector, namespace, serviceaccount,
};

/// How long [`ControllerManager::run`] waits for the shared informers' first lists.
const CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// kube-controller-manager's controllers, in process, against the API server of one client.
///
/// ```no_run
/// # async fn demo(client: kubegen_client::Client) -> kubegen_controller_manager::Result<()> {
/// use kubegen_controller_manager::{Controller, ControllerManager, ControllerManagerOptions};
/// let options = ControllerManagerOptions::default().without(Controller::GarbageCollector);
/// ControllerManager::new(client, options)
///     .run(async { let _ = tokio::signal::ctrl_c().await; })
///     .await
/// # }
/// ```
pub struct ControllerManager {
    client: Client,
    options: ControllerManagerOptions,
}

impl ControllerManager {
    /// A manager that will run `options`' controllers with `client` (which needs the rights of
    /// kube-controller-manager: an administrator's client is simplest).
    pub fn new(client: Client, options: ControllerManagerOptions) -> Self {
        ControllerManager { client, options }
    }

    /// Runs the controllers until `shutdown` completes, then stops them and waits for in-flight
    /// syncs.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] when the shared informers cannot list within a minute. Sync
    /// errors are not returned: each is logged and retried with backoff, as the real
    /// controllers do.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        let (stop_tx, stop) = watch::channel(false);
        let factory = InformerFactory::new(
            ClientListWatchSource::new(self.client.clone()),
            FactoryOptions::default(),
        );
        let context = Context {
            client: self.client.clone(),
            factory,
            options: self.options.clone(),
            stop,
        };
        let runners = self.build(&context);
        context.factory.start();
        if let Err(e) = context
            .factory
            .wait_for_cache_sync(CACHE_SYNC_TIMEOUT)
            .await
        {
            context.factory.shutdown().await;
            return Err(Error::CacheSyncFailed(e));
        }
        let mut tasks = JoinSet::new();
        for runner in runners {
            tasks.spawn(runner);
        }
        shutdown.await;
        stop_tx.send_replace(true);
        while tasks.join_next().await.is_some() {}
        context.factory.shutdown().await;
        Ok(())
    }

    /// Registers each chosen controller's informers and handlers; returns their runners.
    fn build(&self, context: &Context) -> Vec<Runner> {
        let mut runners = Vec::new();
        if self.options.runs(Controller::Namespace) {
            runners.push(namespace::start(context));
        }
        if self.options.runs(Controller::GarbageCollector) {
            runners.push(garbagecollector::start(context));
        }
        if self.options.runs(Controller::ServiceAccount) {
            runners.push(serviceaccount::start_accounts(context));
        }
        if self.options.runs(Controller::ServiceAccountToken) {
            runners.push(serviceaccount::start_tokens(context));
        }
        if self.options.runs(Controller::Deployment) || self.options.runs(Controller::ReplicaSet) {
            let options = crate::apps::AppsOptions {
                deployment_workers: self.options.workers_or(5),
                replicaset_workers: self.options.workers_or(5),
            };
            runners.push(crate::apps::start(context, options));
        }
        if self.options.runs(Controller::StatefulSet) {
            let workers = self.options.workers_or(5);
            runners.push(crate::apps::statefulset::start(context, workers));
        }
        if self.options.runs(Controller::DaemonSet) {
            let workers = self.options.workers_or(2);
            runners.push(crate::apps::daemonset::start(context, workers));
        }
        if self.options.runs(Controller::Job) {
            let workers = self.options.workers_or(5);
            runners.push(crate::batch::job::start(context, workers));
        }
        if self.options.runs(Controller::CronJob) {
            let workers = self.options.workers_or(5);
            runners.push(crate::batch::cronjob::start(
                context,
                workers,
                self.options.clock.clone(),
            ));
        }
        if self.options.runs(Controller::EndpointSlice) {
            runners.push(endpointslice::start(context));
        }
        if self
            .options
            .runs(Controller::ValidatingAdmissionPolicyStatus)
        {
            runners.push(admissionpolicy::start(context));
        }
        if self.options.runs(Controller::NodeLifecycle) {
            runners.push(crate::nodelifecycle::start(context));
        }
        if self.options.runs(Controller::TaintEviction) {
            runners.push(crate::tainteviction::start(context));
        }
        if self.options.runs(Controller::RootCaCertificatePublisher)
            && let Some(pem) = &self.options.root_ca_pem
        {
            runners.push(serviceaccount::start_root_ca(context, pem.clone()));
        }
        runners
    }
}
