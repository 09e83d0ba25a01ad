//! `network-controller`: an informer and nothing else, the teaching companion of
//! [docs/informer-internals.md](../../../docs/informer-internals.md).
//!
//! It watches `Network` objects (`samplecrd.example.com/v1`, the CRD of the classic
//! sample-controller walk-through) and, for every add, update and delete, prints the object's trip
//! through the informer: the reflector's WATCH event, the delta queued in the DeltaFIFO, the
//! process loop popping it into the indexer, and the handler call. The first three lines come
//! from the cache crate's own `tracing` events ([`trace`]), so what you read is what the code did.
//!
//! ```text
//! [reflector] default/example-net   WATCH Added rv 812
//! [DeltaFIFO] default/example-net   queued Added
//! [indexer  ] default/example-net   popped, cache applies Added
//! [handler  ] default/example-net   on_add cidr 10.0.0.0/24, gateway 10.0.0.1
//! ```
//!
//! There is no work queue and no reconcile: a handler that enqueues keys is what
//! `cluster-provisioner` adds on top.

pub mod trace;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_api::samplecrd::v1::{Network, NetworkSpec};
use kubegen_cache::{DeletedObject, EventHandler, FactoryOptions, ObjectKey};
use kubegen_client::{Client, DeleteOptions, GetOptions, ResourceClient, UpdateOptions};
use kubegen_informers::SharedInformerFactory;

use self::trace::{PipelineTrace, Stage, Step};

/// How long the informer may take to list at start.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the tour waits for each change to reach the handler.
const TOUR_STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `Network` informer whose handler records each notification in a
/// [`PipelineTrace`].
pub struct NetworkController {
    factory: SharedInformerFactory,
}

impl NetworkController {
    /// Starts the informer (in `namespace`, or all namespaces) and returns once its cache has
    /// synced.
    ///
    /// # Errors
    /// The handler could not be added, or the cache did not sync within 30 s.
    pub async fn start(
        client: Client,
        namespace: Option<String>,
        trace: PipelineTrace,
    ) -> anyhow::Result<NetworkController> {
        let options = FactoryOptions::default().namespace(namespace);
        let factory = SharedInformerFactory::new(client, options);
        let networks = factory.samplecrd_v1().networks().informer();
        trace.follow(networks.name());
        networks.add_event_handler(TracingHandler { trace })?;
        factory.start();
        factory.wait_for_cache_sync(SYNC_TIMEOUT).await?;
        tracing::info!(networks = networks.indexer().len(), "cache synced");
        Ok(NetworkController { factory })
    }

    /// Stops the informer and waits for its tasks.
    pub async fn shutdown(self) {
        self.factory.shutdown().await;
    }
}

/// Records every notification as the last [`Stage::Handler`] step of the object's trip.
struct TracingHandler {
    trace: PipelineTrace,
}

impl TracingHandler {
    fn record(&self, network: &Network, what: String) {
        self.trace.record(Step {
            stage: Stage::Handler,
            key: Some(ObjectKey::of(network).to_string()),
            what,
        });
    }
}

fn describe(network: &Network) -> String {
    let spec = &network.spec;
    format!("cidr {}, gateway {}", spec.cidr, spec.gateway)
}

impl EventHandler<Network> for TracingHandler {
    fn on_add(&self, network: &Arc<Network>, is_in_initial_list: bool) {
        let initial = if is_in_initial_list {
            " (from the initial LIST)"
        } else {
            ""
        };
        self.record(network, format!("on_add {}{initial}", describe(network)));
    }

    fn on_update(&self, old: &Arc<Network>, new: &Arc<Network>) {
        let what = format!("on_update {} -> {}", describe(old), describe(new));
        self.record(new, what);
    }

    fn on_delete(&self, gone: &DeletedObject<Network>) {
        match gone {
            DeletedObject::Known(network) => {
                self.record(network, format!("on_delete {}", describe(network)));
            }
            DeletedObject::Tombstone { last_known, .. } => {
                let what = format!(
                    "on_delete (tombstone: deleted while not watching) last known {}",
                    describe(last_known)
                );
                self.record(last_known, what);
            }
        }
    }
}

/// A sample `Network` `namespace/name`.
pub fn sample(namespace: &str, name: &str) -> Network {
    Network {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        spec: NetworkSpec {
            cidr: "10.0.0.0/24".to_owned(),
            gateway: "10.0.0.1".to_owned(),
            mtu: None,
        },
    }
}

/// Creates Network `namespace/name`, changes its gateway, then deletes it, each time waiting
/// until the handler was told: one add, one update and one delete trip, in order.
///
/// # Errors
/// A write failed, or a change did not reach the handler within 30 s.
pub async fn tour(
    client: &Client,
    trace: &PipelineTrace,
    namespace: &str,
    name: &str,
) -> anyhow::Result<()> {
    let networks = ResourceClient::<Network>::namespaced(client.clone(), namespace);
    let key = format!("{namespace}/{name}");
    let handled = |calls| trace.wait_handler_calls(&key, calls, TOUR_STEP_TIMEOUT);
    let already = trace
        .steps_of(&key)
        .iter()
        .filter(|s| s.stage == Stage::Handler)
        .count();

    println!("== tour: create Network {key}");
    networks
        .create(&sample(namespace, name), &Default::default())
        .await?;
    handled(already + 1).await.map_err(anyhow::Error::msg)?;

    println!("== tour: change its gateway");
    let mut network = networks.get(name, &GetOptions::default()).await?;
    network.spec.gateway = "10.0.0.254".to_owned();
    networks.update(&network, &UpdateOptions::default()).await?;
    handled(already + 2).await.map_err(anyhow::Error::msg)?;

    println!("== tour: delete it");
    networks.delete(name, &DeleteOptions::default()).await?;
    handled(already + 3).await.map_err(anyhow::Error::msg)?;
    println!("== tour done");
    Ok(())
}
