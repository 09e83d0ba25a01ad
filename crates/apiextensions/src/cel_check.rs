//! A CEL type checker over the `cel` crate's parsed AST: what cel-go's `checker` does when
//! kube-apiserver compiles a rule (apiextensions `pkg/apiserver/schema/cel/compilation.go`), so
//! that a CRD whose rule reads an undeclared field, calls a function on the wrong types or
//! returns no bool is refused when it is written, with cel-go's message
//! (`ERROR: <input>:1:5: undefined field 'x'` and the source and caret lines).
//!
//! # What it does not check yet (it accepts instead, never refuses what v1.36 accepts)
//! - A function it does not type ([`crate::cel_overloads::UNTYPED`], and namespaced functions
//!   such as `format.dns1123Label()` or `math.greatest(..)`) is `dyn`, its arguments unchecked.
//! - Optional values (`?.`, `[?]`, `optional.of`), two-variable comprehensions and `cel.bind`
//!   are `dyn`.
//! - Type parameters unify loosely: `dyn` matches anything.
//! - A list or map literal whose elements are not all of one type is refused only where both
//!   types are known here: `[self.name, 1]` is, as in v1.36, but `[self.port, 1]` (an
//!   int-or-string `port` is `dyn`) is accepted, where v1.36 wants the types equal (`dyn` is
//!   also what this checker calls a value it does not type, so it cannot tell the two apart).
//! - A rule the `cel` crate cannot parse is left to evaluation (where it is skipped), as parse
//!   messages would not be cel-go's.

use std::collections::HashMap;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, MapExpr, SelectExpr,
    SourceInfo, StructExpr,
};

use crate::cel_overloads::{OVERLOADS, Overload, UNTYPED};
use crate::cel_types::CelType;

/// Type-checks `source` with `variables` declared: its result type, or cel-go's issues text
/// (`ERROR: <input>:1:5: ...` with source and caret lines, one block per error). `None` when
/// the parser cannot read it.
pub(crate) fn check<'a>(
    source: &str,
    variables: &[(&str, CelType<'a>)],
) -> Option<Result<CelType<'a>, String>> {
    Some(checked(source, variables)?.map(|typed| typed.result))
}

/// A rule that type-checks: its AST, the type of every expression and the overloads each call
/// may resolve to (what cel-go's checked AST records, read by [`crate::cel_cost`]).
pub(crate) struct Typed<'a> {
    /// The parsed expression.
    pub(crate) ast: IdedExpr,
    /// The type of the whole expression.
    pub(crate) result: CelType<'a>,
    /// The type of each expression, by id.
    pub(crate) types: HashMap<u64, CelType<'a>>,
    /// The overloads each call matches, by id; absent for a call the checker does not type.
    pub(crate) overloads: HashMap<u64, Vec<&'static Overload>>,
}

/// Type-checks `source` as [`check`] does, keeping what the cost estimator reads.
pub(crate) fn checked<'a>(
    source: &str,
    variables: &[(&str, CelType<'a>)],
) -> Option<Result<Typed<'a>, String>> {
    crate::stack::with_room(|| checked_here(source, variables))
}

fn checked_here<'a>(
    source: &str,
    variables: &[(&str, CelType<'a>)],
) -> Option<Result<Typed<'a>, String>> {
    let (ast, info) = crate::cel_library::ENV
        .parser()
        .parse_with_source_info(source)
        .ok()?;
    let mut checker = Checker {
        scopes: variables
            .iter()
            .map(|(name, ty)| ((*name).to_string(), ty.clone()))
            .collect(),
        errors: Vec::new(),
        types: HashMap::new(),
        overloads: HashMap::new(),
    };
    let result = checker.expr(&ast);
    if checker.errors.is_empty() {
        // cel-go runs its validators only on an expression that type-checks.
        homogeneous_literals(&ast, &checker.types, false, &mut checker.errors);
    }
    if checker.errors.is_empty() {
        return Some(Ok(Typed {
            ast,
            result,
            types: checker.types,
            overloads: checker.overloads,
        }));
    }
    // cel-go prints its errors in source order, whichever check found them first.
    let at = |id: &u64| info.offset_for(*id).map_or(0, |(start, _)| start);
    checker.errors.sort_by_key(|(id, _)| at(id));
    let blocks: Vec<String> = checker
        .errors
        .iter()
        .map(|(id, message)| issue(&info, source, *id, message))
        .collect();
    Some(Err(blocks.join("\n")))
}

