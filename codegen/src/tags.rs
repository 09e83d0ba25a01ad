//! The closed list of tags codegen understands, and their parser.
//!
//! Tags are doc-comment lines that start with `+`, as in code-generator (`// +genclient`). Unlike
//! gengo, which silently ignores tags it does not know, every `+genclient*` / `+kubegen*` /
//! `+groupName` line must parse into [`Tag`], and any other `+...` line is an error too: a typo such
//! as `+genclient:nonNamespace` would otherwise quietly generate a namespaced client.

use crate::model::{CelRule, CustomMethod, Location, PrintColumn, ScaleSubresource, Tag, Verb};
use crate::tag_syntax::{FIELD_TAGS_HINT, TagError, err, list};

/// Where a tag may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// `//!` in `apis/<group>/<version>/mod.rs`.
    Package,
    /// `///` on a struct.
    Type,
    /// `///` on a field.
    Field,
    /// `///` on an enum variant.
    Variant,
}

impl Placement {
    fn describe(self) -> &'static str {
        match self {
            Placement::Package => "a package (`//!` in mod.rs)",
            Placement::Type => "a struct",
            Placement::Field => "a field",
            Placement::Variant => "an enum variant",
        }
    }
}

const TYPE_TAGS_HINT: &str = "known type tags: +genclient, +genclient:nonNamespaced, \
+genclient:noStatus, +genclient:noVerbs, +genclient:readonly, +genclient:onlyVerbs=, \
+genclient:skipVerbs=, +genclient:method=, +kubegen:plural=, +kubegen:singular=, \
+kubegen:shortNames=, +kubegen:categories=, +kubegen:printcolumn:, +kubegen:storageversion";
const VERBS_HINT: &str = "verbs are: create, update, updateStatus, delete, deleteCollection, get, \
list, watch, patch";

/// Parses one tag line (starting with `+`) written at `placement`.
pub(crate) fn parse(
    line: &str,
    placement: Placement,
    location: &Location,
) -> Result<Tag, TagError> {
    let tag = parse_any(line.trim(), location)?;
    let expected = match &tag {
        Tag::GroupName(_) | Tag::ApiApproved(_) | Tag::Imported => Placement::Package,
        Tag::Validation(_)
        | Tag::Json(_)
        | Tag::Default(_)
        | Tag::Required
        | Tag::Optional
        | Tag::ListType(_)
        | Tag::ListMapKeys(_) => Placement::Field,
        // A rule on a struct validates the whole object (`self` is the struct).
        Tag::Rule(_) | Tag::Schema(_) if placement == Placement::Type => Placement::Type,
        Tag::Schema(_) => Placement::Field,
        Tag::Rule(_) => Placement::Field,
        Tag::Value(_) => Placement::Variant,
        _ => Placement::Type,
    };
    if expected == placement {
        Ok(tag)
    } else {
        Err(err(
            format!(
                "tag `{}` is not allowed on {}",
                line.trim(),
                placement.describe()
            ),
            &format!("this tag belongs on {}", expected.describe()),
        ))
    }
}

