//! Custom resources: the rules of the one strategy of every kind a CustomResourceDefinition
//! serves (apiextensions-apiserver's `customresource_handler.go` with its per-version codecs,
//! field managers and `pkg/registry/customresource/strategy.go`). `crate::kinds::strategy_for`
//! hands out that strategy, `CustomResources`, like every other kind's; it delegates here.
//!
//! | concern | file | real server |
//! |---|---|---|
//! | decoding: pruning and defaulting a body before admission | [`schema`] | `schemaCoercingConverter`, `unstructuredDefaulter` |
//! | validation: OpenAPI values, list types, CEL `x-kubernetes-validations` (transition rules, ratcheting) | [`schema`] | `customResourceStrategy.Validate` / `ValidateUpdate`, `statusStrategy` |
//! | the versions a CRD serves and their conversion (`None`, `Webhook`) | [`conversion`] | `pkg/apiserver/conversion` |
//! | the edge a request in another version crosses: converted in, answers converted out | [`edge`] | `crdConversionRESTOptionsGetter` |
//! | managedFields in the version each manager wrote through | [`managers`] | structured-merge-diff's `versionConverter` |
//! | an apply's pruning across versions | [`prune`] | `Updater.prune` |
//!
//! The generic handlers ask for these through the `crate::kinds::Strategy` hooks `decode`,
//! `validate` and `edge`; none of them names a custom resource.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `prune`
//! - `managers`
//! - `edge`
//! - `conversion`, `schema`
//! - `numbers`

pub(crate) mod conversion;
pub(crate) mod edge;
pub(crate) mod managers;
pub(crate) mod numbers;
pub(crate) mod prune;
pub(crate) mod schema;
