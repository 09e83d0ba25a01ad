//! The runtime cost of evaluating a CRD rule, counted as cel-go's cost tracker counts it
//! (cel-go `interpreter/runtimecost.go`, with apiserver `pkg/cel/library/cost.go`'s `CallCost`
//! for the Kubernetes functions), so that the rules of one object stop at v1.36's limits: one
//! evaluation may cost `PerCallLimit` (1,000,000), all the rules of an object together
//! `RuntimeCELCostBudget` (10,000,000) (apiextensions `pkg/apiserver/schema/cel/validation.go`).
//!
//! The `cel` crate evaluates rules without counting, so the rule's AST is rewritten before it
//! runs: every node that costs something passes its value through a counting function
//! registered in the evaluation's context. A variable or field read goes through `@cost_add(1,
//! x)`, a list literal `@cost_add(10, ..)`, a map literal `@cost_add(30, ..)`; a call `f(a, b)`
//! becomes `@cost_call('f', 2, member, f(@cost_arg(0, a), @cost_arg(1, b)))`, whose arguments are
//! kept as they are evaluated, so its cost comes from their actual sizes (a string's length, a
//! list's items). `&&`, `||` and `?:` cost nothing of their own, as in cel-go. The macro
//! loops keep the shapes the crate's evaluator recognises (`@result && pred`, `@result + [x]`):
//! their accumulator reads are charged on the parts beside them. When the count passes the
//! limit the counting function fails the evaluation with cel-go's "operation cancelled: actual
//! cost limit exceeded", and the run reports it even where `||` or `&&` would have absorbed the
//! error.
//!
//! # Where it can differ from v1.36
//! - A call that fails is not charged (cel-go charges its arguments' sizes anyway).
//! - `format.<name>().validate(s)` is charged with the largest named-format regex (128), not
//!   the format's own; the list and set extension functions (`sort`, `distinct`, `slice`,
//!   `flatten`, `sets.*`) cost 1, where cel-go counts their output.

use std::cell::RefCell;

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::extractors::Arguments;
use cel::{Context, ExecutionError, Value};

use crate::stack;

/// v1.36's limit of one evaluation (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// v1.36's budget of all the rules of one object, and of one admission policy binding's
/// validations (`RuntimeCELCostBudget`).
pub const OBJECT_BUDGET: i64 = 10_000_000;
/// cel-go's message when an evaluation passes its limit.
pub(crate) const LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

const ADD: &str = "@cost_add";
const ARG: &str = "@cost_arg";
const CALL: &str = "@cost_call";

/// Function namespaces: a call on one of these names is a global function, not a method.
const NAMESPACES: [&str; 8] = [
    "sets", "lists", "strings", "math", "ip", "format", "base64", "optional",
];

/// The outcome of one counted evaluation.
pub(crate) struct Counted {
    /// The rule's value.
    pub(crate) result: Result<Value, ExecutionError>,
    /// What it cost until it ended.
    pub(crate) cost: u64,
    /// Whether it was stopped at the limit.
    pub(crate) exceeded: bool,
}

#[derive(Default)]
struct Tracker {
    cost: u64,
    limit: u64,
    exceeded: bool,
    /// The arguments of the calls being evaluated, innermost last, with their positions (the
    /// evaluator may read a receiver after the arguments).
    args: Vec<(i64, Value)>,
}

thread_local! {
    static TRACKER: RefCell<Tracker> = RefCell::new(Tracker::default());
}

/// Evaluates `metered` (an [`instrument`]ed AST) in `ctx` (with [`register`]ed functions),
/// stopping when its cost passes `limit`.
pub(crate) fn run(metered: &IdedExpr, ctx: &Context<'_, '_>, limit: u64) -> Counted {
    // The tracker is thread-local: a grown stack runs on the same thread.
    stack::with_room(|| run_here(metered, ctx, limit))
}