/// One error as cel-go prints it: position, message, the source line and a caret under the
/// column.
fn issue(info: &SourceInfo, source: &str, id: u64, message: &str) -> String {
    let start = info.offset_for(id).map_or(0, |(start, _)| start as usize);
    let before = source.get(..start).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count();
    let text = source[line_start..].lines().next().unwrap_or("");
    format!(
        "ERROR: <input>:{line}:{}: {message}\n | {text}\n | {}^",
        column + 1,
        ".".repeat(column)
    )
}

struct Checker<'a> {
    /// Declared variables, innermost last (comprehension variables shadow).
    scopes: Vec<(String, CelType<'a>)>,
    /// `(expression id, message)`, in the order found.
    errors: Vec<(u64, String)>,
    /// The type found for each expression.
    types: HashMap<u64, CelType<'a>>,
    /// The overloads each typed call matches.
    overloads: HashMap<u64, Vec<&'static Overload>>,
}

impl<'a> Checker<'a> {
    fn lookup(&self, name: &str) -> Option<CelType<'a>> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    fn error(&mut self, id: u64, message: String) -> CelType<'a> {
        self.errors.push((id, message));
        CelType::Dyn
    }

    fn expr(&mut self, e: &IdedExpr) -> CelType<'a> {
        let ty = self.untracked(e);
        self.types.insert(e.id, ty.clone());
        ty
    }

    fn untracked(&mut self, e: &IdedExpr) -> CelType<'a> {
        match &e.expr {
            Expr::Literal(literal) => literal_type(literal),
            Expr::Ident(name) => match self.lookup(name) {
                Some(ty) => ty,
                None if is_type_name(name) => CelType::Type,
                None => self.error(
                    e.id,
                    format!("undeclared reference to '{name}' (in container '')"),
                ),
            },
            Expr::Select(select) => self.select(e.id, select),
            Expr::Call(call) => self.call(e.id, call),
            Expr::List(list) => {
                let items: Vec<CelType<'a>> = list.elements.iter().map(|x| self.expr(x)).collect();
                CelType::List(Box::new(common(items)))
            }
            Expr::Map(map) => {
                let (mut keys, mut values) = (Vec::new(), Vec::new());
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        keys.push(self.expr(&entry.key));
                        values.push(self.expr(&entry.value));
                    }
                }
                CelType::Map(Box::new(common(keys)), Box::new(common(values)))
            }
            Expr::Comprehension(comprehension) => self.comprehension(e.id, comprehension),
            Expr::Struct(_) | Expr::Unspecified => CelType::Dyn,
        }
    }

    fn select(&mut self, id: u64, select: &SelectExpr) -> CelType<'a> {
        if let Expr::Ident(root) = &select.operand.expr
            && self.lookup(root).is_none()
            && (is_type_name(root) || root == "google")
        {
            // A qualified type name (`google.protobuf.Duration`): not typed here.
            return CelType::Dyn;
        }
        let operand = self.expr(&select.operand);
        let field = match operand {
            CelType::Dyn => CelType::Dyn,
            CelType::Object(object) => match object.field(&select.field) {
                Some(ty) => ty,
                None => return self.error(id, format!("undefined field '{}'", select.field)),
            },
            CelType::Record(record) => match record.field(&select.field) {
                Some(ty) => ty,
                None => return self.error(id, format!("undefined field '{}'", select.field)),
            },
            CelType::Map(_, value) => *value,
            other => {
                return self.error(
                    id,
                    format!("type '{other}' does not support field selection"),
                );
            }
        };
        if select.test { CelType::Bool } else { field }
    }

    fn comprehension(&mut self, id: u64, c: &ComprehensionExpr) -> CelType<'a> {
        let range = self.expr(&c.iter_range);
        // A list's one variable is its element, a map's its key.
        let (first, second, one) = match range {
            CelType::List(item) => (CelType::Int, *item.clone(), *item),
            CelType::Map(key, value) => (*key.clone(), *value, *key),
            CelType::Dyn => (CelType::Dyn, CelType::Dyn, CelType::Dyn),
            other => {
                return self.error(
                    id,
                    format!(
                        "expression of type '{other}' cannot be the range of a comprehension \
                         (must be list, map, or dynamic)"
                    ),
                );
            }
        };
        let depth = self.scopes.len();
        let accu = self.expr(&c.accu_init);
        self.scopes.push((c.accu_var.clone(), accu.clone()));
        match &c.iter_var2 {
            Some(var2) => {
                self.scopes.push((c.iter_var.clone(), first));
                self.scopes.push((var2.clone(), second));
            }
            None => self.scopes.push((c.iter_var.clone(), one)),
        }
        // `map` and `filter` start from `[]`: what the step appends tells the item type.
        let accu = match (&accu, appended(&c.loop_step, &c.accu_var)) {
            (CelType::List(item), Some(list)) if item.is_dyn() => {
                let errors = self.errors.len();
                let hint = self.expr(list);
                self.errors.truncate(errors);
                hint
            }
            _ => accu,
        };
        if let Some(slot) = self.scopes.get_mut(depth) {
            slot.1 = accu.clone();
        }
        self.expr(&c.loop_cond);
        self.expr(&c.loop_step);
        self.scopes.truncate(depth);
        self.scopes.push((c.accu_var.clone(), accu));
        let result = self.expr(&c.result);
        self.scopes.truncate(depth);
        result
    }

    /// A call the checker does not type: `dyn`, its operands typed for the cost estimate but
    /// not checked.
    fn untyped(&mut self, target: Option<&IdedExpr>, args: &[IdedExpr]) -> CelType<'a> {
        let errors = self.errors.len();
        for operand in target.into_iter().chain(args) {
            self.expr(operand);
        }
        self.errors.truncate(errors);
        CelType::Dyn
    }

    fn call(&mut self, id: u64, call: &CallExpr) -> CelType<'a> {
        // A `map` step is checked twice (for its item type, then for real): keep the last.
        self.overloads.remove(&id);
        let mut name = call.func_name.clone();
        let mut target = call.target.as_deref();
        if let Some(IdedExpr {
            expr: Expr::Ident(namespace),
            ..
        }) = target
            && self.lookup(namespace).is_none()
        {
            name = format!("{namespace}.{name}");
            target = None;
            if !OVERLOADS.contains_key(name.as_str()) {
                return self.untyped(target, &call.args);
            }
        }
        if UNTYPED.contains(&name.as_str()) {
            return self.untyped(target, &call.args);
        }
        let Some(overloads) = OVERLOADS.get(name.as_str()) else {
            return self.error(
                id,
                format!("undeclared reference to '{name}' (in container '')"),
            );
        };
        let receiver = target.map(|t| self.expr(t));
        let args: Vec<CelType<'a>> = call.args.iter().map(|a| self.expr(a)).collect();
        let same_shape: Vec<&Overload> = overloads
            .iter()
            .filter(|o| o.receiver.is_some() == receiver.is_some() && o.params.len() == args.len())
            .collect();
        if same_shape.is_empty() {
            // A shape this table does not declare (a newer library's overload): not refused.
            return CelType::Dyn;
        }
        let mut result: Option<CelType<'a>> = None;
        for overload in same_shape {
            if let Some(found) = resolve(overload, receiver.as_ref(), &args) {
                self.overloads.entry(id).or_default().push(overload);
                result = Some(match result {
                    None => found,
                    Some(previous) if previous == found => previous,
                    Some(_) => CelType::Dyn,
                });
            }
        }
        match result {
            Some(ty) => ty,
            None => {
                let list: Vec<String> = args.iter().map(shown).collect();
                let shown = match &receiver {
                    Some(r) => format!("{}.({})", shown(r), list.join(", ")),
                    None => format!("({})", list.join(", ")),
                };
                self.error(
                    id,
                    format!("found no matching overload for '{name}' applied to '{shown}'"),
                )
            }
        }
    }
}

