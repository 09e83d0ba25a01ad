//! The `+kubegen:validation:<Name>=<value>` markers: kubebuilder's names and value syntax
//! (controller-tools' `pkg/crd/markers/validation.go`), one spelling only.
//!
//! Their values are checked here, where the marker is read, so a bad value is reported with the
//! tag's line; whether a marker fits its field's type is the checker's job (`check/structs.rs`).

use crate::tag_syntax::{FIELD_TAGS_HINT, TagError, err, list};

/// One `+kubegen:validation:<Name>=` rule, spelled as kubebuilder spells it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Validation {
    /// `Minimum=`.
    Minimum(f64),
    /// `Maximum=`.
    Maximum(f64),
    /// `ExclusiveMinimum=true|false`.
    ExclusiveMinimum(bool),
    /// `ExclusiveMaximum=true|false`.
    ExclusiveMaximum(bool),
    /// `Pattern=`.
    Pattern(String),
    /// `Enum=a;b`.
    Enum(Vec<String>),
    /// `MinLength=`.
    MinLength(u64),
    /// `MaxLength=`.
    MaxLength(u64),
    /// `MinItems=`.
    MinItems(u64),
    /// `MaxItems=`.
    MaxItems(u64),
    /// `UniqueItems=true|false`.
    UniqueItems(bool),
    /// `Format=email`.
    Format(String),
}

/// The validation markers, in kubebuilder's spelling.
const VALIDATION_NAMES: [&str; 12] = [
    "Minimum",
    "Maximum",
    "ExclusiveMinimum",
    "ExclusiveMaximum",
    "Pattern",
    "Enum",
    "MinLength",
    "MaxLength",
    "MinItems",
    "MaxItems",
    "UniqueItems",
    "Format",
];

/// Parses the `<value>` of `+kubegen:validation:<rule>=<value>`.
pub(crate) fn parse(rule: &str, value: &str) -> Result<Validation, TagError> {
    let number = |value: &str| {
        value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                err(
                    format!("`{rule}` value `{value}` is not a number"),
                    "write e.g. `=1`",
                )
            })
    };
    let count = |value: &str| {
        value.parse::<u64>().map_err(|_| {
            err(
                format!("`{rule}` value `{value}` is not a non-negative integer"),
                "write e.g. `=1`",
            )
        })
    };
    let flag = |value: &str| {
        value.parse::<bool>().map_err(|_| {
            err(
                format!("`{rule}` value `{value}` is not `true` or `false`"),
                "write e.g. `=true`",
            )
        })
    };
    Ok(match rule {
        "Minimum" => Validation::Minimum(number(value)?),
        "Maximum" => Validation::Maximum(number(value)?),
        "ExclusiveMinimum" => Validation::ExclusiveMinimum(flag(value)?),
        "ExclusiveMaximum" => Validation::ExclusiveMaximum(flag(value)?),
        "Pattern" => Validation::Pattern(value.to_owned()),
        "Enum" => Validation::Enum(list(value)),
        "MinLength" => Validation::MinLength(count(value)?),
        "MaxLength" => Validation::MaxLength(count(value)?),
        "MinItems" => Validation::MinItems(count(value)?),
        "MaxItems" => Validation::MaxItems(count(value)?),
        "UniqueItems" => Validation::UniqueItems(flag(value)?),
        "Format" => Validation::Format(format(value)?),
        other => {
            let hint = match VALIDATION_NAMES
                .iter()
                .find(|name| name.eq_ignore_ascii_case(other))
            {
                Some(name) => format!("markers are spelled as kubebuilder spells them: `{name}`"),
                None => FIELD_TAGS_HINT.to_owned(),
            };
            return Err(TagError {
                message: format!("unknown validation marker `{other}`"),
                hint,
            });
        }
    })
}

/// The string formats the API server checks (kube-openapi's `strfmt` registry, minus the
/// aliases): anything else it would accept and never check.
const FORMATS: [&str; 24] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

/// Whether `value` is a string format the `Format` marker accepts.
pub(crate) fn is_known_format(value: &str) -> bool {
    FORMATS.contains(&value)
}

fn format(value: &str) -> Result<String, TagError> {
    if FORMATS.contains(&value) {
        Ok(value.to_owned())
    } else {
        Err(err(
            format!("unknown string format `{value}`"),
            &format!("formats the API server checks: {}", FORMATS.join(", ")),
        ))
    }
}
