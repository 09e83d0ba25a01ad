//! `Table` responses: what `kubectl get` asks for with
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` so it can print server-side columns
//! (apiserver `endpoints/handlers/response.go` `asTable`, the built-in printers of
//! `pkg/printers/internalversion`, apiextensions' `tableconvertor`, `rest.defaultTableConvertor`).
//!
//! # Which columns
//! - Built-in kinds: the upstream printer's columns (names, types, priorities and descriptions
//!   are kept as data in `columns.json`, extracted from the upstream printers and swagger docs)
//!   and its cells ([`builtin`]). The server always prints wide; kubectl hides priority > 0.
//! - Custom resources: `Name`, then the CRD version's `additionalPrinterColumns` evaluated by
//!   JSONPath ([`custom`]), or `Age` when it declares none.
//! - CustomResourceDefinitions themselves: the default convertor's `Name` and `Created At`.
//!
//! # Guarantees
//! - Each row's `object` follows `includeObject`: `Metadata` (the default) a
//!   `PartialObjectMetadata`, `Object` the whole object, `None` nothing.
//! - List Tables keep the list's `resourceVersion`, `continue` and `remainingItemCount`.
//! - A watch in Table form sends one single-row Table per event; only the first carries
//!   `columnDefinitions` (later ones have `null`), as the real server's watch encoder sets
//!   `NoHeaders` after it.

mod admission_policy;
mod builtin;
pub(crate) mod custom;
mod duration;
mod event;
mod fields;
mod pod;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};

use crate::body::json_response;
use serde::Deserialize;
use serde_json::{Map, Value, json};

pub(crate) use fields::label_selector;

use crate::body::BoxBody;
use crate::registry::ResourceDefinition;
use crate::registry::printer_column::PrinterColumn;
use crate::request::query::Query;
use crate::status::ApiError;
use builtin::Kind;

/// What a row's `object` carries (metav1 `IncludeObjectPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    None,
    Metadata,
    Object,
}

/// A request answered in Table form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableRequest {
    /// `v1` or `v1beta1` of `meta.k8s.io`, as accepted.
    pub(crate) version: &'static str,
    pub(crate) include: IncludeObject,
}

impl TableRequest {
    /// The Table the `Accept` header asks for, if the first media range the server can serve is
    /// a Table (kubectl lists Table v1, Table v1beta1, then plain JSON).
    ///
    /// # Errors
    /// 400 for an `includeObject` other than `None`, `Metadata` or `Object`, worded like the real
    /// server.
    pub(crate) fn from_request(
        headers: &HeaderMap,
        query: &Query,
    ) -> Result<Option<TableRequest>, ApiError> {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let Some(version) = accepted_table_version(accept) else {
            return Ok(None);
        };
        let include = match query.get("includeObject").unwrap_or("") {
            "" | "Metadata" => IncludeObject::Metadata,
            "None" => IncludeObject::None,
            "Object" => IncludeObject::Object,
            other => {
                return Err(ApiError::bad_request(format!(
                    "Unable to convert to Table as requested: includeObject: Invalid value: \"{other}\": must be 'Metadata', 'Object', 'None', or empty"
                )));
            }
        };
        Ok(Some(TableRequest { version, include }))
    }

    /// `meta.k8s.io/v1`.
    fn api_version(&self) -> String {
        format!("meta.k8s.io/{}", self.version)
    }

    /// The Table of `objects` of resource `def`, with `list_meta` as its metadata and column
    /// definitions unless `headers` is false.
    pub(crate) fn render(
        &self,
        def: &ResourceDefinition,
        objects: &[&Value],
        list_meta: Map<String, Value>,
        headers: bool,
    ) -> Value {
        let printer = Printer::of(def);
        let now = jiff::Timestamp::now();
        let rows: Vec<Value> = objects
            .iter()
            .map(|object| {
                let mut row = json!({"cells": printer.cells(object, now)});
                if let Some(conditions) = printer.conditions(object) {
                    row["conditions"] = conditions;
                }
                row["object"] = self.row_object(object);
                row
            })
            .collect();
        let mut table = json!({
            "kind": "Table",
            "apiVersion": self.api_version(),
            "metadata": list_meta,
        });
        // Without headers the field is `null`, not absent, as the real server writes it.
        table["columnDefinitions"] = if headers {
            Value::Array(printer.columns())
        } else {
            Value::Null
        };
        table["rows"] = Value::Array(rows);
        table
    }

    fn row_object(&self, object: &Value) -> Value {
        match self.include {
            IncludeObject::None => Value::Null,
            IncludeObject::Object => object.clone(),
            IncludeObject::Metadata => crate::object::partial_object_metadata(object, self.version),
        }
    }

