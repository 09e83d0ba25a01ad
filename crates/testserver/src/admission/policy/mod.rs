//! The ValidatingAdmissionPolicy and MutatingAdmissionPolicy plugins (apiserver
//! `pkg/admission/plugin/policy/{generic,validating,mutating}`): admission written as CEL in
//! stored objects instead of called over HTTPS. A policy says what to check or change and which
//! resources it constrains; a binding says which of those writes it applies to, with which
//! parameter objects and, for a validating policy, what a failure does (`validationActions`).
//!
//! # Where they run
//! As kube-apiserver orders its plugins: MutatingAdmissionPolicy just before the mutating
//! webhooks, ValidatingAdmissionPolicy just before the validating webhooks, so after the kind's
//! schema validation. They ride along with [`crate::admission::webhook::Webhooks`]: the policies,
//! bindings, parameters and the namespace are read in [`Policies::load`] under the storage lock,
//! when the write starts (a policy, binding or parameter changed is seen by the next request;
//! the real server's informers take about a second), and evaluated without it.
//!
//! # Behaviour reproduced (checked against v1.36)
//! - Matching: the policy's `matchConstraints` and the binding's `matchResources` (rules with
//!   `resourceNames`, `excludeResourceRules`, namespace and object selectors, `matchPolicy`);
//!   policies in name order, each policy's bindings in name order (v1.36 fixes no order: two
//!   mutating policies were seen to run in either order, name aside); writes to the policy
//!   kinds themselves are never admitted by policies, as for webhooks.
//! - Parameters ([`params`]): none (`params` is null), one by name, or every object a selector
//!   finds (evaluated once each); not found is a failure under `parameterNotFoundAction: Deny`,
//!   a skipped binding under `Allow`.
//! - CEL variables `object`, `oldObject`, `request`, `params`, `namespaceObject` and
//!   `variables` (each of `spec.variables` in order, seeing the earlier ones).
//! - Validation failures ([`validating`]): `messageExpression`, `message` or
//!   `failed expression: <e>`; `reason` (Invalid by default) picks the code (422, 403, 413,
//!   401); Deny answers `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with
//!   binding '<b>' denied request: <message>` with the reason and one cause, Warn adds a
//!   `Warning` header `Validation failed for ValidatingAdmissionPolicy '<p>' with binding '<b>':
//!   <message>` (identical warnings once). Runtime errors are failures `expression '<e>' resulted in error: <why>` under
//!   `failurePolicy: Fail`, ignored under `Ignore`; a parameter that cannot be found denies
//!   with `failed to configure binding: ...` whatever the actions.
//! - Mutations ([`mutating`]): JSONPatch and ApplyConfiguration, in order, each seeing the
//!   previous one's result; `reinvocationPolicy: IfNeeded` policies run again when a later
//!   mutating webhook changed the object.
//! - Audit ([`validating`]): an `Audit` action adds
//!   `validation.policy.admission.k8s.io/validation_failure` (the first failure of the request:
//!   the real server refuses to overwrite the annotation), and each `auditAnnotations` entry
//!   `<policy>/<key>` (distinct values of several bindings or parameters joined with `, `), to
//!   the request's audit event (`crate::audit`); written when the server has an audit policy.
//!
//! # Differences from the real server
//! - `authorizer` asks the server's authorizer (RBAC when enabled, allow-all by default) as the
//!   requesting user, or as `serviceAccount(namespace, name)`; RBAC ignores label and field
//!   selectors, as the real one does.
//! - A mutating policy gets a custom resource in the request's version (a validating one, as on
//!   the real server, in the version its rules matched under `matchPolicy: Equivalent`).
//! - Variables are evaluated eagerly (the real server evaluates one when it is first read); an
//!   expression reading one that failed gets v1.36's `composited variable "<name>" fails to
//!   evaluate: <why>`.

//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two
//! modules import each other (`hack/import-layers.py` checks both).
//! - `mutating`, `validating`
//! - `spec`
//! - `matching`, `params`

pub(crate) mod matching;
mod mutating;
pub(crate) mod params;
mod spec;
mod validating;

use serde_json::{Map, Value};

use crate::admission::plugin::Attributes;
use crate::admission::webhook::config::namespace_labels;
use crate::kinds::namespace::{namespaces, ns_key};
use crate::registry::ResourceKey;
use crate::status::ApiError;
use crate::storage::State;
use matching::Write;
use spec::{Binding, Bound, Policy, Subject};

pub(crate) use spec::Inputs;

