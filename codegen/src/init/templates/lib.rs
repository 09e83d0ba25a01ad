//! The {{name}}: makes the world match each {{kind}} and reports it in the {{kind}}'s status.
//!
//! [`manager`] wires it up (one informer per kind, shared through the manager's factory; one
//! controller; the reconciler); [`{{kind}}Reconciler`] holds the business logic. `main.rs` runs
//! the manager; `tests/{{kind_snake}}.rs` runs it against an API server inside the test.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubegen_runtime::conditions::{ConditionStatus, condition, set_condition};
use kubegen_runtime::{Action, Context, EventType, Manager, ManagerOptions, Reconciler, Recorder};

// The crates `kubegen` generates from apis/.
use {{prefix_ident}}_api::{{module}}::{{version}}::{{kind}};
use {{prefix_ident}}_clientset::Clientset;

/// The operator's name: its events' source, its leader-election lease, its metrics' prefix.
pub const NAME: &str = "{{name}}";

/// The manager running the {{kind}} controller over `client`, ready to `run`.
///
/// # Errors
/// The controller cannot be built (e.g. invalid options).
pub fn manager(
    client: kubegen_client::Client,
    options: ManagerOptions,
) -> Result<Manager, kubegen_runtime::Error> {
    let mut manager = Manager::new(client, options);
    // The typed facade over the manager's factory: every informer of this process is shared.
    let informers = {{prefix_ident}}_informers::SharedInformerFactory::from(manager.factory().clone());
    let {{accessor}} = informers.{{group_version}}().{{accessor}}();
    // Status writes bump no generation: reconcile only when the spec (or a label) changed.
    let controller = manager
        .controller("{{kind_snake}}", &{{accessor}}.informer())
        .generation_changes_only()
        .build()?;
    let reconciler = {{kind}}Reconciler {
        clientset: Clientset::new(manager.client().clone()),
        recorder: manager.recorder(NAME),
    };
    manager.add(controller, reconciler);
    Ok(manager)
}

/// Reconciles one {{kind}}: applies its spec, then sets `Ready` and `observedGeneration`.
pub struct {{kind}}Reconciler {
    clientset: Clientset,
    recorder: Recorder,
}

impl Reconciler<{{kind}}> for {{kind}}Reconciler {
    type Error = kubegen_client::Error;

    async fn reconcile(
        &self,
        object: Arc<{{kind}}>,
        _context: &Context,
    ) -> Result<Action, Self::Error> {
        // Your logic goes here: make the world match `object.spec` (create what it asks for).
        let generation = object.metadata.generation;
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let ready = condition(
            "Ready",
            ConditionStatus::True,
            "Reconciled",
            "the spec is applied",
            generation,
            &now,
        );
        let mut status = object.status.clone().unwrap_or_default();
        let condition_changed = set_condition(&mut status.conditions, ready);
        if !condition_changed && status.observed_generation == generation {
            // Writing an unchanged status would only cost an API call and a watch event.
            return Ok(Action::Done);
        }
        status.observed_generation = generation;
        let updated = {{kind}} {
            status: Some(status),
            ..(*object).clone()
        };
{{namespace_line}}        let client = self.clientset.{{group_version}}().{{accessor}}({{namespace_arg}});
        client
            .update_status(&updated, &kubegen_client::UpdateOptions::default())
            .await?;
        if condition_changed {
            let message = "the spec is applied";
            self.recorder
                .record(&*object, EventType::Normal, "Reconciled", message, &now)
                .await?;
        }
        Ok(Action::Done)
    }
}