fn run_here(metered: &IdedExpr, ctx: &Context<'_, '_>, limit: u64) -> Counted {
    TRACKER.with(|t| {
        *t.borrow_mut() = Tracker {
            limit,
            ..Tracker::default()
        }
    });
    let result = Value::resolve(metered, ctx);
    let tracker = TRACKER.with(|t| std::mem::take(&mut *t.borrow_mut()));
    Counted {
        result,
        cost: tracker.cost,
        exceeded: tracker.exceeded,
    }
}

/// Adds the counting functions to `ctx`.
pub(crate) fn register(ctx: &mut Context<'_, '_>) {
    // Only fails for a name declared already, which these reserved names are not.
    let _ = ctx.add_function(ADD, |cost: i64, value: Value| {
        charge(cost.max(0).unsigned_abs())?;
        Ok::<Value, ExecutionError>(value)
    });
    let _ = ctx.add_function(ARG, |position: i64, value: Value| {
        TRACKER.with(|t| t.borrow_mut().args.push((position, value.clone())));
        value
    });
    let _ = ctx.add_function(CALL, |Arguments(args): Arguments| {
        let [
            Value::String(name),
            Value::Int(count),
            Value::Bool(member),
            result,
        ] = args.as_slice()
        else {
            return Err(ExecutionError::function_error(
                CALL,
                "malformed counted call",
            ));
        };
        let count = usize::try_from(*count).unwrap_or(0);
        let operands: Vec<Value> = TRACKER.with(|t| {
            let mut t = t.borrow_mut();
            let from = t.args.len().saturating_sub(count);
            let mut operands = t.args.split_off(from);
            operands.sort_by_key(|(position, _)| *position);
            operands.into_iter().map(|(_, value)| value).collect()
        });
        charge(call_cost(name, *member, &operands, result))?;
        Ok(result.clone())
    });
}

fn charge(cost: u64) -> Result<(), ExecutionError> {
    TRACKER.with(|t| {
        let mut t = t.borrow_mut();
        t.cost = t.cost.saturating_add(cost);
        if t.cost > t.limit {
            t.exceeded = true;
            return Err(ExecutionError::function_error(CALL, LIMIT_EXCEEDED));
        }
        Ok(())
    })
}

/// `e` with every costing node routed through the counting functions.
pub(crate) fn instrument(e: &IdedExpr) -> IdedExpr {
    let expr = match &e.expr {
        Expr::Literal(_) | Expr::Unspecified => return e.clone(),
        Expr::Ident(_) => return add(1, e.clone()),
        Expr::Select(select) => {
            let mut select = select.clone();
            select.operand = Box::new(instrument(&select.operand));
            let test = select.test;
            let node = with(e, Expr::Select(select));
            // `has()` costs nothing of its own in v1.36 (`PresenceTestHasCost(false)`).
            return if test { node } else { add(1, node) };
        }
        Expr::List(list) => {
            let mut list = list.clone();
            list.elements = list.elements.iter().map(instrument).collect();
            return add(10, with(e, Expr::List(list)));
        }
        Expr::Map(map) => {
            let mut map = map.clone();
            for entry in &mut map.entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(entry) => {
                        entry.key = instrument(&entry.key);
                        entry.value = instrument(&entry.value);
                    }
                    EntryExpr::StructField(field) => field.value = instrument(&field.value),
                }
            }
            return add(30, with(e, Expr::Map(map)));
        }
        Expr::Struct(s) => {
            let mut s = s.clone();
            for entry in &mut s.entries {
                if let EntryExpr::StructField(field) = &mut entry.expr {
                    field.value = instrument(&field.value);
                }
            }
            return add(40, with(e, Expr::Struct(s)));
        }
        Expr::Call(call) => return instrument_call(e, call),
        Expr::Comprehension(c) => Expr::Comprehension(Box::new(instrument_loop(c))),
    };
    with(e, expr)
}