/// The mutating policies that ran (by index), each with the object as it left them: what
/// [`Policies::reinvoke`] compares against.
pub(crate) type Ran = Vec<(usize, Map<String, Value>)>;

/// The policies that apply to one write, with what they need to be evaluated.
pub(crate) struct Policies {
    validating: Vec<Bound>,
    mutating: Vec<Bound>,
    /// What is written, for `namespaceObject` and the denials.
    subject: Subject,
}

impl Policies {
    /// The bindings (with their policies and parameters) whose rules and namespace selector
    /// match the write; `object` is the incoming object, for the object selector.
    pub(crate) fn load(
        attributes: &Attributes<'_>,
        served: &[String],
        object: Option<&Value>,
    ) -> Policies {
        let state = attributes.state;
        let scope = attributes.scope;
        let labels = namespace_labels(state, attributes, object);
        let write = Write {
            attributes,
            served,
            namespace_labels: labels.as_ref(),
            object,
        };
        let exempt = scope.def.group == "admissionregistration.k8s.io";
        let load = |mutating: bool| {
            if exempt {
                return Vec::new();
            }
            bound(state, mutating, &write)
        };
        let namespace = scope.namespace.as_deref().and_then(|ns| {
            let stored = state.store.get(&namespaces(), &ns_key(ns))?;
            Some((*stored.value).clone())
        });
        Policies {
            validating: load(false),
            mutating: load(true),
            subject: Subject {
                group: scope.def.group.clone(),
                resource: scope.def.plural.clone(),
                // A delete of a collection's item has no name (apiserver `admission/errors.go`).
                name: if attributes.name.is_empty() {
                    "Unknown"
                } else {
                    attributes.name
                }
                .to_string(),
                namespace: namespace.unwrap_or(Value::Null),
                authorizer: kubegen_apiextensions::authorizer_value([
                    &scope.def.group,
                    &scope.def.plural,
                    scope.subresource.as_deref().unwrap_or(""),
                    scope.namespace.as_deref().unwrap_or(""),
                    attributes.name,
                ]),
                authorize: Some(authorize_as(scope)),
                audit: scope.audit.clone(),
            },
        }
    }

    /// The name chosen for a created object (after `generateName`), for the denials.
    pub(crate) fn set_name(&mut self, name: &str) {
        self.subject.name = name.to_string();
    }

    /// Whether a validating policy applies (so the handler must run the validating phase).
    pub(crate) fn has_validating(&self) -> bool {
        !self.validating.is_empty()
    }

    /// Whether any mutating policy matched the write.
    pub(crate) fn has_mutating(&self) -> bool {
        !self.mutating.is_empty()
    }

    /// The versions the validating policies matched in, each once: the objects must be
    /// given to [`Policies::validate`] in each.
    pub(crate) fn validating_versions(&self) -> Vec<String> {
        let mut versions: Vec<String> = Vec::new();
        for bound in &self.validating {
            if !versions.contains(&bound.version) {
                versions.push(bound.version.clone());
            }
        }
        versions
    }

