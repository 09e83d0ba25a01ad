//! A lower bound of the cost cel-go estimates for a CRD rule (cel-go `checker/cost.go`, with
//! the sizes apiserver `pkg/cel/common/schemas.go` gives lists and maps: `maxItems` /
//! `maxProperties`, else as many of the smallest element as fit in a 3 MiB request), so that a
//! rule iterating unbounded lists inside each other is refused when its CRD is written, as
//! apiextensions `pkg/apis/apiextensions/validation/validation.go` refuses it.
//!
//! # Why only a lower bound
//! The real estimate weighs every function by the sizes of its arguments; reproducing it
//! exactly is out of reach here, and refusing a rule v1.36 accepts would break a user's CRD.
//! So each call counts 1 (the logical operators 0), literals and variables 0, and a
//! comprehension its range's largest size times its step: never more than cel-go's maximum.
//! [`SURE_LIMIT`] is where the bound is certain to be "more than 100x" over budget for the rule
//! and for the whole schema, so the messages are v1.36's word for word. Below it (a rule 1.5x or
//! 19.5x over budget, string functions on unbounded strings) the rule is accepted.

use cel::common::ast::{EntryExpr, Expr, IdedExpr};

use crate::cel_types::escape;
use crate::node::Node;

/// v1.36's budget of one expression (`StaticEstimatedCostLimit`).
const RULE_LIMIT: u64 = 10_000_000;
/// v1.36's budget of a whole schema (`StaticEstimatedCRDCostLimit`).
const SCHEMA_LIMIT: u64 = 100_000_000;
/// A bound from which both budgets are exceeded more than 100 times (the schema's is the
/// larger).
pub(crate) const SURE_LIMIT: u64 =
    100 * if SCHEMA_LIMIT > RULE_LIMIT {
        SCHEMA_LIMIT
    } else {
        RULE_LIMIT
    } + 1;

/// `MaxRequestSizeBytes`, the largest body the sizes are estimated from.
const MAX_REQUEST: u64 = 3 * 1024 * 1024;

/// A lower bound of the maximum cost of `source` on a rule at `node`; `None` when it does not
/// parse.
pub(crate) fn lower_bound(source: &str, node: Node<'_>) -> Option<u64> {
    let ast = crate::cel_library::ENV.parser().parse(source).ok()?;
    let mut estimator = Estimator {
        scopes: vec![("self".into(), Some(node)), ("oldSelf".into(), Some(node))],
    };
    Some(estimator.cost(&ast))
}

/// v1.36's words for a cost over `limit` (`getCostErrorMessage`), for costs of more than 100
/// times the limit.
pub(crate) fn over_budget(what: &str) -> String {
    format!(
        "{what} exceeds budget by factor of more than 100x (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

struct Estimator<'a> {
    /// Variables and the schema node of their values, when known.
    scopes: Vec<(String, Option<Node<'a>>)>,
}

impl<'a> Estimator<'a> {
    fn cost(&mut self, e: &IdedExpr) -> u64 {
        match &e.expr {
            Expr::Select(select) => self.cost(&select.operand),
            Expr::Call(call) => {
                let own = u64::from(!matches!(
                    call.func_name.as_str(),
                    "_&&_" | "_||_" | "_?_:_" | "@not_strictly_false" | "!_"
                ));
                let target = call.target.as_deref().map_or(0, |t| self.cost(t));
                call.args.iter().fold(own.saturating_add(target), |sum, a| {
                    sum.saturating_add(self.cost(a))
                })
            }
            Expr::List(list) => list
                .elements
                .iter()
                .fold(0, |sum, x| sum.saturating_add(self.cost(x))),
            Expr::Map(map) => map.entries.iter().fold(0, |sum, entry| match &entry.expr {
                EntryExpr::MapEntry(entry) => sum
                    .saturating_add(self.cost(&entry.key))
                    .saturating_add(self.cost(&entry.value)),
                EntryExpr::StructField(field) => sum.saturating_add(self.cost(&field.value)),
            }),
            Expr::Comprehension(c) => {
                let range = self.cost(&c.iter_range);
                let (iterations, element) = self.range(&c.iter_range);
                let init = self.cost(&c.accu_init);
                let depth = self.scopes.len();
                self.scopes.push((c.accu_var.clone(), None));
                self.scopes.push((c.iter_var.clone(), element));
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push((second.clone(), None));
                }
                let each = self
                    .cost(&c.loop_cond)
                    .saturating_add(self.cost(&c.loop_step));
                self.scopes.truncate(depth + 1);
                let result = self.cost(&c.result);
                self.scopes.truncate(depth);
                range
                    .saturating_add(init)
                    .saturating_add(iterations.saturating_mul(each))
                    .saturating_add(result)
            }
            Expr::Ident(_) | Expr::Literal(_) | Expr::Struct(_) | Expr::Unspecified => 0,
        }
    }

    /// The largest number of elements of a comprehension's range, and the schema of its one
    /// variable (a list's element; a map's key has none).
    fn range(&self, range: &IdedExpr) -> (u64, Option<Node<'a>>) {
        if let Expr::List(list) = &range.expr {
            return (list.elements.len() as u64, None);
        }
        let Some(node) = self.node_of(range) else {
            return (0, None);
        };
        match node.kind() {
            "array" => (max_items(node), node.items()),
            "object" => (max_properties(node), None),
            _ => (0, None),
        }
    }

    /// The schema node of the value `e` gives, when it is a path from `self`.
    fn node_of(&self, e: &IdedExpr) -> Option<Node<'a>> {
        match &e.expr {
            Expr::Ident(name) => self
                .scopes
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .and_then(|(_, node)| *node),
            Expr::Select(select) if !select.test => {
                let parent = self.node_of(&select.operand)?;
                parent
                    .properties()
                    .find(|(key, _)| {
                        key.as_str() == select.field
                            || escape(key).as_deref() == Some(select.field.as_str())
                    })
                    .map(|(_, property)| property)
            }
            Expr::Call(call) if call.func_name == "_[_]" => {
                let parent = self.node_of(call.args.first()?)?;
                match parent.kind() {
                    "array" => parent.items(),
                    _ => additional(parent),
                }
            }
            _ => None,
        }
    }
}

