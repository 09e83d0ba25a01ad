//! The `lists` and `sets` libraries (apiserver `pkg/cel/library/lists.go` and `sets.go`):
//! `isSorted()`, `sum()`, `min()`, `max()`, `indexOf()`, `lastIndexOf()` on lists, and
//! `sets.contains()`, `sets.equivalent()`, `sets.intersects()`.
//!
//! # Why some are overloads
//! `indexOf` and `lastIndexOf` are the strings extension's names too; a context function of the
//! same name would be shadowed, so the list forms are declared as member overloads on `list`
//! beside the string ones ([`add_overloads`]). Errors are v1.36's: `min` of an empty list,
//! an integer sum that overflows, elements that cannot be compared.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{DYN_TYPE, LIST_TYPE};
use cel::common::value::CowVal;
use cel::extractors::This;
use cel::{Context, ExecutionError, Value};

use super::opaque::{error, owned, values};

/// Registers the context functions of both libraries in `ctx`.
pub(crate) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("isSorted", |This(list): This<Arc<Vec<Value>>>| {
        for pair in list.windows(2) {
            if order("isSorted", &pair[0], &pair[1])? == Ordering::Greater {
                return Ok(false);
            }
        }
        Ok::<_, ExecutionError>(true)
    });
    let _ = ctx.add_function("sum", |This(list): This<Arc<Vec<Value>>>| sum(&list));
    let _ = ctx.add_function("min", |This(list): This<Arc<Vec<Value>>>| {
        extreme("min", &list, Ordering::Less)
    });
    let _ = ctx.add_function("max", |This(list): This<Arc<Vec<Value>>>| {
        extreme("max", &list, Ordering::Greater)
    });
    let _ = ctx.add_function("sets.contains", |a: Arc<Vec<Value>>, b: Arc<Vec<Value>>| {
        b.iter().all(|x| a.contains(x))
    });
    let _ = ctx.add_function(
        "sets.equivalent",
        |a: Arc<Vec<Value>>, b: Arc<Vec<Value>>| {
            b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x))
        },
    );
    let _ = ctx.add_function(
        "sets.intersects",
        |a: Arc<Vec<Value>>, b: Arc<Vec<Value>>| b.iter().any(|x| a.contains(x)),
    );
}

/// Declares `list.indexOf(x)` and `list.lastIndexOf(x)`.
pub(crate) fn add_overloads(env: &mut cel::Env) {
    // Fail only when declared twice, which the environment's builder never does.
    let _ = env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        |args| index_of(args, false),
    );
    let _ = env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        |args| index_of(args, true),
    );
}

fn index_of<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    last: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let name = if last { "lastIndexOf" } else { "indexOf" };
    let (list, needle) = match &values(&args)?[..] {
        [Value::List(list), needle] => (list.clone(), needle.clone()),
        _ => return Err(super::opaque::no_overload(name)),
    };
    let found = if last {
        list.iter().rposition(|x| *x == needle)
    } else {
        list.iter().position(|x| *x == needle)
    };
    owned(Value::Int(found.map_or(-1, |i| i as i64)))
}

/// The order of two list elements of one comparable type.
fn order(function: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    let comparable = matches!(
        (a, b),
        (Value::Int(_), Value::Int(_))
            | (Value::UInt(_), Value::UInt(_))
            | (Value::Float(_), Value::Float(_))
            | (Value::String(_), Value::String(_))
            | (Value::Bool(_), Value::Bool(_))
            | (Value::Bytes(_), Value::Bytes(_))
    );
    match a.partial_cmp(b) {
        Some(o) if comparable => Ok(o),
        _ => Err(super::opaque::no_overload(function)),
    }
}

/// The least (`want` Less) or greatest (`want` Greater) element; the first of equals.
fn extreme(function: &str, list: &[Value], want: Ordering) -> Result<Value, ExecutionError> {
    let Some(mut best) = list.first() else {
        return Err(error(function, format!("{function} called on empty list")));
    };
    for item in &list[1..] {
        if order(function, item, best)? == want {
            best = item;
        }
    }
    Ok(best.clone())
}

/// The sum of ints, uints or doubles; `0` for an empty list. Integer overflow is an error.
fn sum(list: &[Value]) -> Result<Value, ExecutionError> {
    let overflow = || error("sum", "integer overflow");
    let mut total = match list.first() {
        None => return Ok(Value::Int(0)),
        Some(first) => first.clone(),
    };
    for item in &list[1..] {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(a.checked_add(*b).ok_or_else(overflow)?),
            (Value::UInt(a), Value::UInt(b)) => {
                Value::UInt(a.checked_add(*b).ok_or_else(overflow)?)
            }
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => return Err(super::opaque::no_overload("sum")),
        };
    }
    match total {
        Value::Int(_) | Value::UInt(_) | Value::Float(_) => Ok(total),
        _ => Err(super::opaque::no_overload("sum")),
    }
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