    /// A 200 response carrying `table`, labelled `application/json` as real servers do.
    pub(crate) fn response(&self, table: &Value) -> Response<BoxBody> {
        json_response(StatusCode::OK, Bytes::from(table.to_string()))
    }
}

/// The Table version of the first media range in `accept` that the server serves: a Table of
/// `meta.k8s.io` v1 or v1beta1 gives its version; plain JSON (or a wildcard) comes first means no
/// Table.
fn accepted_table_version(accept: &str) -> Option<&'static str> {
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        let params: BTreeMap<&str, &str> = parts.filter_map(|p| p.split_once('=')).collect();
        if !matches!(media, "application/json" | "*/*" | "application/*") {
            continue;
        }
        match (params.get("as"), params.get("g"), params.get("v")) {
            (None, _, _) => return None,
            (Some(&"Table"), Some(&"meta.k8s.io"), Some(&"v1")) => return Some("v1"),
            (Some(&"Table"), Some(&"meta.k8s.io"), Some(&"v1beta1")) => return Some("v1beta1"),
            _ => {}
        }
    }
    None
}

/// A column definition as kept in `columns.json` (metav1 `TableColumnDefinition`).
#[derive(Clone, Debug, Deserialize)]
struct Column {
    name: String,
    #[serde(rename = "type")]
    type_: String,
    format: String,
    description: String,
    priority: i32,
}

impl Column {
    fn definition(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// `columns.json`: the upstream column definitions.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Columns {
    /// Per `<group>/<plural>` of a built-in printer.
    printers: BTreeMap<String, Vec<Column>>,
    /// `rest.defaultTableConvertor`: Name, Created At.
    default: Vec<Column>,
    /// The Name column of custom resources.
    custom_resource_name: Column,
    /// The Age column a CRD version without `additionalPrinterColumns` is served with.
    custom_resource_age: CustomAge,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomAge {
    #[serde(flatten)]
    column: Column,
    json_path: String,
}

static COLUMNS: LazyLock<Columns> = LazyLock::new(|| {
    // Data compiled into the binary; `columns_data_parses_and_covers_every_printer` checks it.
    serde_json::from_str(include_str!("columns.json")).expect("columns.json is valid")
});

/// How a resource's rows are printed.
enum Printer {
    Builtin(Kind),
    Custom(Vec<PrinterColumn>),
    /// The default convertor: name and RFC 3339 creation time.
    Default,
}

impl Printer {
    fn of(def: &ResourceDefinition) -> Printer {
        if def.is_crd() {
            return Printer::Default;
        }
        if let Some(kind) = Kind::of(&def.group, &def.plural) {
            return Printer::Builtin(kind);
        }
        if def.printer_columns.is_empty() {
            let age = &COLUMNS.custom_resource_age;
            return Printer::Custom(vec![PrinterColumn {
                name: age.column.name.clone(),
                type_: age.column.type_.clone(),
                format: age.column.format.clone(),
                description: age.column.description.clone(),
                priority: age.column.priority,
                json_path: age.json_path.clone(),
            }]);
        }
        Printer::Custom(def.printer_columns.clone())
    }

    fn columns(&self) -> Vec<Value> {
        match self {
            Printer::Builtin(kind) => COLUMNS
                .printers
                .get(kind.columns_key())
                .map(|cols| cols.iter().map(Column::definition).collect())
                .unwrap_or_default(),
            Printer::Custom(columns) => std::iter::once(COLUMNS.custom_resource_name.definition())
                .chain(columns.iter().map(PrinterColumn::definition))
                .collect(),
            Printer::Default => COLUMNS.default.iter().map(Column::definition).collect(),
        }
    }

    fn cells(&self, object: &Value, now: jiff::Timestamp) -> Vec<Value> {
        let name = object
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or_else(|| json!(""));
        match self {
            Printer::Builtin(kind) => kind.cells(object, now),
            Printer::Custom(columns) => std::iter::once(name)
                .chain(columns.iter().map(|c| c.cell(object, now)))
                .collect(),
            Printer::Default => {
                let created = object
                    .pointer("/metadata/creationTimestamp")
                    .cloned()
                    .unwrap_or(Value::Null);
                vec![name, created]
            }
        }
    }

    /// Row conditions: finished pods are marked `Completed` so kubectl can hide them.
    fn conditions(&self, object: &Value) -> Option<Value> {
        if !matches!(self, Printer::Builtin(Kind::Pod)) {
            return None;
        }
        let message = match object.pointer("/status/phase").and_then(Value::as_str)? {
            "Succeeded" => "The pod has completed successfully.",
            "Failed" => "The pod failed.",
            _ => return None,
        };
        let reason = object.pointer("/status/phase").cloned();
        Some(json!([{"type": "Completed", "status": "True", "reason": reason, "message": message}]))
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