fn additional(node: Node<'_>) -> Option<Node<'_>> {
    node.get("additionalProperties")
        .filter(|a| a.is_object())
        .map(Node)
}

fn limit(node: Node<'_>, key: &str) -> Option<u64> {
    node.get(key)
        .and_then(serde_json::Value::as_i64)
        .map(|n| n.max(0).unsigned_abs())
}

/// `maxItems`, else `estimateMaxArrayItemsFromMinSize`.
fn max_items(node: Node<'_>) -> u64 {
    limit(node, "maxItems").unwrap_or_else(|| {
        let item = node.items().and_then(min_size).unwrap_or(MAX_REQUEST);
        (MAX_REQUEST - 2) / (item + 1)
    })
}

/// `maxProperties`, else `estimateMaxAdditionalPropertiesFromMinSize`; 0 for an object with
/// declared properties only.
fn max_properties(node: Node<'_>) -> u64 {
    let Some(values) = additional(node) else {
        return 0;
    };
    limit(node, "maxProperties").unwrap_or_else(|| {
        let value = min_size(values).unwrap_or(MAX_REQUEST);
        (MAX_REQUEST - 2) / (value + 6)
    })
}

/// The smallest JSON a value of `node` can be (`MinSerializedSize`); `None` where the real
/// server has no type.
fn min_size(node: Node<'_>) -> Option<u64> {
    if node.int_or_string() {
        return Some(1);
    }
    Some(match node.kind() {
        "array" => 2,
        "object" if additional(node).is_some() => 2,
        "object" => {
            let required: Vec<&str> = node
                .get("required")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .collect();
            node.properties()
                .filter(|(name, p)| required.contains(&name.as_str()) && p.default().is_none())
                .filter_map(|(name, p)| Some(name.len() as u64 + min_size(p)? + 4))
                .sum::<u64>()
                + 2
        }
        "string" => match node.text("format") {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        },
        "boolean" => 4,
        "number" | "integer" => 1,
        _ => return None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_iterations_multiply_the_sizes() {
        let schema = json!({"type": "object", "properties": {
            "free": {"type": "array", "items": {"type": "string"}},
            "tags": {"type": "array", "maxItems": 10, "items": {"type": "string"}},
            "map": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let bound = |source: &str| lower_bound(source, Node(&schema)).unwrap();
        // (3 MiB - 2) / 3 strings of at least `""`.
        assert_eq!(bound("self.free.all(t, t == 'a')"), 1_048_575);
        assert_eq!(bound("self.tags.all(t, self.tags.all(u, t == u))"), 10 * 10);
        assert_eq!(
            bound("self.free.all(t, self.free.all(u, t == u))"),
            1_048_575 * 1_048_575
        );
        // (3 MiB - 2) / (2 + 6) keys.
        assert_eq!(bound("self.map.all(k, k == 'a')"), 393_215);
        assert!(bound("self.free.all(t, self.tags.all(u, t == u))") < SURE_LIMIT);
    }
}