    /// Runs the validating policies on the object about to be stored, each on `views`' inputs
    /// in the version it matched in; their warnings are appended to `warnings`, their audit
    /// annotations added to the request's audit event. Every policy is evaluated, as the real
    /// dispatcher evaluates them all before answering with the first denial.
    ///
    /// # Errors
    /// The first denial.
    pub(crate) fn validate(
        &self,
        views: &[(String, Inputs<'_>)],
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        let mut denial = None;
        let mut annotations = validating::PolicyAnnotations::default();
        for (i, bound) in self.validating.iter().enumerate() {
            let view = views.iter().find(|(v, _)| *v == bound.version);
            if let Some((_, inputs)) = view.or(views.first()) {
                let outcome = validating::run(&self.subject, bound, inputs, warnings);
                annotations.add(outcome.annotations);
                if let Some(error) = outcome.denial {
                    denial.get_or_insert(error);
                }
            }
            // A policy's bindings are consecutive: its annotations are published after its last.
            let next = self.validating.get(i + 1).map(|b| &b.policy.name);
            if next != Some(&bound.policy.name) {
                annotations.publish(&bound.policy.name, &self.subject.audit);
            }
        }
        denial.map_or(Ok(()), Err)
    }

    /// Runs the mutating policies on `object`, in order. Returns the indexes of the policies
    /// that ran, with the object after each (for reinvocation).
    ///
    /// # Errors
    /// A failure under `failurePolicy: Fail`.
    pub(crate) fn mutate(
        &self,
        object: &mut Map<String, Value>,
        inputs: &Inputs<'_>,
    ) -> Result<Ran, ApiError> {
        let mut ran = Vec::new();
        for (i, bound) in self.mutating.iter().enumerate() {
            if mutating::run(&self.subject, bound, object, inputs)? {
                ran.push((i, object.clone()));
            }
        }
        Ok(ran)
    }

    /// Runs once more each mutating policy of `ran` with `reinvocationPolicy: IfNeeded` whose
    /// output the later mutations changed.
    ///
    /// # Errors
    /// A failure under `failurePolicy: Fail`.
    pub(crate) fn reinvoke(
        &self,
        ran: Ran,
        object: &mut Map<String, Value>,
        inputs: &Inputs<'_>,
    ) -> Result<(), ApiError> {
        for (i, after) in ran {
            let bound = &self.mutating[i];
            if bound.policy.reinvokes() && after != *object {
                mutating::run(&self.subject, bound, object, inputs)?;
            }
        }
        Ok(())
    }
}

/// The server's authorizer asked on behalf of the requesting user (`authorizer.check`), or of
/// the ServiceAccount `authorizer.serviceAccount(namespace, name)` names (apiserver
/// `serviceaccount.ServiceAccountInfo.UserInfo`: its user name and its two groups, nothing more).
fn authorize_as(scope: &crate::request::scope::Scope) -> kubegen_apiextensions::Authorize {
    let authorizer = scope.authorizer.clone();
    let user = scope.user.clone();
    std::sync::Arc::new(move |check| {
        let user = match &check.service_account {
            Some((namespace, name)) => crate::authz::UserInfo::new(
                format!("system:serviceaccount:{namespace}:{name}"),
                "",
                &[
                    "system:serviceaccounts",
                    &format!("system:serviceaccounts:{namespace}"),
                ],
            ),
            None => user.clone(),
        };
        let attributes = crate::authz::Attributes {
            user,
            verb: check.verb.clone(),
            namespace: check.namespace.clone(),
            group: check.group.clone(),
            version: "*".into(),
            resource: check.resource.clone(),
            subresource: check.subresource.clone(),
            name: check.name.clone(),
            path: check.path.clone().unwrap_or_default(),
        };
        match authorizer.authorize(&attributes) {
            crate::authz::Decision::Allow { reason } => (true, reason),
            crate::authz::Decision::Deny { reason }
            | crate::authz::Decision::NoOpinion { reason } => (false, reason),
        }
    })
}

/// The policy/binding pairs of one kind that match `write`, with their parameters, policies in
/// name order and each policy's bindings in name order.
fn bound(state: &State, mutating: bool, write: &Write<'_>) -> Vec<Bound> {
    let (policies, bindings) = if mutating {
        (
            "mutatingadmissionpolicies",
            "mutatingadmissionpolicybindings",
        )
    } else {
        (
            "validatingadmissionpolicies",
            "validatingadmissionpolicybindings",
        )
    };
    let policies: Vec<Policy> = stored(state, policies)
        .into_iter()
        .filter_map(|v| Policy::from_stored(&v))
        .collect();
    let bindings: Vec<Binding> = stored(state, bindings)
        .into_iter()
        .filter_map(|v| Binding::from_stored(&v))
        .collect();
    let namespace = write.attributes.scope.namespace.as_deref();
    let mut out = Vec::new();
    for policy in &policies {
        let Some(version) = policy.constraints.matched_version(write) else {
            continue;
        };
        for binding in bindings.iter().filter(|b| b.policy_name == policy.name) {
            let binding_matches = binding
                .match_resources
                .as_ref()
                .is_none_or(|m| m.matched_version(write).is_some());
            if !binding_matches {
                continue;
            }
            let params = params::collect(
                state,
                policy.param_kind.as_ref(),
                binding.param_ref.as_ref(),
                namespace,
            );
            out.push(Bound {
                policy: policy.clone(),
                binding: binding.clone(),
                params,
                version: version.clone(),
            });
        }
    }
    out
}

/// Every stored object of `admissionregistration.k8s.io/v1` `plural`, in name order.
fn stored(state: &State, plural: &str) -> Vec<Value> {
    let key = ResourceKey::new("admissionregistration.k8s.io", "v1", plural);
    let mut objects: Vec<Value> = state
        .store
        .all(&key, None)
        .iter()
        .map(|s| (*s.value).clone())
        .collect();
    objects
        .sort_by(|a, b| crate::object::meta_str(a, "name").cmp(crate::object::meta_str(b, "name")));
    objects
}
