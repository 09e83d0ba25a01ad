//! Helpers the Kubernetes libraries share: reading an opaque value (`net.IP`, `net.CIDR`,
//! `kubernetes.URL`, `kubernetes.Semver`, `kubernetes.NamedFormat`) out of a [`Value`], and
//! registering the `string(x)` overloads the standard library's `string` must learn.
//!
//! # Why opaque values
//! v1.36 gives each library a type of its own, so `ip('1.2.3.4') == ip('1.2.3.4')` compares
//! addresses, and a function called on the wrong type is "no such overload". [`cel::objects::Opaque`]
//! gives both: equality through `Eq`, and a type name overloads can match on.

use std::sync::Arc;

use cel::common::types::Type;
use cel::common::value::CowVal;
use cel::objects::Opaque;
use cel::{ExecutionError, Value};

/// The `T` inside `value`, when it is an opaque value of that Rust type.
pub(crate) fn get<T: Opaque>(value: &Value) -> Option<&T> {
    match value {
        Value::Opaque(opaque) => opaque.downcast_ref::<T>(),
        _ => None,
    }
}

/// The `T` inside `value`, or cel-go's `no such overload` naming `function`.
pub(crate) fn expect<'a, T: Opaque>(
    function: &str,
    value: &'a Value,
) -> Result<&'a T, ExecutionError> {
    get(value).ok_or_else(|| no_overload(function))
}

/// cel-go's error for a function called on a value of the wrong type.
pub(crate) fn no_overload(function: &str) -> ExecutionError {
    ExecutionError::function_error(function, "no such overload")
}

/// An error with exactly `message` as its text (what v1.36's `types.NewErr` shows).
pub(crate) fn error(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

/// Wraps `value` as an opaque CEL value.
pub(crate) fn wrap<T: Opaque>(value: T) -> Value {
    Value::Opaque(Arc::new(value))
}

/// Declares `string(x)` for the opaque type `type_name`, giving `to_string` of it.
pub(crate) fn add_string_overload(
    env: &mut cel::Env,
    type_name: &str,
    to_string: cel::common::functions::Function,
) {
    let id = format!("{}_to_string", type_name.replace('.', "_"));
    // Fails only when declared twice, which the environment's builder never does.
    let _ = env.add_overload(
        "string",
        &id,
        vec![Type::new_opaque_type(type_name.to_string())],
        to_string,
    );
}

/// Reads the single argument of a `string(x)` overload and returns `text(x)` as a CEL string.
pub(crate) fn string_of<'b, 'v, T: Opaque>(
    args: Vec<CowVal<'b, 'v>>,
    text: fn(&T) -> String,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = match args.first() {
        Some(arg) => Value::try_from(&**arg)?,
        None => return Err(no_overload("string")),
    };
    let shown = text(expect::<T>("string", &value)?);
    owned(Value::String(Arc::new(shown)))
}

/// The arguments of an overload as values.
pub(crate) fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|arg| Value::try_from(&**arg)).collect()
}

/// `value` as an overload's result.
pub(crate) fn owned<'b, 'v>(value: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    Ok(CowVal::Owned(Box::<dyn cel::common::value::Val>::try_from(
        value,
    )?))
}