/// The list a `map` or `filter` step appends to its accumulator `accu`: `accu + [x]`, maybe
/// inside the filter's conditional.
fn appended<'e>(step: &'e IdedExpr, accu: &str) -> Option<&'e IdedExpr> {
    let Expr::Call(call) = &step.expr else {
        return None;
    };
    match (call.func_name.as_str(), call.args.as_slice()) {
        ("_+_", [first, list]) if first.expr == Expr::Ident(accu.to_string()) => Some(list),
        ("_?_:_", [_, then, _]) => appended(then, accu),
        _ => None,
    }
}

/// The result of `overload` for these argument types, `None` when they do not fit.
fn resolve<'a>(
    overload: &Overload,
    receiver: Option<&CelType<'a>>,
    args: &[CelType<'a>],
) -> Option<CelType<'a>> {
    let mut bindings: Vec<(&'static str, CelType<'a>)> = Vec::new();
    if let (Some(pattern), Some(actual)) = (&overload.receiver, receiver)
        && !unify(pattern, actual, &mut bindings)
    {
        return None;
    }
    for (pattern, actual) in overload.params.iter().zip(args) {
        if !unify(pattern, actual, &mut bindings) {
            return None;
        }
    }
    Some(substitute(&overload.result, &bindings))
}

/// Whether `actual` fits `pattern`, binding type parameters (a parameter bound to `dyn` or
/// `null` takes the first more precise type).
fn unify<'a>(
    pattern: &CelType<'static>,
    actual: &CelType<'a>,
    bindings: &mut Vec<(&'static str, CelType<'a>)>,
) -> bool {
    match (pattern, actual) {
        (_, CelType::Dyn) | (CelType::Dyn, _) => true,
        (CelType::Param(name), _) => match bindings.iter_mut().find(|(n, _)| n == name) {
            None => {
                bindings.push((name, actual.clone()));
                true
            }
            Some((_, bound)) => match (&*bound, actual) {
                (CelType::Dyn, _) => {
                    *bound = actual.clone();
                    true
                }
                (CelType::Null, a) if takes_null(a) => {
                    *bound = actual.clone();
                    true
                }
                (b, a) => assignable(b, a),
            },
        },
        (CelType::List(p), CelType::List(a)) => unify(p, a, bindings),
        (CelType::Map(pk, pv), CelType::Map(ak, av)) => {
            unify(pk, ak, bindings) && unify(pv, av, bindings)
        }
        (CelType::Optional(p), CelType::Optional(a)) => unify(p, a, bindings),
        (p, CelType::Null) => takes_null(p),
        (p, a) => same_kind(p, a),
    }
}