fn instrument_call(e: &IdedExpr, call: &CallExpr) -> IdedExpr {
    let mut call = call.clone();
    if matches!(call.func_name.as_str(), "_&&_" | "_||_" | "_?_:_") {
        call.args = call.args.iter().map(instrument).collect();
        return with(e, Expr::Call(call));
    }
    let namespace = match call.target.as_deref().map(|t| &t.expr) {
        Some(Expr::Ident(name)) if NAMESPACES.contains(&name.as_str()) => Some(name.clone()),
        _ => None,
    };
    let name = match &namespace {
        Some(namespace) => format!("{namespace}.{}", call.func_name),
        None => call.func_name.clone(),
    };
    let member = call.target.is_some() && namespace.is_none();
    if member && let Some(target) = call.target.as_deref() {
        call.target = Some(Box::new(arg(0, instrument(target))));
    }
    let first = usize::from(member);
    let count = call.args.len() + first;
    call.args = (call.args.iter().enumerate())
        .map(|(i, a)| arg(first + i, instrument(a)))
        .collect();
    let inner = with(e, Expr::Call(call));
    synthetic(
        CALL,
        vec![
            literal(LiteralValue::String(name.into())),
            literal(LiteralValue::Int((count as i64).into())),
            literal(LiteralValue::Boolean(member.into())),
            inner,
        ],
    )
}

/// A comprehension with its parts counted, keeping the loop shapes the evaluator recognises:
/// `@result && pred` / `@result || pred` (`all`, `exists`) and `@result + [x]`, maybe guarded
/// (`map`, `filter`), whose accumulator reads are charged beside them.
fn instrument_loop(c: &ComprehensionExpr) -> ComprehensionExpr {
    let mut c = c.clone();
    let accu = c.accu_var.clone();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(name) if *name == accu);
    c.iter_range = instrument(&c.iter_range);
    c.loop_cond = instrument(&c.loop_cond);
    let appending = |step| appending(step, &accu);
    // One append: the accumulator read (unless charged on the guard), the `[x]` list and the
    // list concatenation.
    let append = |call: &CallExpr, step: &IdedExpr, own: u64| {
        let mut call = call.clone();
        if let Some(Expr::List(list)) = call.args.get_mut(1).map(|a| &mut a.expr) {
            list.elements = list
                .elements
                .iter()
                .map(|x| add(own, instrument(x)))
                .collect();
        }
        with(step, Expr::Call(call))
    };
    let step = c.loop_step.clone();
    let mut appends = false;
    c.loop_step = match &step.expr {
        Expr::Call(call)
            if matches!(call.func_name.as_str(), "_&&_" | "_||_")
                && call.args.first().is_some_and(is_accu) =>
        {
            let mut call = call.clone();
            if let Some(pred) = call.args.get_mut(1) {
                *pred = add(1, instrument(pred));
            }
            with(&step, Expr::Call(call))
        }
        Expr::Call(call) if call.func_name == "_?_:_" => match call.args.as_slice() {
            [guard, then, otherwise] if is_accu(otherwise) && appending(then).is_some() => {
                appends = true;
                let mut call = call.clone();
                call.args = vec![
                    add(1, instrument(guard)),
                    appending(then).map_or_else(|| then.clone(), |a| append(a, then, 11)),
                    otherwise.clone(),
                ];
                with(&step, Expr::Call(call))
            }
            _ => instrument(&step),
        },
        _ => match appending(&step) {
            Some(call) => {
                appends = true;
                append(call, &step, 12)
            }
            None => instrument(&step),
        },
    };
    if appends && matches!(c.accu_init.expr, Expr::List(_)) {
        // The `[]` start and the final read of the result, which the evaluator skips.
        c.accu_init = add(11, c.accu_init.clone());
    } else {
        c.accu_init = instrument(&c.accu_init);
        c.result = instrument(&c.result);
    }
    c
}

/// The `@result + [x]` call of a `map` or `filter` step.
fn appending<'e>(step: &'e IdedExpr, accu: &str) -> Option<&'e CallExpr> {
    let Expr::Call(call) = &step.expr else {
        return None;
    };
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(name) if name == accu);
    match call.args.as_slice() {
        [lhs, rhs]
            if call.func_name == "_+_"
                && call.target.is_none()
                && is_accu(lhs)
                && matches!(rhs.expr, Expr::List(_)) =>
        {
            Some(call)
        }
        _ => None,
    }
}

fn with(e: &IdedExpr, expr: Expr) -> IdedExpr {
    IdedExpr { id: e.id, expr }
}

