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
//! 2. [`Schema::validate`]: the OpenAPI checks ([`validation`]), the `scale` subresource's
//!    replica and selector fields ([`scale`]), embedded resources' `apiVersion`
//!    and `kind`, then the list-type
//!    invariants ([`listtype`]); if one of them is blocking (wrong type, required, enum, too
//!    long, too many), the CEL rules ([`rules`]) are skipped and a last error says "some
//!    validation rules were not checked", else their errors follow.
//!
//! Both `apiextensions.k8s.io/v1` CRDs and v1beta1 ones (`spec.validation.openAPIV3Schema` or
//! per version; pruning only with `preserveUnknownFields: false`) are read.
//!
//! [`Expression`] is the same CEL dialect for other API objects, e.g. admission webhooks'
//! `matchConditions`.

mod cel_library;
mod defaulting;
mod expression;
mod field;
mod formats;
mod listtype;
mod node;
mod pruning;
mod rules;
mod scale;
mod validation;

use serde_json::Value;

pub use expression::Expression;
pub use field::{ErrorType, FieldError};

use crate::field::BadValue;
use crate::node::Node;

/// What can be wrong with a CRD's schema for this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `openAPIV3Schema` of `version` is not a JSON object.
    #[error("the openAPIV3Schema of version {version} is not an object")]
    SchemaNotAnObject {
        /// The CRD version.
        version: String,
    },
    /// A CEL expression (e.g. a webhook's match condition) does not parse.
    #[error("compilation failed: {reason}")]
    CompileFailed {
        /// The parser's message.
        reason: String,
    },
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
    /// real server reports them.
    #[must_use]
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        validation::validate(object, old, self.node(), "", &mut errors);
        if let Some(scale) = &self.scale {
            scale.validate(object, &mut errors);
        }
        validation::embedded_resources(object, self.node(), "", &mut errors);
        listtype::validate(object, self.node(), "", &mut errors);
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
            rules::validate(&self.compiled, object, old, self.node(), "", &mut errors);
        }
        errors
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
mod rules_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod validation_tests;
