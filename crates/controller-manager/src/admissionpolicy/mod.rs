//! `validatingadmissionpolicy-status-controller`: type-checks each ValidatingAdmissionPolicy's
//! expressions against the kinds it matches and writes the result to
//! `status.typeChecking.expressionWarnings`, with `status.observedGeneration`. Mirrors
//! `pkg/controller/validatingadmissionpolicystatus/controller.go` (a queue of policy names fed by
//! adds and updates; a policy whose generation is already observed is skipped; the status is
//! server-side applied by the manager `validatingadmissionpolicy-status`, forced) and the type
//! checker of apiserver `pkg/admission/plugin/policy/validating/typechecking.go`.
//!
//! # Why
//! A policy's expressions are checked untyped when it is written (`object` is `dyn`), so a
//! misspelt field passes admission and the policy then fails at run time on every request. The
//! warnings are how a policy author finds out, and a test against the test server should see them
//! as it would on a cluster.
//!
//! # How the kinds are typed
//! Each exact resource of `spec.matchConstraints.resourceRules` is mapped to its kind through
//! discovery (asked again once when one is missing), and each kind's schema is read from the
//! server's own `/openapi/v3` document of its group version (`schemas.rs`): built-in kinds and
//! custom resources alike. A kind without a schema is left out, as v1.36 leaves it out.
//!
//! # Served from 1.30
//! `admissionregistration.k8s.io/v1` policies are served from Kubernetes 1.30; on an older
//! server the controller finds the resource missing from discovery and does nothing.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `schemas`
//! - `typecheck`

mod schemas;
mod typecheck;

use std::sync::Arc;
use std::time::Duration;

use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kubegen_apiextensions::{PolicyScope, PolicyTypes, check_typed_policy_expression};
use kubegen_cache::{HandlerFns, Lister};
use kubegen_client::{ApplyOptions, Client, ListOptions, ResourceClient, RestMapper};
use serde_json::{Value, json};

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::served::served_informer;
use crate::worker::{self, Next};

use schemas::Schemas;
use typecheck::{Kind, Warning};

/// The field manager of the status, as v1.36's controller names itself.
const FIELD_MANAGER: &str = "validatingadmissionpolicy-status";

/// The policies' API.
fn policies() -> ApiResource {
    ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingAdmissionPolicy".into(),
        plural: "validatingadmissionpolicies".into(),
    }
}

/// The runner: waits for discovery to serve the policies, then works their queue until the
/// manager stops.
pub(crate) fn start(context: &Context) -> Runner {
    let client = context.client.clone();
    let workers = context.options.workers_or(1);
    let stop = context.stop.clone();
    Box::pin(async move {
        let queue = worker::queue::<String>("validatingadmissionpolicy-status");
        let Some((mapper, informer)) = served_informer(
            &client,
            &policies(),
            ListOptions::default(),
            "validatingadmissionpolicy-status",
            |informer| {
                let (on_add, on_update) = (queue.clone(), queue.clone());
                let _ = informer.add_event_handler(
                    HandlerFns::new()
                        .on_add(move |policy: &Arc<DynamicObject>, _| {
                            on_add.add(policy.metadata.name.clone().unwrap_or_default());
                        })
                        .on_update(move |_, policy: &Arc<DynamicObject>| {
                            on_update.add(policy.metadata.name.clone().unwrap_or_default());
                        }),
                );
            },
        )
        .await
        else {
            stopped(stop).await;
            return;
        };
        let shared = Arc::new(Shared {
            client,
            mapper,
            lister: informer.lister(),
        });
        let workers = worker::spawn(queue, workers, worker::Retries::Forever, move |name| {
            let shared = Arc::clone(&shared);
            async move { sync(&shared, &name).await }
        });
        stopped(stop).await;
        workers.stop().await;
        let _ = informer.shutdown_and_wait(Duration::from_secs(5)).await;
    })
}

/// What every sync reads.
struct Shared {
    client: Client,
    mapper: RestMapper,
    lister: Lister<DynamicObject>,
}