fn parse_any(line: &str, location: &Location) -> Result<Tag, TagError> {
    let (name, value) = match line.split_once('=') {
        Some((name, value)) => (name, Some(value.trim())),
        None => (line, None),
    };
    let flag = |tag: Tag| match value {
        None => Ok(tag),
        Some(_) => Err(err(
            format!("tag `{name}` takes no value"),
            "write it without `=...`",
        )),
    };
    let need = || match value {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(err(
            format!("tag `{name}` needs a value"),
            "write it as `tag=value`",
        )),
    };
    match name {
        "+groupName" => Ok(Tag::GroupName(need()?.to_owned())),
        "+genclient" => flag(Tag::GenClient),
        "+genclient:nonNamespaced" => flag(Tag::NonNamespaced),
        "+genclient:noStatus" => flag(Tag::NoStatus),
        "+genclient:noVerbs" => flag(Tag::NoVerbs),
        "+genclient:readonly" => flag(Tag::ReadOnly),
        "+genclient:onlyVerbs" => Ok(Tag::OnlyVerbs(verbs(need()?)?)),
        "+genclient:skipVerbs" => Ok(Tag::SkipVerbs(verbs(need()?)?)),
        "+genclient:method" => Ok(Tag::Method(method(need()?, location)?)),
        "+kubegen:plural" => Ok(Tag::Plural(need()?.to_owned())),
        "+kubegen:singular" => Ok(Tag::Singular(need()?.to_owned())),
        "+kubegen:shortNames" => Ok(Tag::ShortNames(list(need()?))),
        "+kubegen:categories" => Ok(Tag::Categories(list(need()?))),
        "+kubegen:storageversion" | "+kubebuilder:storageversion" => flag(Tag::StorageVersion),
        "+kubegen:default" => Ok(Tag::Default(need()?.to_owned())),
        "+kubegen:required" => flag(Tag::Required),
        "+kubegen:optional" => flag(Tag::Optional),
        "+kubegen:listType" => list_type(need()?),
        "+kubegen:listMapKeys" => Ok(Tag::ListMapKeys(list(need()?))),
        "+kubegen:value" => Ok(Tag::Value(need()?.to_owned())),
        "+kubegen:apiApproved" => Ok(Tag::ApiApproved(need()?.to_owned())),
        "+kubegen:imported" => flag(Tag::Imported),
        "+kubegen:json" => Ok(Tag::Json(need()?.to_owned())),
        "+kubegen:schema" => schema_patch(line),
        _ => {
            if let Some(rest) = line.strip_prefix("+kubegen:validation:XValidation:") {
                return Ok(Tag::Rule(cel_rule(rest)?));
            }
            if let Some(rest) = line.strip_prefix("+kubegen:printcolumn:") {
                return Ok(Tag::PrintColumn(print_column(rest)?));
            }
            if let Some(rest) = line
                .strip_prefix("+kubegen:subresource:scale:")
                .or_else(|| line.strip_prefix("+kubebuilder:subresource:scale:"))
            {
                return Ok(Tag::Scale(scale(rest)?));
            }
            if let Some(rule) = name.strip_prefix("+kubegen:validation:") {
                return Ok(Tag::Validation(crate::validation::parse(rule, need()?)?));
            }
            let hint = if name.starts_with("+kubegen:validation") || name.starts_with("+kubegen:d")
            {
                FIELD_TAGS_HINT
            } else {
                TYPE_TAGS_HINT
            };
            Err(err(format!("unknown tag `{line}`"), hint))
        }
    }
}

fn verbs(value: &str) -> Result<Vec<Verb>, TagError> {
    list(value)
        .iter()
        .map(|name| {
            Verb::from_tag(name).ok_or_else(|| err(format!("unknown verb `{name}`"), VERBS_HINT))
        })
        .collect()
}

/// Splits `k=v,k=v` into pairs; values may contain `=` but not `,`.
fn pairs(value: &str) -> Result<Vec<(&str, &str)>, TagError> {
    value
        .split(',')
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| {
                    err(
                        format!("expected `key=value`, found `{pair}`"),
                        "separate pairs with `,`",
                    )
                })
        })
        .collect()
}

fn method(value: &str, location: &Location) -> Result<CustomMethod, TagError> {
    let mut parts = value.splitn(2, ',');
    let name = parts.next().unwrap_or_default().trim().to_owned();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(err(
            format!("custom method name `{name}` is not an UpperCamelCase identifier"),
            "write e.g. `+genclient:method=GetScale,verb=get,subresource=scale,result=Scale`",
        ));
    }
    let mut method = CustomMethod {
        name,
        verb: Verb::Get,
        subresource: None,
        input: None,
        result: None,
        location: location.clone(),
    };
    let mut verb = None;
    for (key, val) in pairs(parts.next().unwrap_or_default())? {
        match key {
            "verb" => {
                verb = Some(Verb::from_tag(val).ok_or_else(|| {
                    err(format!("unknown verb `{val}` in custom method"), VERBS_HINT)
                })?)
            }
            "subresource" => method.subresource = Some(val.to_owned()),
            "input" => method.input = Some(val.to_owned()),
            "result" => method.result = Some(val.to_owned()),
            other => {
                return Err(err(
                    format!("unknown custom method key `{other}`"),
                    "keys are: verb, subresource, input, result",
                ));
            }
        }
    }
    method.verb = verb.ok_or_else(|| {
        err(
            "custom method without `verb=`".to_owned(),
            "add e.g. `,verb=get`",
        )
    })?;
    Ok(method)
}

