//! The static cost estimate of a CRD rule, as kube-apiserver computes it when the CRD is
//! written: cel-go `checker/cost.go` over the type-checked AST ([`crate::cel_check`]), with the
//! Kubernetes function costs of apiserver `pkg/cel/library/cost.go`, the list and set extension
//! costs of cel-go `ext/lists.go` and `ext/sets.go`, and the sizes apiextensions
//! `pkg/apiserver/schema/cel/compilation.go` (`sizeEstimator`) reads from the schema:
//! `maxLength` (times 4, bytes per rune), `maxItems`, `maxProperties`, a string enum's longest
//! value, else as many of the smallest element as fit in a 3 MiB request (apiserver
//! `pkg/cel/common/schemas.go`).
//!
//! The estimate walks the expression once, as cel-go does: every variable or field read costs 1
//! (a field of a map or object; `has()` nothing), a list literal 10, a map literal 30, a call its
//! function's cost from the sizes of its arguments plus their own costs, a comprehension its
//! range's largest size times the cost of one step. A path from a variable (`self.spec.tags`,
//! then `@items`, `@keys`, `@values`) names the schema node whose size an argument has.
//!
//! # Where it can differ from v1.36
//! - The types come from this crate's checker, so where it types a call `dyn` (the functions it
//!   does not type: optionals, `sort`, `slice`, `flatten`, `format`, ...) the overload is told
//!   from the function's name and its operands' types instead of cel-go's overload ids.
//! - The parser does not expand two-variable comprehensions (`all(k, v, ..)`,
//!   `transformList`): they are estimated as one call, without their iterations.
//! - `cel.bind` is not parsed here, so a rule using it has no estimate (v1.36 does not declare
//!   it for CRD rules either).
//! - A CRD update whose version keeps its schema re-checks each rule's own budget, which v1.36
//!   skips; the schema's total is checked by both.

use std::collections::HashMap;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use crate::cel_check::{Typed, checked};
use crate::cel_types::CelType;
use crate::node::Node;
use schema_size::{Decl, MAX_REQUEST, min_size};

mod functions;
mod schema_size;

/// cel-go's cost of traversing one character (`StringTraversalCostFactor`).
const TRAVERSAL: f64 = 0.1;
/// cel-go's cost of one regex character on a unit of input (`RegexStringLengthCostFactor`).
const REGEX: f64 = 0.25;
/// The largest regex of a named format (`MaxNameFormatRegexSize`).
const FORMAT_REGEX: f64 = 128.0;
/// The longest named format (`MaxFormatSize`).
const FORMAT_SIZE: u64 = 64;