/// Whether a `null` fits where `ty` is expected, or `ty` where a `null` is (cel-go's
/// `internalIsAssignableNull`): objects, timestamps, durations, library types and optionals take
/// it; strings, numbers, bools, bytes, lists and maps do not (`self.name == null` is refused
/// with "found no matching overload for '_==_' applied to '(string, null)'").
fn takes_null(ty: &CelType<'_>) -> bool {
    matches!(
        ty,
        CelType::Dyn
            | CelType::Null
            | CelType::Object(_)
            | CelType::Record(_)
            | CelType::Timestamp
            | CelType::Duration
            | CelType::Opaque(_)
            | CelType::Optional(_)
    )
}

/// Whether two concrete types match, `dyn` inside aggregates matching anything.
fn assignable(bound: &CelType<'_>, actual: &CelType<'_>) -> bool {
    match (bound, actual) {
        (CelType::Dyn, _) | (_, CelType::Dyn) => true,
        (CelType::Null, other) | (other, CelType::Null) => takes_null(other),
        (CelType::List(b), CelType::List(a)) => assignable(b, a),
        (CelType::Map(bk, bv), CelType::Map(ak, av)) => assignable(bk, ak) && assignable(bv, av),
        (CelType::Optional(b), CelType::Optional(a)) => assignable(b, a),
        (b, a) => b == a,
    }
}

/// A non-generic pattern against a concrete type.
fn same_kind(pattern: &CelType<'static>, actual: &CelType<'_>) -> bool {
    match (pattern, actual) {
        (CelType::Opaque(p), CelType::Opaque(a)) => p == a,
        (p, a) => std::mem::discriminant(p) == std::mem::discriminant(a),
    }
}

fn substitute<'a>(
    pattern: &CelType<'static>,
    bindings: &[(&'static str, CelType<'a>)],
) -> CelType<'a> {
    match pattern {
        CelType::Param(name) => bindings
            .iter()
            .find(|(n, _)| n == name)
            .map_or(CelType::Dyn, |(_, t)| t.clone()),
        CelType::List(item) => CelType::List(Box::new(substitute(item, bindings))),
        CelType::Map(k, v) => CelType::Map(
            Box::new(substitute(k, bindings)),
            Box::new(substitute(v, bindings)),
        ),
        CelType::Optional(inner) => CelType::Optional(Box::new(substitute(inner, bindings))),
        other => other.clone(),
    }
}

/// cel-go's spelling of a type in a checker message (`FormatCELType`): [`CelType`]'s `Display`,
/// except that the null type is `null` there (`null_type` is its name as a value).
fn shown(ty: &CelType<'_>) -> String {
    match ty {
        CelType::Null => "null".to_owned(),
        CelType::List(item) => format!("list({})", shown(item)),
        CelType::Map(key, value) => format!("map({}, {})", shown(key), shown(value)),
        CelType::Optional(inner) => format!("optional_type({})", shown(inner)),
        other => other.to_string(),
    }
}

