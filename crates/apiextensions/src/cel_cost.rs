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
//! - `cel.bind` is not parsed here, so a rule using it has no estimate (and is not refused).

use std::collections::HashMap;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use crate::cel_check::{Typed, checked};
use crate::cel_overloads::Overload;
use crate::cel_types::{CelType, declares_type_and_meta, escape};
use crate::node::Node;

/// `MaxRequestSizeBytes`, the largest body the sizes are estimated from.
const MAX_REQUEST: u64 = 3 * 1024 * 1024;
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

    /// The overloads of a call as cel-go's checker would record them.
    fn kinds(
        &self,
        id: u64,
        name: &str,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
    ) -> Vec<Kind> {
        match self.typed.overloads.get(&id) {
            Some(overloads) if !overloads.is_empty() => {
                overloads.iter().map(|o| kind_of(name, o)).collect()
            }
            _ => vec![untyped_kind(name, target, args)],
        }
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

    /// The cost of one overload without its arguments' costs, and its result's size: the list
    /// and set extensions' estimators, then the Kubernetes libraries', then cel-go's own.
    fn function(
        &mut self,
        e: &IdedExpr,
        name: &str,
        kind: Kind,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
        arg_costs: &[Range],
    ) -> (Range, Option<Range>) {
        let arg_sum = arg_costs.iter().fold(Range::fixed(0), |s, c| s.add(*c));
        let with_args = |(cost, size): (Range, Option<Range>)| (cost.add(arg_sum), size);
        if let Some(estimate) = self.extension(name, kind, target, args) {
            return with_args(estimate);
        }
        if let Some(estimate) = self.kubernetes(name, kind, target, args) {
            return with_args(estimate);
        }
        let size = |a: &Arg<'_, 'a>| a.size.unwrap_or(UNKNOWN);
        let one = |a: &[Arg<'_, 'a>]| a.first().map(size).unwrap_or(UNKNOWN);
        match kind {
            Kind::FormatString if target.is_some() => {
                return with_args((target.map_or(UNKNOWN, size).factor(TRAVERSAL), None));
            }
            Kind::StringToBytes if args.len() == 1 => {
                let s = one(args);
                let result = Range {
                    min: s.min,
                    max: s.max.saturating_mul(4),
                };
                return with_args((s.factor(TRAVERSAL), Some(result)));
            }
            Kind::BytesToString if args.len() == 1 => {
                let s = one(args);
                let result = Range {
                    min: s.min / 4,
                    max: s.max,
                };
                return with_args((s.factor(TRAVERSAL), Some(result)));
            }
            Kind::Quote if args.len() == 1 => {
                let s = one(args);
                let result = Range {
                    min: s.min.saturating_add(2),
                    max: s.max.saturating_mul(2).saturating_add(2),
                };
                return with_args((s.factor(TRAVERSAL), Some(result)));
            }
            Kind::StartsOrEnds if args.len() == 1 => {
                return with_args((one(args).factor(TRAVERSAL), None));
            }
            Kind::InList if args.len() == 2 => {
                return with_args((size(&args[1]).factor(1.0), None));
            }
            Kind::MatchesString if args.len() == 1 => {
                if let Some(target) = target {
                    let text = size(target).add(Range::fixed(1)).factor(TRAVERSAL);
                    let regex = one(args).factor(REGEX);
                    return with_args((text.mul(regex), None));
                }
            }
            Kind::ContainsString if args.len() == 1 => {
                if let Some(target) = target {
                    let text = size(target).factor(TRAVERSAL);
                    let sub = one(args).factor(TRAVERSAL);
                    return with_args((text.mul(sub), None));
                }
            }
            Kind::Logical if arg_costs.len() == 2 => {
                let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
                let cost = Range {
                    min: lhs.min,
                    max: lhs.add(rhs).max,
                };
                return (cost, None);
            }
            Kind::Conditional if args.len() == 3 && arg_costs.len() == 3 => {
                let result = size(&args[1]).union(size(&args[2]));
                let entries = union_entries(
                    self.entry_sizes(args[1].expr),
                    self.entry_sizes(args[2].expr),
                );
                if let Some(entries) = entries {
                    self.entries.insert(e.id, entries);
                }
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (cost, Some(result));
            }
            Kind::AddString | Kind::AddList if args.len() == 2 => {
                let result = size(&args[0]).add(size(&args[1]));
                let entries = union_entries(
                    self.entry_sizes(args[0].expr),
                    self.entry_sizes(args[1].expr),
                );
                if let Some(entries) = entries {
                    self.entries.insert(e.id, entries);
                }
                let cost = if kind == Kind::AddList {
                    Range::fixed(1)
                } else {
                    result.factor(TRAVERSAL)
                };
                return with_args((cost, Some(result)));
            }
            Kind::Compare | Kind::Equality if args.len() == 2 => {
                let smallest = size(&args[0]).max.min(size(&args[1]).max);
                let cost = Range {
                    min: u64::from(smallest > 0),
                    max: smallest,
                };
                return with_args((cost.factor(TRAVERSAL), None));
            }
            _ => {}
        }
        with_args((Range::fixed(1), None))
    }

    /// cel-go `ext/lists.go` and `ext/sets.go` estimators.
    fn extension(
        &self,
        name: &str,
        kind: Kind,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
    ) -> Option<(Range, Option<Range>)> {
        let allocating = |factor: f64, size: Range| {
            let cost = size
                .factor(factor)
                .add(Range::fixed(1))
                .add(Range::fixed(10));
            Some((cost, Some(size)))
        };
        let int_literal = |arg: &Arg<'_, 'a>, default: u64| match &arg.expr.expr {
            Expr::Literal(LiteralValue::Int(i)) => u64::try_from(*i.inner()).unwrap_or(default),
            _ => default,
        };
        match name {
            "sets.contains" | "sets.intersects" | "sets.equivalent" if args.len() == 2 => {
                let factor = if name == "sets.equivalent" { 2.0 } else { 1.0 };
                let product = self.k8s_size(&args[0]).mul(self.k8s_size(&args[1]));
                Some((product.factor(factor).add(Range::fixed(1)), None))
            }
            "slice" if args.len() == 2 => {
                let size = self.k8s_size(target?);
                let start = int_literal(&args[0], 0);
                let end = int_literal(&args[1], size.max);
                allocating(1.0, Range::fixed(end.wrapping_sub(start)))
            }
            "lists.range" if target.is_none() && args.len() == 1 => {
                allocating(1.0, Range::fixed(int_literal(&args[0], u64::MAX)))
            }
            "flatten" if args.len() <= 1 => {
                let size = self.k8s_size(target?);
                let depth = args.first().map_or(1, |a| int_literal(a, u64::MAX));
                allocating(depth as f64, size)
            }
            "distinct" if args.is_empty() => {
                let size = self.k8s_size(target?);
                allocating(2.0, size.mul(size))
            }
            "sort" if args.is_empty() => {
                let target = target?;
                let size = self.k8s_size(target);
                let strings = matches!(
                    &target.ty,
                    CelType::List(item) if matches!(**item, CelType::String | CelType::Bytes)
                );
                allocating(if strings { 2.1 } else { 2.0 }, size.mul(size))
            }
            _ if kind == Kind::ListReverse && args.is_empty() => {
                allocating(1.0, self.k8s_size(target?))
            }
            _ => None,
        }
    }

    /// apiserver `pkg/cel/library/cost.go` (`EstimateCallCost`), by function name.
    fn kubernetes(
        &self,
        name: &str,
        kind: Kind,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
    ) -> Option<(Range, Option<Range>)> {
        let fixed = |n: u64| Some((Range::fixed(n), None));
        let first = || args.first().map(|a| self.k8s_size(a));
        match name {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let target = target?;
                let cost = match self.element_size(target) {
                    Some((size, element)) => {
                        let mut each = Range::fixed(1);
                        if matches!(element, CelType::String | CelType::Bytes) {
                            each = each.add(size.factor(TRAVERSAL));
                        }
                        let count = self.k8s_size(target);
                        Range {
                            min: count.min.saturating_mul(each.min),
                            max: count.max.saturating_mul(each.max),
                        }
                    }
                    None => self.k8s_size(target).factor(TRAVERSAL),
                };
                Some((cost, None))
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let size = first()?;
                Some((size.factor(TRAVERSAL), Some(size)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let size = self.k8s_size(target?);
                Some((size.factor(TRAVERSAL), Some(size)))
            }
            "replace" if args.len() >= 2 => {
                let size = self.k8s_size(target?);
                let result = replaced_size(size, self.k8s_size(&args[0]), self.k8s_size(&args[1]));
                Some((size.factor(2.0 * TRAVERSAL), Some(result)))
            }
            "split" => {
                let size = self.k8s_size(target?);
                let max = match args.get(1).map(|a| &a.expr.expr) {
                    Some(Expr::Literal(LiteralValue::Int(i))) => *i.inner() as u64,
                    _ => size.max,
                };
                Some((size.factor(2.0 * TRAVERSAL), Some(Range { min: 0, max })))
            }
            "join" => {
                let target = target?;
                let count = self.k8s_size(target);
                let mut size = match self.element_size(target) {
                    Some((element, _)) => count.mul(element),
                    None => Range::fixed(0),
                };
                if let Some(separator) = first() {
                    let separators = Range {
                        min: count.min.saturating_sub(1),
                        max: count.max.saturating_sub(1),
                    };
                    size = size.add(separator.mul(separators));
                }
                Some((size.factor(TRAVERSAL), Some(size)))
            }
            "find" | "findAll" if !args.is_empty() => {
                let size = self.k8s_size(target?);
                let text = size.add(Range::fixed(1)).factor(TRAVERSAL);
                let regex = first()?.factor(REGEX);
                let result = Range {
                    min: 0,
                    max: size.max,
                };
                Some((text.mul(regex), Some(result)))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver"
                if !args.is_empty() =>
            {
                Some((first()?.factor(TRAVERSAL), None))
            }
            "ip" if kind == Kind::CidrIp => fixed(1),
            "ip" if !args.is_empty() => Some((first()?.factor(TRAVERSAL), None)),
            "ip.isCanonical" if !args.is_empty() => Some((first()?.factor(2.0 * TRAVERSAL), None)),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => fixed(1),
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                let address = Range { min: 4, max: 16 };
                let mut cost = address.add(address).factor(TRAVERSAL);
                if name == "containsCIDR" {
                    cost = cost.add(address.factor(TRAVERSAL)).add(Range::fixed(1));
                }
                if matches!(kind, Kind::ContainsIpString | Kind::ContainsCidrString) {
                    cost = cost.add(first()?.factor(TRAVERSAL));
                }
                Some((cost, None))
            }
            "validate" if !args.is_empty() => {
                let cost = first()?.factor(TRAVERSAL).factor(FORMAT_REGEX * REGEX);
                Some((cost, None))
            }
            "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
            | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
            | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
            | "getQuery" => fixed(1),
            "_==_" if args.len() == 2 && args[0].ty == args[1].ty => match &args[0].ty {
                CelType::Opaque(
                    "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver",
                ) => fixed(1),
                CelType::Opaque("kubernetes.NamedFormat") => Some((
                    Range {
                        min: 1,
                        max: FORMAT_SIZE,
                    }
                    .factor(TRAVERSAL),
                    None,
                )),
                CelType::Opaque("kubernetes.URL") => {
                    // v1.36 reads the right operand's size twice.
                    let max = args[1].size.map_or(1, |s| s.max);
                    Some((Range { min: 1, max }.factor(TRAVERSAL), None))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// The size `replace` leaves (the Kubernetes strings library's estimate).
fn replaced_size(size: Range, from: Range, to: Range) -> Range {
    let (mut count, mut kept) = (Range::fixed(0), Range::fixed(0));
    if from.min == 0 {
        count.max = if size.max < u64::MAX {
            size.max + 1
        } else {
            size.max
        };
        kept.max = size.max;
    } else if to.max <= from.min {
        kept.max = size.max;
    } else {
        count.max = (size.max as f64 / from.min as f64).ceil() as u64;
    }
    if from.max == 0 {
        count.min = if size.min < u64::MAX {
            size.min + 1
        } else {
            size.min
        };
        kept.min = size.min;
    } else if from.max <= to.min {
        kept.min = size.min;
    } else {
        count.min = (size.min as f64 / from.max as f64).ceil() as u64;
    }
    count.mul(to).add(kept)
}

/// The cost class of a typed overload.
fn kind_of(name: &str, overload: &Overload) -> Kind {
    let first = overload.params.first();
    match name {
        "_+_" => match first {
            Some(CelType::String | CelType::Bytes) => Kind::AddString,
            Some(CelType::List(_)) => Kind::AddList,
            _ => Kind::Other,
        },
        "_<_" | "_<=_" | "_>_" | "_>=_" => match first {
            Some(CelType::String | CelType::Bytes) => Kind::Compare,
            _ => Kind::Other,
        },
        "_==_" | "_!=_" => Kind::Equality,
        "@in" => match overload.params.get(1) {
            Some(CelType::List(_)) => Kind::InList,
            _ => Kind::Other,
        },
        "matches" if overload.receiver.is_some() => Kind::MatchesString,
        "contains" => Kind::ContainsString,
        "startsWith" | "endsWith" => Kind::StartsOrEnds,
        "bytes" if first == Some(&CelType::String) => Kind::StringToBytes,
        "string" if first == Some(&CelType::Bytes) => Kind::BytesToString,
        "_&&_" | "_||_" => Kind::Logical,
        "_?_:_" => Kind::Conditional,
        "_[_]" => match first {
            Some(CelType::List(_)) => Kind::IndexList,
            Some(CelType::Map(..)) => Kind::IndexMap,
            _ => Kind::Other,
        },
        "ip" if overload.receiver.is_some() => Kind::CidrIp,
        "containsIP" if first == Some(&CelType::String) => Kind::ContainsIpString,
        "containsCIDR" if first == Some(&CelType::String) => Kind::ContainsCidrString,
        "reverse" if matches!(overload.receiver, Some(CelType::List(_))) => Kind::ListReverse,
        _ => Kind::Other,
    }
}

/// The cost class of a call the checker does not type, from its name and operands.
fn untyped_kind(name: &str, target: Option<&Arg<'_, '_>>, args: &[Arg<'_, '_>]) -> Kind {
    match name {
        "format" if target.is_some() => Kind::FormatString,
        "strings.quote" if args.len() == 1 => Kind::Quote,
        "reverse" if target.is_some_and(|t| matches!(t.ty, CelType::List(_))) => Kind::ListReverse,
        _ => Kind::Other,
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

/// A node of the declared types a path walks (apiserver `DeclType`): a schema node, maybe a
/// resource root, or a string the server adds (`kind`, `metadata.name`, a map's key).
#[derive(Clone, Copy)]
enum Decl<'a> {
    Schema(Node<'a>, bool),
    /// The `metadata` of a resource root: `name` and `generateName`.
    Meta,
    /// A string with no schema of its own (`kind`, `apiVersion`, `metadata.name`).
    String,
    /// A map's key.
    Key,
}

impl<'a> Decl<'a> {
    fn child(self, step: &str) -> Option<Decl<'a>> {
        match self {
            Decl::Schema(node, resource) => {
                if node.int_or_string() {
                    return None;
                }
                match (node.kind(), step) {
                    ("array", "@items" | "@values") => {
                        let items = node.items()?;
                        typed(items).then_some(Decl::Schema(items, items.embedded()))
                    }
                    ("object", "@items" | "@values") => {
                        let values = additional(node)?;
                        typed(values).then_some(Decl::Schema(values, values.embedded()))
                    }
                    ("object", "@keys") => additional(node).map(|_| Decl::Key),
                    ("object", field) if additional(node).is_none() => {
                        if resource && !declares_type_and_meta(node) {
                            match field {
                                "kind" | "apiVersion" => return Some(Decl::String),
                                "metadata" => return Some(Decl::Meta),
                                _ => {}
                            }
                        }
                        let (_, property) = node.properties().find(|(key, _)| {
                            key.as_str() == field || escape(key).as_deref() == Some(field)
                        })?;
                        typed(property).then_some(Decl::Schema(property, property.embedded()))
                    }
                    _ => None,
                }
            }
            Decl::Meta => matches!(step, "name" | "generateName").then_some(Decl::String),
            Decl::String | Decl::Key => None,
        }
    }

    /// `DeclType.MaxElements`; `None` where the server has no declared type.
    fn max_elements(self) -> Option<u64> {
        let Decl::Schema(node, _) = self else {
            return Some(match self {
                Decl::String => MAX_REQUEST - 2,
                _ => 0,
            });
        };
        let max_length = || limit(node, "maxLength");
        if node.int_or_string() {
            return Some(max_length().map_or(MAX_REQUEST - 2, |n| n.saturating_mul(4)));
        }
        Some(match node.kind() {
            "array" => {
                let item = min_size(node.items()?)?;
                limit(node, "maxItems").unwrap_or((MAX_REQUEST - 2) / (item + 1))
            }
            "object" => match additional(node) {
                Some(values) => {
                    let value = min_size(values)?;
                    limit(node, "maxProperties").unwrap_or((MAX_REQUEST - 2) / (value + 6))
                }
                None => 0,
            },
            "string" => match node.text("format") {
                Some("byte") => max_length().unwrap_or(MAX_REQUEST - 2),
                Some("duration" | "date-time") => 32,
                Some("date") => 12,
                _ => match max_length() {
                    Some(n) => n.saturating_mul(4),
                    None => match node.get("enum").and_then(serde_json::Value::as_array) {
                        Some(values) if !values.is_empty() => values
                            .iter()
                            .filter_map(serde_json::Value::as_str)
                            .map(|s| s.len() as u64)
                            .max()
                            .unwrap_or(0),
                        _ => MAX_REQUEST - 2,
                    },
                },
            },
            "boolean" | "number" | "integer" => 0,
            _ => return None,
        })
    }
}

/// Whether the server declares a CEL type for `node`.
fn typed(node: Node<'_>) -> bool {
    min_size(node).is_some()
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

/// The smallest JSON a value of `node` can be (`MinSerializedSize`); `None` where the real
/// server has no type.
fn min_size(node: Node<'_>) -> Option<u64> {
    if node.int_or_string() {
        return Some(1);
    }
    Some(match node.kind() {
        "array" => {
            min_size(node.items()?)?;
            2
        }
        "object" => match additional(node) {
            Some(values) => {
                min_size(values)?;
                2
            }
            None => {
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
        },
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