/// Type-checks policy `name` and applies its status, unless its generation is observed already
/// (`reconcile`).
async fn sync(shared: &Shared, name: &str) -> Result<Next> {
    let Some(policy) = shared.lister.get(None, name) else {
        return Ok(Next::Done);
    };
    let generation = policy.metadata.generation.unwrap_or_default();
    let observed = policy.data["status"]["observedGeneration"]
        .as_i64()
        .unwrap_or_default();
    if generation <= observed {
        return Ok(Next::Done);
    }
    let spec = json!({ "spec": policy.data["spec"] });
    let mut schemas = Schemas::new(&shared.client, &shared.mapper);
    let warnings = check(&spec, &mut schemas).await;
    let warnings: Vec<Value> = warnings
        .into_iter()
        .map(|w| json!({"fieldRef": w.field_ref, "warning": w.warning}))
        .collect();
    let mut type_checking = json!({});
    if !warnings.is_empty() {
        type_checking["expressionWarnings"] = Value::Array(warnings);
    }
    let resource = policies();
    let status = json!({
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name},
        "status": {"observedGeneration": generation, "typeChecking": type_checking},
    });
    let api = ResourceClient::<DynamicObject>::dynamic(shared.client.clone(), &resource, None);
    let options = ApplyOptions::new(FIELD_MANAGER).force(true);
    match api.apply_status(name, &status, &options).await {
        Ok(_) => Ok(Next::Done),
        Err(e) if e.is_not_found() => Ok(Next::Done),
        Err(e) => Err(request(format!(
            "apply status of validatingadmissionpolicy {name}"
        ))(e)),
    }
}

/// The warnings of `policy` (its `spec`, as JSON) with the kinds and schemas `schemas` finds.
async fn check(policy: &Value, schemas: &mut Schemas<'_>) -> Vec<Warning> {
    let rules = typecheck::resources(policy);
    let mut found = Vec::new();
    for rule in &rules {
        let mut kinds = Vec::new();
        for resource in rule {
            kinds.push(schemas.kind_of(resource).await);
        }
        found.push(kinds);
    }
    let mut answers = found.into_iter().flatten();
    let kinds = typecheck::kinds(&rules, |_| answers.next().flatten());
    let mut typed: Vec<(Kind, Value)> = Vec::new();
    for kind in kinds {
        if let Some(schema) = schemas.schema_of(&kind).await {
            typed.push((kind, schema));
        }
    }
    let params = match param_kind(policy) {
        Some(kind) => schemas.schema_of(&kind).await,
        None => None,
    };
    let scope = scope_of(policy);
    let mut warnings = Vec::new();
    for (field_ref, expression) in typecheck::expressions(policy) {
        let failures: Vec<(Kind, String)> = typed
            .iter()
            .filter_map(|(kind, schema)| {
                let types = PolicyTypes {
                    object: Some(schema),
                    params: params.as_ref(),
                };
                match check_typed_policy_expression(&expression, &scope, types)? {
                    Ok(_) => None,
                    Err(issues) => Some((kind.clone(), issues)),
                }
            })
            .collect();
        if let Some(warning) = typecheck::warning(&failures) {
            warnings.push(Warning { field_ref, warning });
        }
    }
    warnings
}

/// The `paramKind` as a kind, if the policy has a well-formed one.
fn param_kind(policy: &Value) -> Option<Kind> {
    let param_kind = &policy["spec"]["paramKind"];
    let api_version = param_kind["apiVersion"].as_str()?;
    let kind = param_kind["kind"].as_str()?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Some(Kind {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
    })
}

/// What the expressions see besides `object`: `params` with a `paramKind`, the authorizer, the
/// policy's variables.
fn scope_of(policy: &Value) -> PolicyScope {
    let text = |value: &Value, key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let variables = policy["spec"]["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| (text(v, "name"), text(v, "expression")))
        .collect();
    PolicyScope {
        params: policy["spec"].get("paramKind").is_some(),
        authorizer: true,
        variables: Some(variables),
    }
}
