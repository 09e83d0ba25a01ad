//! The parameters a binding hands its policy (apiserver
//! `pkg/admission/plugin/policy/generic/policy_dispatcher.go` `collectParams`): the policy's
//! `paramKind` names the kind, the binding's `paramRef` the objects, by name or label selector,
//! in `paramRef.namespace`, or the request's namespace when the kind is namespaced and none is
//! named.
//!
//! Read under the storage lock when a write starts, as the real server reads its informers: a
//! parameter created or changed is seen by the next request.

use serde::Deserialize;
use serde_json::Value;

use crate::admission::webhook::config::{labels_of, selects};
use crate::storage::State;
use crate::storage::objects::ObjectKey;

/// A policy's `paramKind`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ParamKind {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
}

/// A binding's `paramRef`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ParamRef {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    selector: Option<Value>,
    #[serde(default)]
    parameter_not_found_action: Option<String>,
}

/// What a binding's policy is evaluated with.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Params {
    /// No `paramKind`, or no `paramRef`: evaluated once with `params` null.
    None,
    /// Evaluated once per object (a selector may find several).
    Found(Vec<Value>),
    /// Nothing found under `parameterNotFoundAction: Allow`: the binding is skipped.
    Skip,
    /// The binding cannot be configured: a failure, decided by the policy's `failurePolicy`.
    Failed(String),
}

/// The parameters of a binding's `param_ref` for a policy of `param_kind`, for a write in
/// `namespace` (None for cluster-scoped writes).
pub(crate) fn collect(
    state: &State,
    param_kind: Option<&ParamKind>,
    param_ref: Option<&ParamRef>,
    namespace: Option<&str>,
) -> Params {
    let (Some(kind), Some(reference)) = (param_kind, param_ref) else {
        return Params::None;
    };
    let (group, version) = match kind.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", kind.api_version.as_str()),
    };
    let def = state
        .registry
        .all()
        .find(|d| d.group == group && d.version == version && d.kind == kind.kind);
    let Some(def) = def else {
        return Params::Failed(format!(
            "failed to find resource referenced by paramKind: '{}, Kind={}'",
            kind.api_version, kind.kind
        ));
    };
    let namespace = match (def.namespaced, reference.namespace.as_str(), namespace) {
        (false, _, _) => None,
        (true, "", Some(ns)) => Some(ns.to_string()),
        (true, "", None) => {
            return Params::Failed(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                    .into(),
            );
        }
        (true, ns, _) => Some(ns.to_string()),
    };
    let found = if reference.name.is_empty() {
        select(
            state,
            def,
            namespace.as_deref(),
            reference.selector.as_ref(),
        )
    } else {
        let key: ObjectKey = (namespace.unwrap_or_default(), reference.name.clone());
        let stored = state.store.get(&def.key(), &key);
        stored.map(|s| (*s.value).clone()).into_iter().collect()
    };
    if !found.is_empty() {
        return Params::Found(found);
    }
    match reference.parameter_not_found_action.as_deref() {
        Some("Allow") => Params::Skip,
        _ => Params::Failed(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        ),
    }
}

/// The objects of `def` in `namespace` whose labels the selector selects, in name order.
fn select(
    state: &State,
    def: &crate::registry::ResourceDefinition,
    namespace: Option<&str>,
    selector: Option<&Value>,
) -> Vec<Value> {
    state
        .store
        .all(&def.key(), namespace)
        .iter()
        .map(|s| (*s.value).clone())
        .filter(|o| selects(selector, &labels_of(Some(o))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> State {
        let mut state = State::new(16);
        let key = crate::registry::ResourceKey::new("", "v1", "configmaps");
        for (ns, name, labels) in [
            ("a", "limits", json!({"p": "yes"})),
            ("a", "other", json!({"p": "yes"})),
            ("b", "limits", json!({})),
        ] {
            let object = json!({"metadata": {"name": name, "namespace": ns, "labels": labels}});
            state.store.insert(&key, (ns.into(), name.into()), object);
        }
        state
    }

    fn reference(value: Value) -> ParamRef {
        serde_json::from_value(value).unwrap()
    }

    fn kind() -> ParamKind {
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap"})).unwrap()
    }

    fn names(params: Params) -> Vec<String> {
        match params {
            Params::Found(found) => found
                .iter()
                .map(|o| crate::object::meta_str(o, "name").to_string())
                .collect(),
            other => panic!("not found: {other:?}"),
        }
    }

    #[test]
    fn no_kind_or_no_reference_means_null_params() {
        let state = state();
        let by_name = reference(json!({"name": "limits"}));
        assert_eq!(
            collect(&state, None, Some(&by_name), Some("a")),
            Params::None
        );
        assert_eq!(
            collect(&state, Some(&kind()), None, Some("a")),
            Params::None
        );
    }

    #[test]
    fn names_and_selectors_look_in_the_named_or_the_request_namespace() {
        let state = state();
        let kind = kind();
        let named = reference(json!({"name": "limits", "namespace": "b"}));
        assert_eq!(
            names(collect(&state, Some(&kind), Some(&named), Some("a"))),
            ["limits"]
        );
        let selected = reference(json!({"selector": {"matchLabels": {"p": "yes"}}}));
        assert_eq!(
            names(collect(&state, Some(&kind), Some(&selected), Some("a"))),
            ["limits", "other"]
        );
        let nothing = collect(&state, Some(&kind), Some(&selected), None);
        assert!(
            matches!(nothing, Params::Failed(why) if why.starts_with("cannot use namespaced paramRef"))
        );
    }

    #[test]
    fn missing_params_skip_under_allow_and_fail_under_deny() {
        let state = state();
        let kind = kind();
        let allow = reference(json!({"name": "nope", "parameterNotFoundAction": "Allow"}));
        assert_eq!(
            collect(&state, Some(&kind), Some(&allow), Some("a")),
            Params::Skip
        );
        let deny = reference(json!({"name": "nope", "parameterNotFoundAction": "Deny"}));
        assert_eq!(
            collect(&state, Some(&kind), Some(&deny), Some("a")),
            Params::Failed(
                "no params found for policy binding with `Deny` parameterNotFoundAction".into()
            )
        );
        let unknown: ParamKind =
            serde_json::from_value(json!({"apiVersion": "x.io/v1", "kind": "Nope"})).unwrap();
        assert!(matches!(
            collect(&state, Some(&unknown), Some(&deny), Some("a")),
            Params::Failed(_)
        ));
    }
}
