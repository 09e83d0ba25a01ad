//! `x-kubernetes-validations` (apiextensions `pkg/apiserver/schema/cel/validation.go`): each rule
//! is evaluated with `self` bound to the value of its node (typed by the schema: `integer` →
//! int, `number` → double, objects → maps) and, for a transition rule (one that reads
//! `oldSelf`), `oldSelf` bound to the correlated old value — only on update and only when there
//! is one. A false rule gives its `messageExpression`'s text, else its `message`, else
//! `failed rule: <rule>`, as an error of its `reason` (Invalid by default) at its node or at its
//! `fieldPath`. Scalars show their value, objects and lists none. An evaluation error is an
//! Invalid naming the schema type: `<error> evaluating rule: <message or rule>`.
//!
//! Rules run node by node from the root: a node's own rules, then its fields in name order,
//! its map values and list elements. An unchanged value (equal to its old one) is not checked
//! again (ratcheting). The CEL dialect is [`crate::cel_library`]'s.
//!
//! Every evaluation is counted ([`crate::runtime_cost`]): one that costs more than
//! `PerCallLimit` stops, and so do all the rules of an object once together they cost more than
//! `RuntimeCELCostBudget`, each with v1.36's error at the rule's node, after which no further
//! rule runs.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::IdedExpr;
use cel::objects::{Key, Map as CelMap};
use cel::{ExecutionError, Program, Value as Cel};
use serde_json::Value;

use crate::cel_library::{ENV, context};
use crate::field::{BadValue, ErrorType, FieldError};
use crate::node::{Node, child, index};
use crate::runtime_cost::{self, Counted, LIMIT_EXCEEDED, OBJECT_BUDGET, PER_CALL_LIMIT};
use crate::stack;
use crate::validation::type_name;

/// The compiled rules of one schema, by source text; `None` for a rule the parser cannot read.
#[derive(Default)]
pub(crate) struct Compiled(HashMap<String, Option<Arc<Rule>>>);

/// A compiled rule and its counted form.
pub(crate) struct Rule {
    program: Program,
    metered: IdedExpr,
}

impl Compiled {
    /// Compiles every rule and message expression under `schema`.
    pub(crate) fn new(schema: &Value) -> Self {
        // Once per schema, so that its rules do not each grow a stack of their own.
        stack::with_room(|| {
            let mut compiled = Compiled::default();
            compiled.collect(schema);
            compiled
        })
    }

    fn collect(&mut self, schema: &Value) {
        for rule in Node(schema).rules() {
            for key in ["rule", "messageExpression"] {
                if let Some(source) = rule.get(key).and_then(Value::as_str) {
                    let rule = stack::with_room(|| {
                        let program = ENV.compile(source).ok()?;
                        let metered = runtime_cost::instrument(program.expression());
                        Some(Arc::new(Rule { program, metered }))
                    });
                    self.0.insert(source.to_string(), rule);
                }
            }
        }
        match schema {
            Value::Object(map) => map.values().for_each(|v| self.collect(v)),
            Value::Array(items) => items.iter().for_each(|v| self.collect(v)),
            _ => {}
        }
    }

    /// Whether the schema has no rule at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn rule(&self, source: &str) -> Option<&Rule> {
        self.0.get(source)?.as_deref()
    }
}

/// What is left of an object's runtime cost budget; `None` once it is spent or a rule passed
/// its own limit, when no further rule runs.
pub(crate) struct Budget(Option<i64>);

impl Default for Budget {
    fn default() -> Self {
        Budget(Some(OBJECT_BUDGET))
    }
}

