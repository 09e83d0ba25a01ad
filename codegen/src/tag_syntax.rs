//! What every tag parser shares (the type and field tags in `tags.rs`, the validation markers in
//! `validation.rs`): the error with its hint, list values, and the hint that lists field tags.

/// A tag that could not be parsed: what is wrong and how to fix it.
#[derive(Debug, PartialEq)]
pub(crate) struct TagError {
    pub(crate) message: String,
    pub(crate) hint: String,
}

pub(crate) fn err(message: String, hint: &str) -> TagError {
    TagError {
        message,
        hint: hint.to_owned(),
    }
}

pub(crate) const FIELD_TAGS_HINT: &str = "known field tags: +kubegen:validation:{Minimum,Maximum,\
ExclusiveMinimum,ExclusiveMaximum,Pattern,Enum,MinLength,MaxLength,MinItems,MaxItems,UniqueItems,\
Format}=, +kubegen:default=<json>, +kubegen:required, +kubegen:optional, +kubegen:listType=, \
+kubegen:listMapKeys=, +kubegen:validation:XValidation:rule=\"<CEL>\",message=\"<text>\"";

/// `a, b` or `a;b` -> `["a", "b"]`.
pub(crate) fn list(value: &str) -> Vec<String> {
    value
        .split([',', ';'])
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}
