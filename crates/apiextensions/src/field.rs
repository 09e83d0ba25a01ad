//! One problem with one field of a custom resource, rendered as apimachinery's `field.Error`
//! (`k8s.io/apimachinery/pkg/util/validation/field/errors.go`): the text the real server joins
//! into a 422's `Status.message` and the reason, field and message of each `StatusCause`.

use serde_json::Value;

/// apimachinery's `field.ErrorType`: which check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueTypeInvalid` (rendered "Invalid value" too).
    TypeInvalid,
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueNotSupported`: not one of an enum's values.
    NotSupported,
    /// `FieldValueTooLong`.
    TooLong,
    /// `FieldValueTooMany`.
    TooMany,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `FieldValueForbidden`.
    Forbidden,
}

impl ErrorType {
    /// The `StatusCause.reason`.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Forbidden => "FieldValueForbidden",
        }
    }

    fn title(self) -> &'static str {
        match self {
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::Required => "Required value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
        }
    }

    /// Whether the real server skips the CEL rules after such an error (`hasBlockingErr` of
    /// apiextensions' `customresource/strategy.go`).
    pub(crate) fn blocks_rules(self) -> bool {
        matches!(
            self,
            ErrorType::NotSupported
                | ErrorType::Required
                | ErrorType::TooLong
                | ErrorType::TooMany
                | ErrorType::TypeInvalid
        )
    }
}

/// The bad value an error shows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BadValue {
    /// Not shown (`field.OmitValueType`, and the types that never show one).
    Omitted,
    /// Shown as Go's `%v` of the decoded JSON value: strings quoted, objects as JSON.
    Shown(Value),
    /// Shown as this text (a Go struct the real server prints, e.g. a `ValidationRule`).
    Text(String),
}

/// One `field.Error`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// What failed.
    pub kind: ErrorType,
    /// The field path, e.g. `spec.items[0].name`; `<nil>` for errors about no field.
    pub field: String,
    pub(crate) value: BadValue,
    pub(crate) detail: String,
}

impl FieldError {
    pub(crate) fn new(kind: ErrorType, field: &str, value: BadValue, detail: String) -> Self {
        FieldError {
            kind,
            field: if field.is_empty() {
                "<nil>".into()
            } else {
                field.into()
            },
            value,
            detail,
        }
    }

    pub(crate) fn shown(kind: ErrorType, field: &str, value: &Value, detail: String) -> Self {
        FieldError::new(kind, field, BadValue::Shown(value.clone()), detail)
    }

    /// The `StatusCause.message`: the error without its field (`ErrorBody`).
    #[must_use]
    pub fn message(&self) -> String {
        let title = self.kind.title();
        let mut out = match (&self.value, self.kind) {
            (_, ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong)
            | (BadValue::Omitted, _) => title.to_string(),
            (BadValue::Shown(value), _) => format!("{title}: {}", render(value)),
            (BadValue::Text(text), _) => format!("{title}: {text}"),
        };
        if !self.detail.is_empty() {
            out.push_str(": ");
            out.push_str(&self.detail);
        }
        out
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message())
    }
}

/// Go's `%v`/`%q` of a decoded JSON value as `field.Error` prints it.
pub(crate) fn render(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::String(s) => quote(s),
        Value::Number(n) => number(n),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// Go's `%v` of a JSON number (int64 or float64).
pub(crate) fn number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let f = n.as_f64().unwrap_or_default();
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        f.to_string()
    }
}

/// Go's `%q` of a string (close enough: JSON escaping).
pub(crate) fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}
