//! `serviceaccount-controller`: a `default` ServiceAccount in every active namespace, created
//! again when deleted. Mirrors `pkg/controller/serviceaccount/serviceaccounts_controller.go`
//! (a queue of namespace names fed by Namespace adds/updates and ServiceAccount deletions).
//!
//! The token controller (`tokens.rs`) and the root-CA publisher (`rootca.rs`) live beside it,
//! as in kube-controller-manager's `pkg/controller/serviceaccount` and
//! `pkg/controller/certificates/rootcacertpublisher`.

mod active;
mod rootca;
mod tokens;

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::{HandlerFns, Lister};
use kubegen_client::{Client, CreateOptions, ResourceClient};

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::worker::{self, Next};

use active::active;

pub(crate) use rootca::start as start_root_ca;
pub(crate) use tokens::start as start_tokens;

/// The ServiceAccounts every namespace gets (`--service-account-names`... the real default).
const MANAGED: &str = "default";

/// Registers the handlers; the runner works the namespace queue until the manager stops.
pub(crate) fn start_accounts(context: &Context) -> Runner {
    let namespaces = context.factory.informer::<Namespace>();
    let accounts = context.factory.informer::<ServiceAccount>();
    let queue = worker::queue::<String>("serviceaccount");
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    let _ = namespaces.add_event_handler(
        HandlerFns::new()
            .on_add(move |ns: &Arc<Namespace>, _| {
                on_add.add(ns.metadata.name.clone().unwrap_or_default())
            })
            .on_update(move |_, ns: &Arc<Namespace>| {
                on_update.add(ns.metadata.name.clone().unwrap_or_default());
            }),
    );
    let _ = accounts.add_event_handler(HandlerFns::new().on_delete(
        move |deleted: &kubegen_cache::DeletedObject<ServiceAccount>| {
            let account = deleted.object();
            if account.metadata.name.as_deref() == Some(MANAGED) {
                on_delete.add(account.metadata.namespace.clone().unwrap_or_default());
            }
        },
    ));
    let (namespaces, accounts) = (namespaces.lister(), accounts.lister());
    let client = context.client.clone();
    let workers = context.options.workers_or(1);
    let stop = context.stop.clone();
    Box::pin(async move {
        let sync = move |name: String| {
            let (client, namespaces, accounts) =
                (client.clone(), namespaces.clone(), accounts.clone());
            async move { sync(&client, &namespaces, &accounts, &name).await }
        };
        let workers = worker::spawn(queue, workers, worker::Retries::Forever, sync);
        stopped(stop).await;
        workers.stop().await;
    })
}

/// Creates `default` in namespace `name` when it is active and lacks it (`syncNamespace`).
async fn sync(
    client: &Client,
    namespaces: &Lister<Namespace>,
    accounts: &Lister<ServiceAccount>,
    name: &str,
) -> Result<Next> {
    let Some(namespace) = namespaces.get(None, name) else {
        return Ok(Next::Done);
    };
    if !active(&namespace) || accounts.get(Some(name), MANAGED).is_some() {
        return Ok(Next::Done);
    }
    let account = ServiceAccount {
        metadata: ObjectMeta {
            name: Some(MANAGED.into()),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    let api = ResourceClient::<ServiceAccount>::namespaced(client.clone(), name);
    match api.create(&account, &CreateOptions::default()).await {
        Ok(_) => Ok(Next::Done),
        // Exists already (the cache lags), or the namespace started terminating meanwhile.
        Err(e) if e.is_already_exists() || e.is_forbidden() || e.is_not_found() => Ok(Next::Done),
        Err(e) => Err(request(format!("create serviceaccount {name}/{MANAGED}"))(
            e,
        )),
    }
}