/// The largest cost cel-go estimates for `source` on a rule at `node` (`resource`: the node is
/// a resource root, the schema's root or an embedded resource) with `variables` declared;
/// `None` when it does not parse or type-check.
pub(crate) fn estimate<'a>(
    source: &str,
    node: Node<'a>,
    resource: bool,
    variables: &[(&str, CelType<'a>)],
) -> Option<u64> {
    crate::stack::with_room(|| estimate_here(source, node, resource, variables))
}

fn estimate_here<'a>(
    source: &str,
    node: Node<'a>,
    resource: bool,
    variables: &[(&str, CelType<'a>)],
) -> Option<u64> {
    let typed = checked(source, variables)?.ok()?;
    let mut estimator = Estimator {
        typed: &typed,
        root: Decl::Schema(node, resource),
        paths: HashMap::new(),
        locals: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
    };
    Some(estimator.cost(&typed.ast).max)
}

/// How many times a rule on a node of this minimum JSON size can run in one object, when an
/// ancestor list or map has no bound (apiextensions `maxCardinality`).
pub(crate) fn max_cardinality(node: Node<'_>) -> u64 {
    let size = min_size(node).unwrap_or(MAX_REQUEST);
    MAX_REQUEST / (size + 1)
}

/// A range of sizes or costs (cel-go's `SizeEstimate` and `CostEstimate`), saturating at
/// `u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Range {
    min: u64,
    max: u64,
}

const UNKNOWN: Range = Range {
    min: 0,
    max: u64::MAX,
};

impl Range {
    const fn fixed(n: u64) -> Range {
        Range { min: n, max: n }
    }

    fn add(self, other: Range) -> Range {
        Range {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    fn mul(self, other: Range) -> Range {
        Range {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    /// cel-go's `MultiplyByCostFactor`: each bound times `factor`, rounded up.
    fn factor(self, factor: f64) -> Range {
        Range {
            min: by_factor(self.min, factor),
            max: by_factor(self.max, factor),
        }
    }

    fn union(self, other: Range) -> Range {
        Range {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

fn by_factor(x: u64, factor: f64) -> u64 {
    let x = x as f64;
    if x > 0.0 && factor > 0.0 && x > u64::MAX as f64 / factor {
        return u64::MAX;
    }
    let ceil = (x * factor).ceil();
    if ceil >= 2f64.powi(64) {
        u64::MAX
    } else {
        ceil as u64
    }
}

/// The sizes of a container's keys (indices) and values (cel-go's `entrySizeEstimate`).
#[derive(Clone, Copy, Debug)]
struct Entries {
    list: bool,
    key: Range,
    value: Range,
}

fn union_entries(a: Option<Entries>, b: Option<Entries>) -> Option<Entries> {
    let (a, b) = (a?, b?);
    Some(Entries {
        list: a.list,
        key: a.key.union(b.key),
        value: a.value.union(b.value),
    })
}

/// A variable in scope: the path of its value, its size and its entries' sizes when known.
#[derive(Clone, Debug)]
struct Local {
    path: Vec<String>,
    size: Option<Range>,
    entries: Option<Entries>,
}

/// What a function estimator sees of an argument (cel-go's `AstNode`).
struct Arg<'t, 'a> {
    expr: &'t IdedExpr,
    /// The path from a variable, empty for none (or an accumulator's).
    path: Vec<String>,
    ty: CelType<'a>,
    /// The size the expression itself tells.
    size: Option<Range>,
}

/// The overloads whose cost cel-go or the Kubernetes libraries compute apart from the others.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    AddString,
    AddList,
    Compare,
    Equality,
    InList,
    MatchesString,
    ContainsString,
    StartsOrEnds,
    StringToBytes,
    BytesToString,
    FormatString,
    Quote,
    Logical,
    Conditional,
    IndexList,
    IndexMap,
    CidrIp,
    ContainsIpString,
    ContainsCidrString,
    ListReverse,
    Other,
}

struct Estimator<'t, 'a> {
    typed: &'t Typed<'a>,
    /// The schema of `self`.
    root: Decl<'a>,
    /// The path from a variable of each expression that has one.
    paths: HashMap<u64, Vec<String>>,
    /// Variables in scope, innermost last.
    locals: HashMap<String, Vec<Local>>,
    /// Sizes computed for expressions.
    sizes: HashMap<u64, Range>,
    /// Entry sizes computed for container expressions.
    entries: HashMap<u64, Entries>,
}

impl<'t, 'a> Estimator<'t, 'a> {
    fn ty(&self, e: &IdedExpr) -> CelType<'a> {
        self.typed.types.get(&e.id).cloned().unwrap_or(CelType::Dyn)
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|stack| stack.last())
    }

    fn push(&mut self, name: &str, local: Local) {
        self.locals.entry(name.to_string()).or_default().push(local);
    }

    fn pop(&mut self, name: &str) {
        if let Some(stack) = self.locals.get_mut(name) {
            stack.pop();
        }
    }

    fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(name) = &e.expr
            && let Some(local) = self.local(name)
        {
            return local.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    fn cost(&mut self, e: &IdedExpr) -> Range {
        match &e.expr {
            Expr::Literal(_) | Expr::Unspecified => Range::fixed(0),
            Expr::Ident(name) => {
                let path = match self.local(name) {
                    Some(local) => local.path.clone(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                Range::fixed(1)
            }
            Expr::Select(select) => {
                // `has()` costs nothing of its own in v1.36 (`PresenceTestHasCost(false)`).
                let operand = self.cost(&select.operand);
                if select.test {
                    return operand;
                }
                let own = match self.ty(&select.operand) {
                    CelType::Map(..) | CelType::Object(_) | CelType::Record(_) => 1,
                    _ => 0,
                };
                let mut path = self.path(&select.operand);
                path.push(select.field.clone());
                self.paths.insert(e.id, path);
                operand.add(Range::fixed(own))
            }
            Expr::Call(_) => self.call(e),
            Expr::List(list) => {
                let mut sum = Range::fixed(0);
                let mut item = Range {
                    min: if list.elements.is_empty() {
                        0
                    } else {
                        u64::MAX
                    },
                    max: 0,
                };
                for x in &list.elements {
                    sum = sum.add(self.cost(x));
                    item = item.union(self.size_or_unknown(x));
                }
                self.entries.insert(
                    e.id,
                    Entries {
                        list: true,
                        key: Range::fixed(1),
                        value: item,
                    },
                );
                sum.add(Range::fixed(10))
            }
            Expr::Map(map) => {
                let mut sum = Range::fixed(0);
                let empty = if map.entries.is_empty() { 0 } else { u64::MAX };
                let mut key = Range { min: empty, max: 0 };
                let mut value = key;
                for entry in &map.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(entry) => {
                            sum = sum.add(self.cost(&entry.key)).add(self.cost(&entry.value));
                            key = key.union(self.size_or_unknown(&entry.key));
                            value = value.union(self.size_or_unknown(&entry.value));
                        }
                        EntryExpr::StructField(field) => sum = sum.add(self.cost(&field.value)),
                    }
                }
                self.entries.insert(
                    e.id,
                    Entries {
                        list: false,
                        key,
                        value,
                    },
                );
                sum.add(Range::fixed(30))
            }
            Expr::Struct(s) => {
                let mut sum = Range::fixed(40);
                for field in &s.entries {
                    if let EntryExpr::StructField(field) = &field.expr {
                        sum = sum.add(self.cost(&field.value));
                    }
                }
                sum
            }
            Expr::Comprehension(_) => self.comprehension(e),
        }
    }

    fn comprehension(&mut self, e: &IdedExpr) -> Range {
        let Expr::Comprehension(c) = &e.expr else {
            return Range::fixed(0);
        };
        let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
        let accu = Local {
            path: self.path(&c.accu_init),
            size: self.size(&c.accu_init),
            entries: self.entry_sizes(&c.accu_init),
        };
        self.push(&c.accu_var, accu);
        let entries = self.entry_sizes(&c.iter_range);
        let list = match entries {
            Some(entries) => entries.list,
            None => matches!(self.ty(&c.iter_range), CelType::List(_)),
        };
        let range_path = self.path(&c.iter_range);
        let with = |sub: &str| {
            let mut path = range_path.clone();
            path.push(sub.to_string());
            path
        };
        let (keys, values) = if list {
            ("@indices", "@items")
        } else {
            ("@keys", "@values")
        };
        match &c.iter_var2 {
            Some(second) => {
                self.push(
                    &c.iter_var,
                    Local {
                        path: with(keys),
                        size: entries.map(|e| e.key),
                        entries: None,
                    },
                );
                self.push(
                    second,
                    Local {
                        path: with(values),
                        size: entries.map(|e| e.value),
                        entries: None,
                    },
                );
            }
            None => {
                let (sub, size) = if list {
                    ("@items", entries.map(|e| e.value))
                } else {
                    ("@keys", entries.map(|e| e.key))
                };
                self.push(
                    &c.iter_var,
                    Local {
                        path: with(sub),
                        size,
                        entries: None,
                    },
                );
            }
        }
        let each = self.cost(&c.loop_cond).add(self.cost(&c.loop_step));
        self.pop(&c.iter_var);
        if let Some(second) = &c.iter_var2 {
            self.pop(second);
        }
        sum = sum.add(self.cost(&c.result));
        self.pop(&c.accu_var);
        let count = self.size_or_unknown(&c.iter_range);
        sum = sum.add(count.mul(each));
        match &c.accu_init.expr {
            Expr::Literal(_) => {
                if let Some(size) = self.size(&c.accu_init) {
                    self.sizes.insert(e.id, size);
                }
            }
            Expr::List(_) | Expr::Map(_) => {
                self.sizes.insert(e.id, count);
                if let Some(step) = self.entry_sizes(&c.loop_step) {
                    self.entries.insert(e.id, step);
                }
            }
            _ => {}
        }
        sum
    }

    fn call(&mut self, e: &IdedExpr) -> Range {
        let Expr::Call(call) = &e.expr else {
            return Range::fixed(0);
        };
        // A namespaced function (`sets.contains`): the checker gives its namespace no type.
        let (name, target) = match call.target.as_deref() {
            Some(IdedExpr {
                expr: Expr::Ident(namespace),
                id,
            }) if !self.typed.types.contains_key(id) => {
                (format!("{namespace}.{}", call.func_name), None)
            }
            target => (call.func_name.clone(), target),
        };
        if name == "dyn"
            && let [arg] = call.args.as_slice()
        {
            let cost = self.cost(arg);
            if let Some(size) = self.size(arg) {
                self.sizes.insert(e.id, size);
            }
            if let Some(entries) = self.entry_sizes(arg) {
                self.entries.insert(e.id, entries);
            }
            return Range::fixed(1).add(cost);
        }
        let mut arg_costs = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            arg_costs.push(self.cost(arg));
        }
        let args: Vec<Arg<'_, 'a>> = call.args.iter().map(|a| self.arg(a)).collect();
        let mut sum = Range::fixed(0);
        let target = match target {
            Some(t) => {
                sum = sum.add(self.cost(t));
                Some(self.arg(t))
            }
            None => None,
        };
        let kinds = self.kinds(e.id, &name, target.as_ref(), &args);
        let mut function = Range {
            min: u64::MAX,
            max: 0,
        };
        let mut result: Option<Range> = None;
        for kind in kinds {
            let (cost, size) = self.function(e, &name, kind, target.as_ref(), &args, &arg_costs);
            function = function.union(cost);
            if let Some(size) = size {
                result = Some(result.map_or(size, |r| r.union(size)));
            }
            if let (Kind::IndexList | Kind::IndexMap, Some(first)) = (kind, call.args.first()) {
                result = self.entry_sizes(first).map(|entries| entries.value);
                let mut path = self.path(first);
                path.push(
                    if kind == Kind::IndexList {
                        "@items"
                    } else {
                        "@values"
                    }
                    .into(),
                );
                self.paths.insert(e.id, path);
            }
            if result.is_none() {
                result = self.size(e);
            }
        }
        if let Some(size) = result {
            self.sizes.insert(e.id, size);
        }
        sum.add(function)
    }

    fn arg<'e>(&mut self, e: &'e IdedExpr) -> Arg<'e, 'a> {
        let mut path = self.path(e);
        if path
            .first()
            .is_some_and(|p| p == "@result" || p == "__result__")
        {
            path.clear();
        }
        Arg {
            expr: e,
            path,
            ty: self.ty(e),
            size: self.size(e),
        }
    }

    /// cel-go's `computeSize`.
    fn size(&mut self, e: &IdedExpr) -> Option<Range> {
        if let Some(size) = self.sizes.get(&e.id) {
            return Some(*size);
        }
        if let Some(size) = literal_size(e) {
            return Some(size);
        }
        let path = self.path(e);
        if let Some(size) = self.schema_size(&path) {
            self.sizes.insert(e.id, size);
            return Some(size);
        }
        if is_scalar(&self.ty(e)) {
            return Some(Range::fixed(1));
        }
        if let Expr::Ident(name) = &e.expr {
            return self.local(name).and_then(|local| local.size);
        }
        None
    }

    fn size_or_unknown(&mut self, e: &IdedExpr) -> Range {
        self.size(e).unwrap_or(UNKNOWN)
    }

    fn entry_sizes(&self, e: &IdedExpr) -> Option<Entries> {
        if let Some(entries) = self.entries.get(&e.id) {
            return Some(*entries);
        }
        if let Expr::Ident(name) = &e.expr {
            return self.local(name).and_then(|local| local.entries);
        }
        None
    }

    /// The size of the value at `path` from the schema (`sizeEstimator.EstimateSize`); the first
    /// element, a variable, stands for the rule's node.
    fn schema_size(&self, path: &[String]) -> Option<Range> {
        let (_, steps) = path.split_first()?;
        let mut decl = self.root;
        for step in steps {
            decl = decl.child(step)?;
        }
        Some(Range {
            min: 0,
            max: decl.max_elements()?,
        })
    }

    /// The Kubernetes estimator's size of an argument: what it tells, else the schema's.
    fn k8s_size(&self, arg: &Arg<'_, 'a>) -> Range {
        arg.size
            .or_else(|| self.schema_size(&arg.path))
            .unwrap_or(UNKNOWN)
    }

    /// The size of the elements of a list argument (`listElementNode`); `None` when it is no
    /// list.
    fn element_size(&self, list: &Arg<'_, 'a>) -> Option<(Range, CelType<'a>)> {
        let element = match &list.ty {
            CelType::List(item) => (**item).clone(),
            CelType::Map(key, _) => (**key).clone(),
            _ => return None,
        };
        let size = if list.path.is_empty() {
            UNKNOWN
        } else {
            let mut path = list.path.clone();
            path.push("@items".into());
            self.schema_size(&path).unwrap_or(UNKNOWN)
        };
        Some((size, element))
    }
}

/// The size a literal tells exactly.
fn literal_size(e: &IdedExpr) -> Option<Range> {
    let size = match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => s.inner().chars().count() as u64,
        Expr::Literal(LiteralValue::Bytes(b)) => b.inner().len() as u64,
        Expr::Literal(_) => 1,
        Expr::List(list) => list.elements.len() as u64,
        Expr::Map(map) => map.entries.len() as u64,
        _ => return None,
    };
    Some(Range::fixed(size))
}

/// A type whose values have one size (cel-go `isScalar`).
fn is_scalar(ty: &CelType<'_>) -> bool {
    match ty {
        CelType::Bool
        | CelType::Double
        | CelType::Duration
        | CelType::Int
        | CelType::Timestamp
        | CelType::Uint => true,
        CelType::Optional(inner) => is_scalar(inner),
        _ => false,
    }
}
