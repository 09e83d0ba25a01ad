//! CustomResourceDefinitions: creating one serves its resource, deleting one removes the resource and
//! its objects (apiextensions-apiserver's `customresource_handler.go` plus its naming and
//! establishing controllers, collapsed into the write itself).
//!
//! # Differences from the real server
//! - The CRD's status (`NamesAccepted`, `Established`, `acceptedNames`, `storedVersions`) is set in
//!   the create response itself instead of by a controller a moment later, so clients waiting for
//!   `Established` succeed at once.
//! - The CRD's own schema is not validated (custom resources are: `kinds::custom_resource`),
//!   except its CEL rules, which are type-checked as v1.36 compiles them; of the cost budget only
//!   the rules certain to exceed it more than 100 times (unbounded lists iterated inside each
//!   other) are refused.
//!
//! Every served version's resource is registered, but objects live in the storage version's
//! collection only: requests in another version are converted at the edge of the request path
//! (`crate::kinds::custom_resource::edge`). Unlike the real server, changing the storage version
//! of a CRD that has objects does not carry them over (etcd keeps them in the old encoding and
//! converts on read; here they stay in the old version's collection, unserved).

use serde_json::{Map, Value, json};

use crate::kinds::custom_resource::schema;
use crate::kinds::strategy::Strategy;
use crate::object::{now, strings_at};
use crate::registry::printer_column::PrinterColumn;
use crate::registry::scale::ScaleSubresource;
use crate::registry::{ResourceDefinition, ResourceKey};
use crate::status::{ApiError, Cause, cause};
use crate::storage::State;
use crate::storage::objects::ObjectKey;

/// The strategy of `customresourcedefinitions.apiextensions.k8s.io`.
pub(crate) struct Crds;

impl Strategy for Crds {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        prepare(object)
    }

    fn prepare_for_update(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        prepare(object)
    }

    fn after_write(&self, state: &mut State, stored: &Value) {
        register(state, stored);
        schema::default_stored(state, stored);
    }

    fn after_delete(&self, state: &mut State, last: &Value) {
        unregister(state, last);
    }
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Validates a CRD and fills in its status.
///
/// # Errors
/// 422 Invalid with one cause per problem.
fn prepare(object: &mut Map<String, Value>) -> Result<(), ApiError> {
    let value = Value::Object(object.clone());
    let name = text(&value, "/metadata/name").to_string();
    let causes = validate(&value, &name);
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            &name,
            causes,
        ));
    }
    let previous = value
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let since = |kind: &str| {
        previous
            .iter()
            .find(|c| c["type"] == kind)
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| now().into())
    };
    // Every version objects were ever stored in stays listed until a client removes it from
    // the status (the storage version migration's last step), as the real server keeps them.
    let mut storage: Vec<Value> = value
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for version in versions(&value).iter().filter(|v| v["storage"] == true) {
        if !storage.contains(&version["name"]) {
            storage.push(version["name"].clone());
        }
    }
    object.insert(
        "status".into(),
        json!({
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": since("NamesAccepted"),
                 "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": since("Established"),
                 "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
            ],
            "acceptedNames": value.pointer("/spec/names").cloned().unwrap_or_else(|| json!({})),
            "storedVersions": storage,
        }),
    );
    Ok(())
}

