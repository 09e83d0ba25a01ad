//! Where a CRD version's Table columns come from: its `additionalPrinterColumns`, part of a
//! resource's definition (the cells are `crate::table::custom`'s).

use serde_json::Value;

/// One `additionalPrinterColumns` entry of a CRD version (apiextensions
/// `CustomResourceColumnDefinition`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column header, e.g. `Replicas`.
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: String,
    /// OpenAPI format hint, e.g. `name`; may be empty.
    pub format: String,
    /// Column description; empty means "Custom resource definition column (in JSONPath
    /// format): \<path\>", as the real server fills in.
    pub description: String,
    /// 0 for columns kubectl always shows, more for `-o wide` only.
    pub priority: i32,
    /// The JSONPath, e.g. `.spec.replicas`.
    pub json_path: String,
}

impl PrinterColumn {
    /// Reads a CRD's `additionalPrinterColumns` entry.
    pub(crate) fn from_crd(entry: &Value) -> PrinterColumn {
        let text = |field: &str| entry.get(field).and_then(Value::as_str).unwrap_or("");
        PrinterColumn {
            name: text("name").into(),
            type_: text("type").into(),
            format: text("format").into(),
            description: text("description").into(),
            priority: entry
                .get("priority")
                .and_then(Value::as_i64)
                .and_then(|p| i32::try_from(p).ok())
                .unwrap_or(0),
            json_path: text("jsonPath").into(),
        }
    }
}
