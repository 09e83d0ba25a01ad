//! kubegen-apiextensions: what a real kube-apiserver does with a custom resource's body because
//! of its CustomResourceDefinition's structural schema — defaulting, pruning of unknown fields,
//! OpenAPI value validation, `x-kubernetes-list-type` invariants and the CEL rules of
//! `x-kubernetes-validations` — as pure functions over `serde_json::Value`.
//!
//! `kubegen-testserver` calls it on every custom resource write and read, so that an object the
//! real server would reject or change is rejected or changed in tests too. It mirrors
//! apiextensions-apiserver `pkg/apiserver/schema/{defaulting,pruning,listtype,cel}`,
//! `pkg/apiserver/validation` and `pkg/registry/customresource/strategy.go`; the messages,
//! field paths and cause reasons are v1.36's.
//!
//! # Order, as the real server
//! 1. [`Schema::prune`] then [`Schema::default`] when a body is decoded (and `default` again
//!    when a stored object is read);
//! 2. [`Schema::validate`]: the OpenAPI checks (`validation`), the `scale` subresource's
//!    replica and selector fields (`scale`), embedded resources' `apiVersion`
//!    and `kind`, then the list-type
//!    invariants (`listtype`; on update only if the old object kept them); if the schema has
//!    CEL rules (`rules`) and one of the errors is blocking (wrong type, required, enum, too
//!    long, too many), they are skipped and a last error says "some validation rules were not
//!    checked", else their errors follow; each rule's evaluation is counted against v1.36's
//!    per-call limit and the object's runtime cost budget (`runtime_cost`).
//!    [`Schema::validate_status`] is the same for a write of `/status`, with only the status
//!    checked against the schema.
//!
//! Both `apiextensions.k8s.io/v1` CRDs and v1beta1 ones (`spec.validation.openAPIV3Schema` or
//! per version; pruning only with `preserveUnknownFields: false`) are read.
//!
//! [`check_rules`] type-checks a schema's rules when its CRD is written and refuses the ones
//! over v1.36's estimated cost budgets (`rule_check`, `cel_cost`), and
//! [`check_policy_expression`] an admission policy's expressions when it is written
//! (`policy_check`); [`check_typed_policy_expression`] does it with `object` typed by a matched
//! kind's schema, which [`kind_schema`] reads out of an OpenAPI v3 document (`openapi_schema`).
//!
//! [`Expression`] is the same CEL dialect for other API objects, e.g. admission webhooks'
//! `matchConditions`.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `expression`
//! - `rules`, `rule_check`, `policy_check`
//! - `validation`
//! - `defaulting`, `listtype`, `pruning`, `scale`, `cel_check`, `cel_cost`
//! - `cel_overloads`
//! - `cel_types`
//! - `cel_library`, `error`, `field`, `formats`, `node`, `openapi_schema`, `runtime_cost`
//! - `stack`

mod cel_check;
mod cel_cost;
mod cel_library;
mod cel_overloads;
mod cel_types;
mod defaulting;
mod error;
mod expression;
mod field;
mod formats;
mod listtype;
mod node;
mod openapi_schema;
mod policy_check;
mod pruning;
mod rule_check;
mod rules;
mod runtime_cost;
mod scale;
mod stack;
mod validation;

use serde_json::Value;

pub use cel_library::{Authorize, AuthzCheck, authorizer_value};
pub use error::Error;
pub use expression::{Evaluation, Expression};
pub use field::{ErrorType, FieldError};
pub use openapi_schema::kind_schema;
pub use policy_check::{
    PolicyScope, PolicyTypes, check_policy_expression, check_typed_policy_expression,
};
pub use runtime_cost::{OBJECT_BUDGET, PER_CALL_LIMIT};

use crate::field::BadValue;
use crate::node::Node;

/// The rules under `schema` (an `openAPIV3Schema` found at the field path `path`, e.g.
/// `spec.validation.openAPIV3Schema`) that v1.36 refuses when the CRD is written: one Invalid
/// per rule that does not compile, does not give a bool, or whose `messageExpression` does
/// not give a string, with cel-go's message.
#[must_use]
pub fn check_rules(schema: &Value, path: &str) -> Vec<FieldError> {
    rule_check::check_schema(schema, path)
}

/// The structural schema of one version of a CRD, with its CEL rules compiled.
pub struct Schema {
    root: Value,
    prune: bool,
    compiled: rules::Compiled,
    scale: Option<scale::ScalePaths>,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("prune", &self.prune)
            .finish_non_exhaustive()
    }
}