/// cel-go's `HomogeneousAggregateLiterals` validator, which Kubernetes turns on: in a list
/// literal every element, and in a map literal every key and every value, must have exactly
/// the type of the first (`[self.name, 1]`: "expected type 'string' but found 'int'", at the
/// first element that differs, once per literal). The arguments of `format()` are exempt
/// (`exempt`: under such a call). Where a type here is `dyn` the comparison is skipped (see
/// the module doc), and so is an empty literal (`[]`, `{}`), which cel-go types as its
/// neighbours.
fn homogeneous_literals(
    e: &IdedExpr,
    types: &HashMap<u64, CelType<'_>>,
    exempt: bool,
    errors: &mut Vec<(u64, String)>,
) {
    match &e.expr {
        Expr::List(list) if !exempt => {
            let items = (list.elements.iter().enumerate())
                .filter(|(i, _)| !list.optional_indices.contains(i))
                .map(|(_, item)| item);
            errors.extend(first_mismatch(items, types));
        }
        Expr::Map(map) if !exempt => {
            let entries: Vec<_> = (map.entries.iter())
                .filter_map(|entry| match &entry.expr {
                    EntryExpr::MapEntry(entry) if !entry.optional => Some(entry),
                    _ => None,
                })
                .collect();
            // Keys and values apart: `{'a': 1, 2: 'x'}` has two errors.
            errors.extend(first_mismatch(
                entries.iter().map(|entry| &entry.key),
                types,
            ));
            errors.extend(first_mismatch(
                entries.iter().map(|entry| &entry.value),
                types,
            ));
        }
        _ => {}
    }
    let exempt = exempt || matches!(&e.expr, Expr::Call(call) if call.func_name == "format");
    for child in children(e) {
        homogeneous_literals(child, types, exempt, errors);
    }
}

/// The first of `items` whose type is not the first one's, with cel-go's message. An empty
/// literal takes its neighbours' type in cel-go, so it is passed over.
fn first_mismatch<'e>(
    items: impl Iterator<Item = &'e IdedExpr>,
    types: &HashMap<u64, CelType<'_>>,
) -> Option<(u64, String)> {
    let mut items = items.filter(|item| !is_empty_literal(item));
    let expected = types.get(&items.next()?.id).filter(|ty| !has_dyn(ty))?;
    items.find_map(|item| {
        let found = types.get(&item.id).filter(|ty| !has_dyn(ty))?;
        (found != expected).then(|| {
            let message = format!(
                "expected type '{}' but found '{}'",
                shown(expected),
                shown(found)
            );
            (item.id, message)
        })
    })
}

/// Whether `ty` is or holds `dyn`.
fn has_dyn(ty: &CelType<'_>) -> bool {
    match ty {
        CelType::Dyn => true,
        CelType::List(item) | CelType::Optional(item) => has_dyn(item),
        CelType::Map(key, value) => has_dyn(key) || has_dyn(value),
        _ => false,
    }
}

fn is_empty_literal(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::List(list) => list.elements.is_empty(),
        Expr::Map(map) => map.entries.is_empty(),
        _ => false,
    }
}

/// The direct subexpressions of `e`, in source order.
fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    match &e.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(&call.args)
            .collect(),
        Expr::Select(select) => vec![&*select.operand],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(MapExpr { entries }) | Expr::Struct(StructExpr { entries, .. }) => entries
            .iter()
            .flat_map(|entry| match &entry.expr {
                EntryExpr::MapEntry(entry) => vec![&entry.key, &entry.value],
                EntryExpr::StructField(field) => vec![&field.value],
            })
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::Literal(_) | Expr::Ident(_) | Expr::Unspecified => Vec::new(),
    }
}

/// The element type of a literal list or map: the one type all share, else `dyn`.
fn common(types: Vec<CelType<'_>>) -> CelType<'_> {
    let mut iter = types.into_iter();
    let Some(first) = iter.next() else {
        return CelType::Dyn;
    };
    if iter.all(|t| t == first) {
        first
    } else {
        CelType::Dyn
    }
}

fn literal_type(literal: &LiteralValue) -> CelType<'static> {
    match literal {
        LiteralValue::Boolean(_) => CelType::Bool,
        LiteralValue::Bytes(_) => CelType::Bytes,
        LiteralValue::Double(_) => CelType::Double,
        LiteralValue::Int(_) => CelType::Int,
        LiteralValue::Null => CelType::Null,
        LiteralValue::String(_) => CelType::String,
        LiteralValue::UInt(_) => CelType::Uint,
    }
}

/// The type identifiers of the standard environment (`type(x) == int`).
fn is_type_name(name: &str) -> bool {
    matches!(
        name,
        "int"
            | "uint"
            | "double"
            | "string"
            | "bytes"
            | "bool"
            | "list"
            | "map"
            | "null_type"
            | "type"
            | "dyn"
    )
}