/// `specpath=..,statuspath=..[,selectorpath=..]`, with the API server's rules on where each path
/// may point (`ValidateCustomResourceDefinitionSubresources`), so a CRD it would refuse is an
/// error here, at the marker.
fn scale(value: &str) -> Result<ScaleSubresource, TagError> {
    const EXAMPLE: &str = "e.g. `+kubegen:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector`";
    let (mut spec, mut status, mut selector) = (None, None, None);
    for (key, val) in pairs(value)? {
        let slot = match key {
            "specpath" => &mut spec,
            "statuspath" => &mut status,
            "selectorpath" => &mut selector,
            other => {
                return Err(err(
                    format!("unknown scale subresource key `{other}`"),
                    "keys are: specpath, statuspath, selectorpath",
                ));
            }
        };
        *slot = Some(val.to_owned());
    }
    let (Some(spec), Some(status)) = (spec, status) else {
        return Err(err(
            "the scale subresource needs `specpath` and `statuspath`".to_owned(),
            EXAMPLE,
        ));
    };
    let under = |path: &str, roots: &[&str]| {
        roots.iter().any(|root| {
            path.strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('.'))
        })
    };
    let misplaced = [
        (!under(&spec, &[".spec"])).then(|| format!("specpath `{spec}` is not under `.spec`")),
        (!under(&status, &[".status"]))
            .then(|| format!("statuspath `{status}` is not under `.status`")),
        selector
            .as_deref()
            .filter(|path| !under(path, &[".spec", ".status"]))
            .map(|path| format!("selectorpath `{path}` is not under `.spec` or `.status`")),
    ];
    if let Some(problem) = misplaced.into_iter().flatten().next() {
        return Err(err(problem, EXAMPLE));
    }
    Ok(ScaleSubresource {
        spec_replicas_path: spec,
        status_replicas_path: status,
        label_selector_path: selector,
    })
}

fn print_column(value: &str) -> Result<PrintColumn, TagError> {
    let mut column = PrintColumn {
        name: String::new(),
        type_: String::new(),
        json_path: String::new(),
        description: None,
        format: None,
        priority: None,
    };
    for (key, val) in pairs(value)? {
        match key {
            "name" => column.name = val.to_owned(),
            "type" => column.type_ = val.to_owned(),
            "jsonPath" => column.json_path = val.to_owned(),
            "description" => column.description = Some(val.to_owned()),
            "format" => column.format = Some(val.to_owned()),
            "priority" => {
                column.priority = Some(val.parse().map_err(|_| {
                    err(
                        format!("printcolumn priority `{val}` is not an integer"),
                        "use 0 or 1",
                    )
                })?)
            }
            other => {
                return Err(err(
                    format!("unknown printcolumn key `{other}`"),
                    "keys are: name, type, jsonPath, description, format, priority",
                ));
            }
        }
    }
    if column.name.is_empty() || column.type_.is_empty() || column.json_path.is_empty() {
        return Err(err(
            "printcolumn needs `name`, `type` and `jsonPath`".to_owned(),
            "e.g. `+kubegen:printcolumn:name=Age,type=date,jsonPath=.metadata.creationTimestamp`",
        ));
    }
    const TYPES: [&str; 5] = ["string", "integer", "number", "boolean", "date"];
    if !TYPES.contains(&column.type_.as_str()) {
        return Err(err(
            format!(
                "printcolumn type `{}` is not an OpenAPI column type",
                column.type_
            ),
            "types are: string, integer, number, boolean, date",
        ));
    }
    Ok(column)
}