impl Schema {
    /// The schema `crd` (v1 or v1beta1, as JSON) gives its `version`; `None` when it has none.
    ///
    /// # Errors
    /// [`Error::SchemaNotAnObject`] for a schema that is not an object.
    pub fn from_crd(crd: &Value, version: &str) -> Result<Option<Schema>, Error> {
        let v1beta1 =
            crd.get("apiVersion").and_then(Value::as_str) == Some("apiextensions.k8s.io/v1beta1");
        let entry = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .and_then(|all| all.iter().find(|v| v["name"] == version));
        let own = entry.and_then(|v| v.pointer("/schema/openAPIV3Schema"));
        let scale = scale::ScalePaths::from_version(entry)
            .or_else(|| scale::ScalePaths::from_version(crd.get("spec")));
        let Some(root) = own.or_else(|| crd.pointer("/spec/validation/openAPIV3Schema")) else {
            return Ok(None);
        };
        if !root.is_object() {
            return Err(Error::SchemaNotAnObject {
                version: version.to_string(),
            });
        }
        let preserve = crd.pointer("/spec/preserveUnknownFields");
        let prune = if v1beta1 {
            preserve == Some(&Value::Bool(false))
        } else {
            preserve != Some(&Value::Bool(true))
        };
        Ok(Some(Schema {
            compiled: rules::Compiled::new(root),
            root: root.clone(),
            prune,
            scale,
        }))
    }

    fn node(&self) -> Node<'_> {
        Node(&self.root)
    }

    /// Drops the fields the schema does not know (when the CRD prunes).
    pub fn prune(&self, object: &mut Value) {
        if self.prune {
            pruning::prune_root(object, self.node());
        }
        pruning::prune_embedded_metadata(object, self.node(), true);
    }

    /// Fills in the schema's defaults and drops non-nullable nulls without one.
    pub fn default(&self, object: &mut Value) {
        defaulting::apply(object, self.node());
    }

    /// Every problem of `object` (with `old`, the stored object, on update), in the order the
    /// real server reports them (`customResourceStrategy.Validate` / `ValidateUpdate`).
    #[must_use]
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        validation::validate(object, old, self.node(), "", &mut errors);
        if let Some(scale) = &self.scale {
            scale.validate(object, &mut errors);
        }
        validation::embedded_resources(object, self.node(), "", &mut errors);
        self.list_types(object, old, &mut errors);
        self.rules(object, old, &mut errors);
        errors
    }

    /// Every problem of `object` written through its `/status` subresource over `old`
    /// (`statusStrategy.ValidateUpdate`): only the status is checked against the schema — its
    /// own, so messages name paths from the status down (`replicas in body ...` for the field
    /// `status.replicas`) — then the scale subresource's status fields, and the list types and
    /// CEL rules of the whole object, as on any update.
    #[must_use]
    pub fn validate_status(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let (Some(status), Some(schema)) = (object.get("status"), self.node().field("status")) {
            validation::validate(status, old.get("status"), schema, "", &mut errors);
            for error in &mut errors {
                error.field = match error.field.as_str() {
                    "<nil>" => "status".into(),
                    field => format!("status.{field}"),
                };
            }
        }
        if let Some(scale) = &self.scale {
            scale.validate_status(object, &mut errors);
        }
        self.list_types(object, Some(old), &mut errors);
        self.rules(object, Some(old), &mut errors);
        errors
    }

    /// The list-type invariants, ratcheted as a whole: on update, only when the old object kept
    /// them.
    fn list_types(&self, object: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
        if let Some(old) = old {
            let mut before = Vec::new();
            listtype::validate(old, self.node(), "", &mut before);
            if !before.is_empty() {
                return;
            }
        }
        listtype::validate(object, self.node(), "", errors);
    }

    /// The CEL rules, when the schema has any (the real server has no CEL validator otherwise):
    /// skipped with a last error after a blocking one.
    fn rules(&self, object: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
        if self.compiled.is_empty() {
            return;
        }
        if errors.iter().any(|e| e.kind.blocks_rules()) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "",
                BadValue::Shown(Value::Null),
                "some validation rules were not checked because the object was invalid; \
                 correct the existing errors to complete validation"
                    .into(),
            ));
        } else {
            let mut budget = rules::Budget::default();
            // Once per object, so that its rules do not each grow a stack of their own.
            stack::with_room(|| {
                rules::validate(
                    &self.compiled,
                    object,
                    old,
                    self.node(),
                    "",
                    &mut budget,
                    errors,
                );
            });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod defaulting_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pruning_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod rule_check_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod rules_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod status_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod validation_tests;