/// v1.36's words once the budget is spent.
const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// Evaluates the rules under `schema` for `value` (with `old` on update).
pub(crate) fn validate(
    compiled: &Compiled,
    value: &Value,
    old: Option<&Value>,
    schema: Node<'_>,
    path: &str,
    budget: &mut Budget,
    errors: &mut Vec<FieldError>,
) {
    if old == Some(value) || budget.0.is_none() {
        return;
    }
    let runs = |rule: &Value| {
        rule.get("rule")
            .and_then(Value::as_str)
            .is_some_and(|source| compiled.rule(source).is_some())
    };
    if budget.0.is_some_and(|left| left <= 0) && schema.rules().iter().any(runs) {
        errors.push(out_of_budget(schema, value, path));
        budget.0 = None;
        return;
    }
    for rule in schema.rules() {
        check_rule(compiled, rule, value, old, schema, path, budget, errors);
        if budget.0.is_none() {
            return;
        }
    }
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if let Some(field) = schema.field(key) {
                    let old_field = old.and_then(|o| o.get(key));
                    validate(
                        compiled,
                        v,
                        old_field,
                        field,
                        &child(path, key),
                        budget,
                        errors,
                    );
                }
            }
        }
        Value::Array(items) => {
            let Some(item) = schema.items() else {
                return;
            };
            let old_items = old.and_then(Value::as_array);
            for (i, v) in items.iter().enumerate() {
                let old_item = old_items.and_then(|o| crate::listtype::correlate(schema, o, v));
                validate(compiled, v, old_item, item, &index(path, i), budget, errors);
            }
        }
        _ => {}
    }
}

/// The error at a rule's node once the budget is spent.
fn out_of_budget(schema: Node<'_>, value: &Value, path: &str) -> FieldError {
    FieldError::shown(
        ErrorType::Invalid,
        path,
        &node_type(schema, value),
        OUT_OF_BUDGET.into(),
    )
}

/// The schema's type of a node, as v1.36 shows it in evaluation errors.
fn node_type(schema: Node<'_>, value: &Value) -> Value {
    Value::String(schema.text("type").unwrap_or(type_name(value)).to_string())
}

#[allow(clippy::too_many_arguments)]
fn check_rule(
    compiled: &Compiled,
    rule: &Value,
    value: &Value,
    old: Option<&Value>,
    schema: Node<'_>,
    path: &str,
    budget: &mut Budget,
    errors: &mut Vec<FieldError>,
) {
    let text = |key: &str| rule.get(key).and_then(Value::as_str);
    let Some(program) = text("rule").and_then(|source| compiled.rule(source)) else {
        return;
    };
    let transition = program.program.references().has_variable("oldSelf");
    if transition && old.is_none() {
        return;
    }
    let own = to_cel(value, Some(schema), path.is_empty());
    let previous = old.map(|o| to_cel(o, Some(schema), path.is_empty()));
    let named = || {
        text("message").map_or_else(
            || format!("failed rule: {}", text("rule").unwrap_or_default()),
            str::to_string,
        )
    };
    let shown = || {
        text("message")
            .unwrap_or_else(|| text("rule").unwrap_or_default())
            .trim()
    };
    let counted = evaluate(program, &own, previous.as_ref());
    if !spend(budget, &counted) {
        errors.push(out_of_budget(schema, value, path));
        return;
    }
    let field = match text("fieldPath") {
        Some(relative) => join_field_path(path, relative),
        None => path.to_string(),
    };
    if counted.exceeded {
        let detail = format!(
            "'{LIMIT_EXCEEDED}': no further validation rules will be run due to call cost \
             exceeds limit for rule: {}",
            shown()
        );
        errors.push(FieldError::shown(
            ErrorType::Invalid,
            path,
            &node_type(schema, value),
            detail,
        ));
        budget.0 = None;
        return;
    }
    match counted.result {
        Ok(Cel::Bool(true)) => {}
        Ok(Cel::Bool(false)) => {
            let message = match text("messageExpression").and_then(|s| Some((s, compiled.rule(s)?)))
            {
                Some((source, expression)) => {
                    let counted = evaluate(expression, &own, previous.as_ref());
                    if !spend(budget, &counted) || counted.exceeded {
                        let detail = if counted.exceeded {
                            format!(
                                "no further validation rules will be run due to call cost \
                                 exceeds limit for messageExpression: {source:?}"
                            )
                        } else {
                            "messageExpression evaluation failed due to running out of cost \
                             budget, no further validation rules will be run"
                                .to_string()
                        };
                        let kind = node_type(schema, value);
                        errors.push(FieldError::shown(ErrorType::Invalid, &field, &kind, detail));
                        budget.0 = None;
                        return;
                    }
                    match counted.result {
                        Ok(Cel::String(s)) if !s.trim().is_empty() => s.to_string(),
                        _ => named(),
                    }
                }
                None => named(),
            };
            errors.push(failure(text("reason"), &field, value, message));
        }
        Ok(_) => {}
        Err(error) if unsupported(&error) => {}
        Err(error) => {
            let detail = format!("{} evaluating rule: {}", error_text(&error), shown());
            let kind = node_type(schema, value);
            errors.push(FieldError::shown(ErrorType::Invalid, path, &kind, detail));
        }
    }
}