fn synthetic(name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Call(CallExpr {
            func_name: name.to_string(),
            target: None,
            args,
        }),
    }
}

fn literal(value: LiteralValue) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Literal(value),
    }
}

fn add(cost: u64, e: IdedExpr) -> IdedExpr {
    let cost = i64::try_from(cost).unwrap_or(i64::MAX);
    synthetic(ADD, vec![literal(LiteralValue::Int(cost.into())), e])
}

fn arg(position: usize, e: IdedExpr) -> IdedExpr {
    let position = i64::try_from(position).unwrap_or(i64::MAX);
    synthetic(ARG, vec![literal(LiteralValue::Int(position.into())), e])
}

/// cel-go's `actualSize`: a string's characters, bytes, a list's items, a map's entries, else 1.
fn size(value: &Value) -> u64 {
    match value {
        Value::String(s) => s.chars().count() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        _ => 1,
    }
}

/// The Kubernetes lists library's `traversalCost`.
fn traversal(value: &Value) -> u64 {
    match value {
        Value::String(s) => (s.len() as f64 * 0.1) as u64,
        Value::Bytes(b) => (b.len() as f64 * 0.1) as u64,
        Value::List(l) => l.iter().map(traversal).sum(),
        Value::Map(m) => m
            .map
            .iter()
            .map(|(k, v)| traversal(&Value::from(k.clone())) + traversal(v))
            .sum(),
        _ => 1,
    }
}

fn by(n: u64, factor: f64) -> u64 {
    (n as f64 * factor).ceil() as u64
}

fn textual(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Bytes(_))
}

/// The cost of one call from its operands (the receiver first) and result: the Kubernetes
/// libraries' `CallCost`, then cel-go's `costCall`.
fn call_cost(name: &str, member: bool, args: &[Value], result: &Value) -> u64 {
    let first = args.first().map_or(1, size);
    let second = args.get(1).map_or(1, size);
    match name {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map_or(0, traversal)
        }
        "url"
        | "lowerAscii"
        | "upperAscii"
        | "substring"
        | "trim"
        | "jsonpatch.escapeKey"
        | "ip"
        | "cidr"
        | "isIP"
        | "isCIDR"
        | "quantity"
        | "isQuantity"
        | "semver"
        | "isSemver"
        | "startsWith"
        | "endsWith"
        | "strings.quote"
        | "format" => by(first, 0.1),
        "replace" | "split" | "ip.isCanonical" => by(first, 0.2),
        "join" => by(size(result), 0.2),
        "find" | "findAll" if args.len() >= 2 => by(1 + first, 0.1) * by(second, 0.25),
        "containsIP" | "containsCIDR" => {
            let mut cost = by(2, 0.1);
            if name == "containsCIDR" {
                cost += by(1, 0.1) + 1;
            }
            if args.get(1).is_some_and(textual) {
                cost += by(second, 0.1);
            }
            cost
        }
        "validate" => by(1 + second, 0.1) * by(128, 0.25),
        "bytes" if args.first().is_some_and(|a| matches!(a, Value::String(_))) => by(first, 0.1),
        "string" if args.first().is_some_and(|a| matches!(a, Value::Bytes(_))) => by(first, 0.1),
        "@in" if args.get(1).is_some_and(|a| matches!(a, Value::List(_))) => second,
        "_==_" | "_!=_" => {
            if name == "_==_" && args.first().is_some_and(|a| matches!(a, Value::Opaque(_))) {
                1
            } else {
                by(first.min(second), 0.1)
            }
        }
        "_<_" | "_<=_" | "_>_" | "_>=_" if args.first().is_some_and(textual) => {
            by(first.min(second), 0.1)
        }
        "_+_" if args.first().is_some_and(textual) => by(first + second, 0.1),
        "matches" if member => by(1 + first, 0.1) * by(second, 0.25),
        "contains" if args.first().is_some_and(|a| matches!(a, Value::String(_))) => {
            by(first, 0.1) * by(second, 0.1)
        }
        _ => 1,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "runtime_cost_tests.rs"]
mod tests;