fn versions(value: &Value) -> Vec<Value> {
    value
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn validate(value: &Value, name: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let group = text(value, "/spec/group");
    let plural = text(value, "/spec/names/plural");
    let required = |field: &str| cause("FieldValueRequired", field, "Required value");
    if group.is_empty() {
        causes.push(required("spec.group"));
    } else if !group.contains('.') {
        causes.push(cause(
            "FieldValueInvalid",
            "spec.group",
            format!("Invalid value: \"{group}\": should be a domain with at least one dot"),
        ));
    }
    if plural.is_empty() {
        causes.push(required("spec.names.plural"));
    }
    if text(value, "/spec/names/kind").is_empty() {
        causes.push(required("spec.names.kind"));
    }
    if !matches!(text(value, "/spec/scope"), "Namespaced" | "Cluster") {
        causes.push(cause(
            "FieldValueNotSupported",
            "spec.scope",
            format!(
                "Unsupported value: \"{}\": supported values: \"Cluster\", \"Namespaced\"",
                text(value, "/spec/scope")
            ),
        ));
    }
    if name != format!("{plural}.{group}") {
        causes.push(cause(
            "FieldValueInvalid",
            "metadata.name",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let all = versions(value);
    causes.extend(rule_causes(value, &all));
    if all.is_empty() {
        causes.push(required("spec.versions"));
    } else if all.iter().filter(|v| v["storage"] == true).count() != 1 {
        causes.push(cause(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    causes
}

/// The CEL rules of the CRD's schemas that do not type-check, at the paths of the internal
/// version v1.36 validates: one schema shared by every version (or v1beta1's
/// `spec.validation`) is `spec.validation.openAPIV3Schema`, else each version's own.
fn rule_causes(value: &Value, all: &[Value]) -> Vec<Cause> {
    let schema_of = |v: &Value| v.pointer("/schema/openAPIV3Schema").cloned();
    let schemas: Vec<Option<Value>> = all.iter().map(schema_of).collect();
    let shared = match value.pointer("/spec/validation/openAPIV3Schema") {
        Some(schema) => Some(schema.clone()),
        None if !schemas.is_empty() && schemas.iter().all(|s| *s == schemas[0]) => {
            schemas[0].clone()
        }
        None => None,
    };
    let errors = match shared {
        Some(schema) => {
            kubegen_apiextensions::check_rules(&schema, "spec.validation.openAPIV3Schema")
        }
        None => schemas
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
            .flat_map(|(i, schema)| {
                let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
                kubegen_apiextensions::check_rules(schema, &path)
            })
            .collect(),
    };
    errors
        .iter()
        .map(|e| cause(e.kind.reason(), &e.field, e.message()))
        .collect()
}

/// The served resources a CRD defines.
fn definitions(value: &Value) -> Vec<ResourceDefinition> {
    let strings = |pointer: &str| strings_at(value, pointer);
    versions(value)
        .iter()
        .filter(|v| v["served"] == true)
        .map(|v| ResourceDefinition {
            group: text(value, "/spec/group").into(),
            version: v["name"].as_str().unwrap_or("").into(),
            kind: text(value, "/spec/names/kind").into(),
            plural: text(value, "/spec/names/plural").into(),
            singular: text(value, "/spec/names/singular").into(),
            short_names: strings("/spec/names/shortNames"),
            categories: strings("/spec/names/categories"),
            namespaced: text(value, "/spec/scope") == "Namespaced",
            status_subresource: v.pointer("/subresources/status").is_some(),
            tracks_generation: true,
            delete_returns_object: true,
            selectable_fields: v
                .get("selectableFields")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f["jsonPath"].as_str())
                        .map(|p| p.trim_start_matches('.').to_string())
                        .collect()
                })
                .unwrap_or_default(),
            printer_columns: v
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(PrinterColumn::from_crd).collect())
                .unwrap_or_default(),
            scale_subresource: v
                .pointer("/subresources/scale")
                .map(ScaleSubresource::from_crd),
            ..ResourceDefinition::default()
        })
        .collect()
}

/// Serves every served version of the CRD (and stops serving versions no longer served).
fn register(state: &mut State, crd: &Value) {
    let served = definitions(crd);
    let (group, plural) = (text(crd, "/spec/group"), text(crd, "/spec/names/plural"));
    let stale: Vec<ResourceKey> = state
        .registry
        .all()
        .filter(|d| {
            d.group == group && d.plural == plural && !served.iter().any(|s| s.version == d.version)
        })
        .map(|d| d.key())
        .collect();
    for key in stale {
        state.registry.remove(&key);
    }
    for def in served {
        state.registry.insert(def);
    }
}

/// Serves the resources of every stored CRD again, after a restart from a data directory
/// (`crate::storage::persist` restores the objects; serving them is the CRDs' strategy's).
pub(crate) fn register_stored(state: &mut State) {
    let crds = ResourceKey::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    let stored: Vec<Value> = state
        .store
        .collection(&crds)
        .into_iter()
        .flat_map(|c| c.values())
        .map(|stored| (*stored.value).clone())
        .collect();
    for crd in stored {
        register(state, &crd);
    }
}

/// Deletes every object of every version of the CRD (watchers see DELETED) and stops serving it.
fn unregister(state: &mut State, crd: &Value) {
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    for version in versions(crd) {
        let key = ResourceKey::new(group, version["name"].as_str().unwrap_or(""), plural);
        let names: Vec<ObjectKey> = state
            .store
            .collection(&key)
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default();
        for name in names {
            state.store.remove(&key, &name);
        }
        state.store.drop_collection(&key);
        state.registry.remove(&key);
    }
}