/// Takes an evaluation's cost from the budget: `false` (and the budget spent) when it costs
/// more than is left.
fn spend(budget: &mut Budget, counted: &Counted) -> bool {
    let Some(left) = budget.0 else {
        return false;
    };
    let cost = i64::try_from(counted.cost).unwrap_or(i64::MAX);
    if cost > left {
        budget.0 = None;
        return false;
    }
    budget.0 = Some(left - cost);
    true
}

fn evaluate(rule: &Rule, own: &Cel, old: Option<&Cel>) -> Counted {
    let mut ctx = context();
    runtime_cost::register(&mut ctx);
    ctx.add_variable_from_value("self", own.clone());
    if let Some(old) = old {
        ctx.add_variable_from_value("oldSelf", old.clone());
    }
    runtime_cost::run(&rule.metered, &ctx, PER_CALL_LIMIT)
}

/// Whether the error comes from a function or overload this CEL dialect lacks.
fn unsupported(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::UndeclaredReference(_) | ExecutionError::NoSuchOverload(_)
    )
}

pub(crate) fn error_text(error: &ExecutionError) -> String {
    match error {
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        other => other.to_string(),
    }
}

/// apiextensions' `fieldErrorForReason`.
fn failure(reason: Option<&str>, field: &str, value: &Value, message: String) -> FieldError {
    let shown = if value.is_object() || value.is_array() {
        BadValue::Omitted
    } else {
        BadValue::Shown(value.clone())
    };
    match reason {
        Some("FieldValueForbidden") => {
            FieldError::new(ErrorType::Forbidden, field, BadValue::Omitted, message)
        }
        Some("FieldValueRequired") => {
            FieldError::new(ErrorType::Required, field, BadValue::Omitted, message)
        }
        Some("FieldValueDuplicate") => {
            FieldError::new(ErrorType::Duplicate, field, shown, String::new())
        }
        _ => FieldError::new(ErrorType::Invalid, field, shown, message),
    }
}

/// `path` followed by a rule's relative `fieldPath` (`.a.b`, `.a['b.c']`, `.list[0]`).
fn join_field_path(path: &str, relative: &str) -> String {
    let mut out = path.to_string();
    let mut rest = relative;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']").unwrap_or(after.len());
            out = child(&out, &after[..end]);
            rest = after.get(end + 2..).unwrap_or("");
        } else if rest.starts_with('[') {
            let end = rest.find(']').map_or(rest.len(), |e| e + 1);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        } else {
            let body = rest.strip_prefix('.').unwrap_or(rest);
            let end = body.find(['.', '[']).unwrap_or(body.len());
            out = child(&out, &body[..end]);
            rest = &body[end..];
        }
    }
    out
}

/// The CEL value of `value` under `schema`: `number` fields are doubles even when written as
/// integers; at the root, `metadata` shows only `name` and `generateName`, as there.
pub(crate) fn to_cel(value: &Value, schema: Option<Node<'_>>, root: bool) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match (schema.map(Node::kind), n.as_i64()) {
            (Some("number"), _) | (_, None) => Cel::Float(n.as_f64().unwrap_or_default()),
            (_, Some(i)) => Cel::Int(i),
        },
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(items) => {
            let item = schema.and_then(Node::items);
            Cel::List(Arc::new(
                items.iter().map(|v| to_cel(v, item, false)).collect(),
            ))
        }
        Value::Object(map) => {
            let mut out = HashMap::new();
            for (key, v) in map {
                let field = schema.and_then(|s| s.field(key));
                let converted = if root && key == "metadata" {
                    root_metadata(v)
                } else {
                    to_cel(v, field, false)
                };
                out.insert(Key::String(Arc::new(key.clone())), converted);
            }
            Cel::Map(CelMap { map: Arc::new(out) })
        }
    }
}

fn root_metadata(meta: &Value) -> Cel {
    let mut out = HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(Value::String(s)) = meta.get(key) {
            out.insert(
                Key::String(Arc::new(key.into())),
                Cel::String(Arc::new(s.clone())),
            );
        }
    }
    Cel::Map(CelMap { map: Arc::new(out) })
}