/// `+kubegen:schema=<JSON object>`: read from the whole line, since JSON may hold `=`.
fn schema_patch(line: &str) -> Result<Tag, TagError> {
    let text = line
        .split_once('=')
        .map(|(_, value)| value.trim())
        .unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(Tag::Schema(value)),
        _ => Err(err(
            format!("`+kubegen:schema` value `{text}` is not a JSON object"),
            "write a JSON merge patch, e.g. `+kubegen:schema={\"nullable\":true}`",
        )),
    }
}

fn list_type(value: &str) -> Result<Tag, TagError> {
    match value {
        "atomic" | "set" | "map" => Ok(Tag::ListType(value.to_owned())),
        other => Err(err(
            format!("unknown list type `{other}`"),
            "list types are: atomic, set, map",
        )),
    }
}

/// The `reason`s the API server accepts on a CEL rule (`FieldValueInvalid` when none is given).
const REASONS: [&str; 4] = [
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// `rule="<CEL>",message="<text>",messageExpression="<CEL>",reason=<Reason>,fieldPath="<path>"`:
/// values are JSON string literals, so a rule may hold `,` `=` and `"`; `reason` may be bare.
fn cel_rule(text: &str) -> Result<CelRule, TagError> {
    const HINT: &str = "write e.g. `+kubegen:validation:XValidation:rule=\"self.min <= self.max\",\
message=\"min must not exceed max\"` (values are JSON strings)";
    let mut rest = text.trim();
    let mut rule = CelRule::default();
    let mut seen_rule = false;
    while !rest.is_empty() {
        let (key, tail) = rest
            .split_once('=')
            .ok_or_else(|| err(format!("expected `key=\"value\"`, found `{rest}`"), HINT))?;
        let key = key.trim();
        let (value, after) = cel_value(key, tail.trim_start(), HINT)?;
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        match key {
            "rule" => (rule.rule, seen_rule) = (value, true),
            "message" => rule.message = Some(value),
            "messageExpression" => rule.message_expression = Some(value),
            "fieldPath" => rule.field_path = Some(value),
            "optionalOldSelf" => {
                rule.optional_old_self = Some(value.parse().map_err(|_| {
                    err(
                        format!("`optionalOldSelf` value `{value}` is not `true` or `false`"),
                        HINT,
                    )
                })?);
            }
            "reason" if REASONS.contains(&value.as_str()) => rule.reason = Some(value),
            "reason" => {
                return Err(err(
                    format!("unknown XValidation reason `{value}`"),
                    &format!("reasons are: {}", REASONS.join(", ")),
                ));
            }
            other => {
                return Err(err(
                    format!("unknown XValidation key `{other}`"),
                    "keys are: rule, message, messageExpression, reason, fieldPath, optionalOldSelf",
                ));
            }
        }
    }
    if !seen_rule {
        return Err(err("XValidation without `rule=`".to_owned(), HINT));
    }
    Ok(rule)
}

/// One value of an XValidation pair and the text after it: a JSON string, or (for `reason`,
/// as kubebuilder writes it) a bare word.
fn cel_value<'a>(key: &str, tail: &'a str, hint: &str) -> Result<(String, &'a str), TagError> {
    if (key == "reason" || key == "optionalOldSelf") && !tail.starts_with('"') {
        let end = tail.find(',').unwrap_or(tail.len());
        return Ok((tail[..end].trim().to_owned(), &tail[end..]));
    }
    let mut values = serde_json::Deserializer::from_str(tail).into_iter::<String>();
    match values.next() {
        Some(Ok(value)) => Ok((value, &tail[values.byte_offset()..])),
        _ => Err(err(format!("`{key}` needs a JSON string value"), hint)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::Validation;

    fn loc() -> Location {
        Location {
            file: "apis/x/v1/mod.rs".into(),
            line: 3,
        }
    }

    #[test]
    fn parses_only_verbs_in_order_written() {
        let tag = parse("+genclient:onlyVerbs=get, list", Placement::Type, &loc());
        assert_eq!(tag, Ok(Tag::OnlyVerbs(vec![Verb::Get, Verb::List])));
    }

    #[test]
    fn rejects_misspelled_genclient_tag() {
        let error = parse("+genclient:nonNamespace", Placement::Type, &loc())
            .expect_err("must be rejected");
        assert_eq!(error.message, "unknown tag `+genclient:nonNamespace`");
    }

    #[test]
    fn rejects_field_tag_on_type() {
        let error =
            parse("+kubegen:required", Placement::Type, &loc()).expect_err("must be rejected");
        assert_eq!(
            error.message,
            "tag `+kubegen:required` is not allowed on a struct"
        );
    }

    #[test]
    fn parses_printcolumn_with_equals_in_json_path() {
        let tag = parse(
            "+kubegen:printcolumn:name=Ready,type=string,jsonPath=.status.conditions[?(@.type==\"Ready\")].status",
            Placement::Type,
            &loc(),
        );
        let Ok(Tag::PrintColumn(column)) = tag else {
            panic!("{tag:?}")
        };
        assert_eq!(
            column.json_path,
            ".status.conditions[?(@.type==\"Ready\")].status"
        );
    }

    #[test]
    fn parses_custom_method() {
        let tag = parse(
            "+genclient:method=GetScale,verb=get,subresource=scale,result=Scale",
            Placement::Type,
            &loc(),
        );
        let Ok(Tag::Method(method)) = tag else {
            panic!("{tag:?}")
        };
        assert_eq!(
            (method.verb, method.subresource.as_deref()),
            (Verb::Get, Some("scale"))
        );
        assert_eq!(method.result.as_deref(), Some("Scale"));
    }

    #[test]
    fn parses_cel_rule_with_commas_and_quotes_in_json_strings() {
        let tag = parse(
            r#"+kubegen:validation:XValidation:rule="self.a, self.b == \"x=y\"",message="a, b""#,
            Placement::Field,
            &loc(),
        );
        let expected = CelRule {
            rule: r#"self.a, self.b == "x=y""#.to_owned(),
            message: Some("a, b".to_owned()),
            ..CelRule::default()
        };
        assert_eq!(tag, Ok(Tag::Rule(expected)));
    }

    #[test]
    fn cel_rule_is_allowed_on_structs_and_message_is_optional() {
        let tag = parse(
            r#"+kubegen:validation:XValidation:rule="self.min <= self.max""#,
            Placement::Type,
            &loc(),
        );
        let expected = CelRule {
            rule: "self.min <= self.max".to_owned(),
            ..CelRule::default()
        };
        assert_eq!(tag, Ok(Tag::Rule(expected)));
    }

    #[test]
    fn cel_rule_needs_a_json_string() {
        let error = parse(
            "+kubegen:validation:XValidation:rule=self.x > 0",
            Placement::Field,
            &loc(),
        )
        .expect_err("must be rejected");
        assert_eq!(error.message, "`rule` needs a JSON string value");
    }

    #[test]
    fn cel_rule_rejects_unknown_keys_and_reasons() {
        let field = |line: &str| parse(line, Placement::Field, &loc()).expect_err("rejected");
        let error = field(r#"+kubegen:validation:XValidation:rule="true",severity="x""#);
        assert_eq!(error.message, "unknown XValidation key `severity`");
        let error = field(r#"+kubegen:validation:XValidation:rule="true",reason=Nope"#);
        assert_eq!(error.message, "unknown XValidation reason `Nope`");
        let error = field(r#"+kubegen:validation:XValidation:message="no rule""#);
        assert_eq!(error.message, "XValidation without `rule=`");
    }

    #[test]
    fn parses_every_cel_rule_key_with_a_bare_reason() {
        let tag = parse(
            r#"+kubegen:validation:XValidation:rule="self >= oldSelf",message="m",messageExpression="'x ' + self.y",reason=FieldValueForbidden,fieldPath=".y""#,
            Placement::Field,
            &loc(),
        );
        let expected = CelRule {
            rule: "self >= oldSelf".to_owned(),
            message: Some("m".to_owned()),
            message_expression: Some("'x ' + self.y".to_owned()),
            reason: Some("FieldValueForbidden".to_owned()),
            field_path: Some(".y".to_owned()),
            optional_old_self: None,
        };
        assert_eq!(tag, Ok(Tag::Rule(expected)));
        let quoted = parse(
            r#"+kubegen:validation:XValidation:rule="true",reason="FieldValueRequired""#,
            Placement::Field,
            &loc(),
        );
        let Ok(Tag::Rule(rule)) = quoted else {
            panic!("{quoted:?}")
        };
        assert_eq!(rule.reason.as_deref(), Some("FieldValueRequired"));
    }

    #[test]
    fn parses_each_validation_marker_in_kubebuilder_spelling() {
        let cases = [
            ("Minimum=-1.5", Validation::Minimum(-1.5)),
            ("Maximum=128", Validation::Maximum(128.0)),
            ("ExclusiveMinimum=true", Validation::ExclusiveMinimum(true)),
            (
                "ExclusiveMaximum=false",
                Validation::ExclusiveMaximum(false),
            ),
            ("Pattern=^a=b$", Validation::Pattern("^a=b$".to_owned())),
            (
                "Enum=a;b",
                Validation::Enum(vec!["a".to_owned(), "b".to_owned()]),
            ),
            ("MinLength=1", Validation::MinLength(1)),
            ("MaxLength=63", Validation::MaxLength(63)),
            ("MinItems=0", Validation::MinItems(0)),
            ("MaxItems=8", Validation::MaxItems(8)),
            ("UniqueItems=true", Validation::UniqueItems(true)),
            ("Format=email", Validation::Format("email".to_owned())),
        ];
        for (marker, expected) in cases {
            let line = format!("+kubegen:validation:{marker}");
            assert_eq!(
                parse(&line, Placement::Field, &loc()),
                Ok(Tag::Validation(expected)),
                "{line}"
            );
        }
    }

    #[test]
    fn rejects_malformed_validation_markers() {
        let cases = [
            ("Maximum=NaN", "`Maximum` value `NaN` is not a number"),
            (
                "MaxLength=-1",
                "`MaxLength` value `-1` is not a non-negative integer",
            ),
            (
                "UniqueItems=yes",
                "`UniqueItems` value `yes` is not `true` or `false`",
            ),
            ("Format=zipcode", "unknown string format `zipcode`"),
            ("MultipleOf=2", "unknown validation marker `MultipleOf`"),
        ];
        for (marker, message) in cases {
            let line = format!("+kubegen:validation:{marker}");
            let error = parse(&line, Placement::Field, &loc()).expect_err("must be rejected");
            assert_eq!(error.message, message, "{line}");
        }
    }

    #[test]
    fn lower_case_spelling_points_at_kubebuilders() {
        let error = parse("+kubegen:validation:minimum=1", Placement::Field, &loc())
            .expect_err("one spelling only");
        assert_eq!(error.message, "unknown validation marker `minimum`");
        assert_eq!(
            error.hint,
            "markers are spelled as kubebuilder spells them: `Minimum`"
        );
    }

    #[test]
    fn parses_list_type_and_map_keys() {
        assert_eq!(
            parse("+kubegen:listType=map", Placement::Field, &loc()),
            Ok(Tag::ListType("map".to_owned()))
        );
        assert_eq!(
            parse("+kubegen:listMapKeys=type, name", Placement::Field, &loc()),
            Ok(Tag::ListMapKeys(vec!["type".to_owned(), "name".to_owned()]))
        );
        let error =
            parse("+kubegen:listType=bag", Placement::Field, &loc()).expect_err("must be rejected");
        assert_eq!(error.message, "unknown list type `bag`");
    }

    #[test]
    fn value_tag_belongs_on_variants() {
        assert_eq!(
            parse("+kubegen:value=in-progress", Placement::Variant, &loc()),
            Ok(Tag::Value("in-progress".to_owned()))
        );
        let error =
            parse("+kubegen:value=x", Placement::Field, &loc()).expect_err("must be rejected");
        assert_eq!(
            error.message,
            "tag `+kubegen:value=x` is not allowed on a field"
        );
    }

    #[test]
    fn json_schema_and_api_approved_tags_parse_where_they_belong() {
        assert_eq!(
            parse("+kubegen:json=podIP", Placement::Field, &loc()),
            Ok(Tag::Json("podIP".to_owned()))
        );
        assert_eq!(
            parse(
                r#"+kubegen:schema={"oneOf":[{"required":["a=b"]}]}"#,
                Placement::Type,
                &loc()
            ),
            Ok(Tag::Schema(
                serde_json::json!({"oneOf": [{"required": ["a=b"]}]})
            ))
        );
        assert_eq!(
            parse(
                "+kubegen:apiApproved=https://x/pr/1",
                Placement::Package,
                &loc()
            ),
            Ok(Tag::ApiApproved("https://x/pr/1".to_owned()))
        );
        assert_eq!(
            parse("+kubegen:imported", Placement::Package, &loc()),
            Ok(Tag::Imported)
        );
        assert!(parse("+kubegen:imported=yes", Placement::Package, &loc()).is_err());
        assert!(parse("+kubegen:imported", Placement::Type, &loc()).is_err());
        let error =
            parse("+kubegen:schema=[1]", Placement::Field, &loc()).expect_err("object only");
        assert_eq!(
            error.message,
            "`+kubegen:schema` value `[1]` is not a JSON object"
        );
    }

    #[test]
    fn scale_subresource_takes_controller_gen_keys_and_the_servers_path_rules() {
        let want = Ok(Tag::Scale(ScaleSubresource {
            spec_replicas_path: ".spec.replicas".to_owned(),
            status_replicas_path: ".status.replicas".to_owned(),
            label_selector_path: Some(".status.selector".to_owned()),
        }));
        for prefix in ["+kubegen", "+kubebuilder"] {
            let line = format!(
                "{prefix}:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector"
            );
            assert_eq!(parse(&line, Placement::Type, &loc()), want);
        }
        let message = |line: &str| {
            parse(line, Placement::Type, &loc())
                .expect_err("refused")
                .message
        };
        assert_eq!(
            message("+kubegen:subresource:scale:specpath=.spec.replicas"),
            "the scale subresource needs `specpath` and `statuspath`"
        );
        assert_eq!(
            message(
                "+kubegen:subresource:scale:specpath=.status.replicas,statuspath=.status.replicas"
            ),
            "specpath `.status.replicas` is not under `.spec`"
        );
        assert_eq!(
            message("+kubegen:subresource:scale:specpath=.spec.n,statuspath=.spec.n"),
            "statuspath `.spec.n` is not under `.status`"
        );
        assert_eq!(
            message(
                "+kubegen:subresource:scale:specpath=.spec.n,statuspath=.status.n,selectorpath=.metadata.labels"
            ),
            "selectorpath `.metadata.labels` is not under `.spec` or `.status`"
        );
        assert_eq!(
            message("+kubegen:subresource:scale:specpath=.specs.n,statuspath=.status.n"),
            "specpath `.specs.n` is not under `.spec`"
        );
        assert_eq!(
            message("+kubegen:subresource:scale:replicas=.spec.n"),
            "unknown scale subresource key `replicas`"
        );
        assert!(
            parse(
                "+kubegen:subresource:scale:specpath=.spec.n,statuspath=.status.n",
                Placement::Field,
                &loc()
            )
            .is_err()
        );
    }

    #[test]
    fn cel_rule_takes_a_bare_optional_old_self() {
        let tag = parse(
            r#"+kubegen:validation:XValidation:rule="self == oldSelf",optionalOldSelf=true"#,
            Placement::Field,
            &loc(),
        );
        let Ok(Tag::Rule(rule)) = tag else {
            panic!("{tag:?}")
        };
        assert_eq!(rule.optional_old_self, Some(true));
    }

    #[test]
    fn rejects_non_numeric_minimum() {
        let error = parse("+kubegen:validation:Minimum=one", Placement::Field, &loc())
            .expect_err("must be rejected");
        assert_eq!(error.message, "`Minimum` value `one` is not a number");
    }
}
