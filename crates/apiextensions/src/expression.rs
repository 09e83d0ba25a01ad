//! A CEL expression over JSON variables, outside any schema: admission webhooks'
//! `matchConditions` (apiserver `pkg/admission/plugin/webhook/matchconditions/matcher.go`) use it
//! with `object`, `oldObject` and `request`. Same dialect as the CRD rules
//! ([`crate::cel_library`]); numbers are ints when integral, doubles otherwise.
//!
//! Every evaluation is counted as cel-go counts it ([`crate::runtime_cost`]) and stops at v1.36's
//! `PerCallLimit` with cel-go's `operation cancelled: actual cost limit exceeded`;
//! [`Expression::evaluate_counted`] also gives the cost, for a caller that keeps a budget over
//! several expressions (an admission policy's `RuntimeCELCostBudget`, apiserver
//! `pkg/admission/plugin/cel/activation.go`).
//!
//! # Differences from the real server
//! There is no type checker: an expression that does not evaluate to a bool is found out when it
//! is evaluated (an error), not when the configuration is stored; `authorizer` is not bound, so an
//! expression using it fails when evaluated. Parse errors are this parser's, not cel-go's.
//! [`Expression::evaluate`] gives JSON, so a value of a library type (`ip(..)`, `cidr(..)`,
//! `url(..)`, `semver(..)`, a named format) has no faithful result: a caller that binds one
//! expression's result as another's variable (a policy's `variables`) loses the type, and that
//! type's functions then fail on it; v1.36 keeps the typed value.

use std::sync::Arc;

use cel::Context;
use cel::common::ast::IdedExpr;
use serde_json::Value;

use crate::Error;
use crate::cel_library::{
    Authorize, ENV, add_authorizer_check, context, context_in, env_with_open_structs,
};
use crate::rules::{error_text, to_cel};
use crate::runtime_cost::{self, LIMIT_EXCEEDED, PER_CALL_LIMIT};
use crate::stack;

/// One compiled expression.
#[derive(Clone)]
pub struct Expression {
    /// The program's AST routed through the cost counting functions.
    metered: Arc<IdedExpr>,
    source: String,
    /// The environment of a mutation, which knows its struct literals' type names.
    env: Option<Arc<cel::Env>>,
}

/// One counted evaluation ([`Expression::evaluate_counted`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The result as JSON, or the error's text (`operation cancelled: actual cost limit
    /// exceeded` when it passed [`PER_CALL_LIMIT`]).
    pub result: Result<Value, String>,
    /// What the evaluation cost until it ended, in cel-go's units.
    pub cost: u64,
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

impl Expression {
    /// Parses `source`.
    ///
    /// # Errors
    /// [`Error::CompileFailed`] with the parser's message.
    pub fn compile(source: &str) -> Result<Expression, Error> {
        stack::with_room(|| {
            let program = ENV.compile(source).map_err(|e| Error::CompileFailed {
                reason: e.to_string(),
            })?;
            Ok(Expression {
                metered: Arc::new(runtime_cost::instrument(program.expression())),
                source: source.to_string(),
                env: None,
            })
        })
    }

    /// Parses a MutatingAdmissionPolicy mutation: `JSONPatch{...}` literals, and `Object{...}`
    /// and `Object.<field>...{...}` literals, build maps of their fields.
    ///
    /// # Errors
    /// [`Error::CompileFailed`] with the parser's message.
    pub fn compile_mutation(source: &str) -> Result<Expression, Error> {
        let mut expression = Expression::compile(source)?;
        expression.env = Some(env_with_open_structs(&struct_names(source)));
        Ok(expression)
    }

    /// Evaluates the expression with `variables` bound.
    ///
    /// # Errors
    /// The evaluation error's text (`no such key: labels`), or a note that the result is not a
    /// bool.
    pub fn evaluate_bool(&self, variables: &[(&str, &Value)]) -> Result<bool, String> {
        let mut ctx = context();
        for (name, value) in variables {
            ctx.add_variable_from_value(*name, to_cel(value, None, false));
        }
        match self.run(&mut ctx).0 {
            Ok(cel::Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!("expected a bool, got {other:?}")),
            Err(why) => Err(why),
        }
    }

    /// Evaluates the expression with `variables` bound and gives its result as JSON: what a
    /// policy's `variables`, `messageExpression`, `valueExpression` and mutations produce.
    /// Maps with non-string keys have them written as strings; bytes become a string, durations
    /// and timestamps their CEL string form.
    ///
    /// # Errors
    /// The evaluation error's text (`no such key: labels`).
    pub fn evaluate(&self, variables: &[(&str, &Value)]) -> Result<Value, String> {
        self.evaluate_authorized(variables, None)
    }

    /// [`Expression::evaluate`], with `authorize` answering the authorizer library's
    /// `check(verb)` (bind `authorizer` to [`crate::authorizer_value`]); without it, `check`
    /// fails as an unknown function.
    ///
    /// # Errors
    /// The evaluation error's text.
    pub fn evaluate_authorized(
        &self,
        variables: &[(&str, &Value)],
        authorize: Option<Authorize>,
    ) -> Result<Value, String> {
        self.evaluate_counted(variables, authorize).result
    }

    /// [`Expression::evaluate_authorized`], with what the evaluation cost until it ended (at
    /// most a little over [`PER_CALL_LIMIT`], where it is stopped).
    pub fn evaluate_counted(
        &self,
        variables: &[(&str, &Value)],
        authorize: Option<Authorize>,
    ) -> Evaluation {
        let mut ctx = match &self.env {
            Some(env) => context_in(env.clone()),
            None => context(),
        };
        if let Some(authorize) = authorize {
            add_authorizer_check(&mut ctx, authorize);
        }
        for (name, value) in variables {
            ctx.add_variable_from_value(*name, to_cel(value, None, false));
        }
        let (result, cost) = self.run(&mut ctx);
        Evaluation {
            result: result.map(|value| to_json(&value)),
            cost,
        }
    }

    /// Runs the counted program in `ctx`: its value or error text, and its cost.
    fn run(&self, ctx: &mut Context<'_, '_>) -> (Result<cel::Value, String>, u64) {
        runtime_cost::register(ctx);
        let counted = runtime_cost::run(&self.metered, ctx, PER_CALL_LIMIT);
        let result = match counted.result {
            // The limit stops the evaluation even where `||` or `&&` would absorb an error.
            _ if counted.exceeded => Err(LIMIT_EXCEEDED.to_string()),
            Ok(value) => Ok(value),
            Err(error) => Err(error_text(&error)),
        };
        (result, counted.cost)
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the result is provably of CEL type `dyn` where an admission policy's checker
    /// wants a bool (v1.36 refuses such a validation: `must evaluate to bool but got dyn`): a
    /// field or index of `object`, `oldObject` or `params` (untyped when a policy is stored),
    /// one of `dyn_variables`, or a conditional with such a branch. Without a type checker this
    /// is all that is known; any other expression is given the benefit of the doubt.
    pub fn is_dyn(&self, dyn_variables: &[String]) -> bool {
        stack::with_room(|| match ENV.parser().parse(&self.source) {
            Ok(ast) => dyn_expr(&ast, dyn_variables),
            Err(_) => false,
        })
    }
}

fn dyn_expr(expr: &cel::IdedExpr, dyn_variables: &[String]) -> bool {
    use cel::common::ast::Expr;
    match &expr.expr {
        Expr::Ident(name) => matches!(name.as_str(), "object" | "oldObject" | "params"),
        Expr::Select(select) if !select.test => match &select.operand.expr {
            Expr::Ident(root) if root == "variables" => dyn_variables.contains(&select.field),
            _ => dyn_expr(&select.operand, dyn_variables),
        },
        Expr::Call(call) if call.func_name == "_[_]" => call
            .args
            .first()
            .is_some_and(|target| dyn_expr(target, dyn_variables)),
        Expr::Call(call) if call.func_name == "_?_:_" => call
            .args
            .iter()
            .skip(1)
            .any(|branch| dyn_expr(branch, dyn_variables)),
        _ => false,
    }
}

/// The names `JSONPatch`, `Object` and `Object.a.b` written in `source` (a literal's type).
fn struct_names(source: &str) -> Vec<String> {
    let mut names = vec!["JSONPatch".to_string(), "Object".to_string()];
    let bytes = source.as_bytes();
    let mut at = 0;
    while let Some(found) = source[at..].find("Object.") {
        let start = at + found;
        let mut end = start + "Object".len();
        while end < bytes.len()
            && (bytes[end] == b'.' || bytes[end] == b'_' || bytes[end].is_ascii_alphanumeric())
        {
            end += 1;
        }
        let name = source[start..end].trim_end_matches('.').to_string();
        if !names.contains(&name) {
            names.push(name);
        }
        at = end.max(start + 1);
    }
    names
}

/// A CEL value as JSON (see [`Expression::evaluate`]).
fn to_json(value: &cel::Value) -> Value {
    use cel::objects::Key;
    match value {
        cel::Value::Null => Value::Null,
        cel::Value::Bool(b) => Value::Bool(*b),
        cel::Value::Int(i) => Value::from(*i),
        cel::Value::UInt(u) => Value::from(*u),
        cel::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        cel::Value::String(s) => Value::String(s.to_string()),
        cel::Value::Bytes(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        cel::Value::List(items) => Value::Array(items.iter().map(to_json).collect()),
        cel::Value::Map(map) => {
            let entries = map.map.iter().map(|(k, v)| {
                let key = match k {
                    Key::String(s) => s.to_string(),
                    Key::Int(i) => i.to_string(),
                    Key::Uint(u) => u.to_string(),
                    Key::Bool(b) => b.to_string(),
                };
                (key, to_json(v))
            });
            Value::Object(entries.collect())
        }
        other => Value::String(format!("{other:?}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluate_gives_json_values() {
        let object = json!({"metadata": {"name": "a"}, "spec": {"replicas": 3}});
        let vars = [("object", &object)];
        let eval = |s: &str| Expression::compile(s).unwrap().evaluate(&vars);
        assert_eq!(eval("object.metadata.name + 'b'"), Ok(json!("ab")));
        assert_eq!(eval("object.spec.replicas * 2"), Ok(json!(6)));
        assert_eq!(
            eval("[1, 'x', {'k': true}]"),
            Ok(json!([1, "x", {"k": true}]))
        );
        assert_eq!(
            eval("object.spec.nope"),
            Err("no such key: nope".to_string())
        );
    }

    #[test]
    fn evaluations_are_counted_and_stop_at_the_per_call_limit() {
        let object = json!({"x": 1, "l": (0..1000).collect::<Vec<_>>()});
        let vars = [("object", &object)];
        let counted = |s: &str| {
            Expression::compile(s)
                .unwrap()
                .evaluate_counted(&vars, None)
        };
        // `object` 1, `.x` 1, `==` 1.
        assert_eq!(
            counted("object.x == 1"),
            Evaluation {
                result: Ok(json!(true)),
                cost: 3
            }
        );
        let nested = "object.l.all(a, object.l.all(b, a != b || a == b))";
        let stopped = counted(nested);
        assert_eq!(stopped.result, Err(LIMIT_EXCEEDED.to_string()));
        assert!(stopped.cost > PER_CALL_LIMIT, "{}", stopped.cost);
        // `||` does not absorb the limit's error.
        let absorbed = counted(&format!("{nested} || true"));
        assert_eq!(absorbed.result, Err(LIMIT_EXCEEDED.to_string()));
        let bool_result = Expression::compile(nested).unwrap().evaluate_bool(&vars);
        assert_eq!(bool_result, Err(LIMIT_EXCEEDED.to_string()));
    }

    #[test]
    fn mutation_literals_build_maps() {
        let object = json!({"metadata": {"name": "a"}});
        let vars = [("object", &object)];
        let patch = Expression::compile_mutation(
            "[JSONPatch{op: 'add', path: '/data', value: {'k': object.metadata.name}}]",
        )
        .unwrap();
        assert_eq!(
            patch.evaluate(&vars),
            Ok(json!([{"op": "add", "path": "/data", "value": {"k": "a"}}]))
        );
        let apply =
            Expression::compile_mutation("Object{metadata: Object.metadata{labels: {'x': 'y'}}}")
                .unwrap();
        assert_eq!(
            apply.evaluate(&vars),
            Ok(json!({"metadata": {"labels": {"x": "y"}}}))
        );
    }

    #[test]
    fn hostile_expressions_are_errors_not_panics() {
        let object = json!({"a": [1]});
        let vars = [("object", &object)];
        let deep = format!("{}1{}", "(".repeat(2000), ")".repeat(2000));
        for source in [
            "object.a[5]",
            "1 / 0",
            "Object{a: 1}",
            "JSONPatch{op: 1}.op.x",
            "object.a.map(x, x.y)",
            "{1: 2}['x']",
            "'a'.matches('(')",
            deep.as_str(),
        ] {
            if let Ok(e) = Expression::compile(source) {
                let _ = e.evaluate(&vars);
            }
            if let Ok(e) = Expression::compile_mutation(source) {
                let _ = e.evaluate(&vars);
            }
        }
    }

    #[test]
    fn authorizer_checks_ask_the_callback() {
        let authorizer = crate::authorizer_value(["apps", "deployments", "", "ns", "web"]);
        let vars = [("authorizer", &authorizer)];
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = asked.clone();
        let authorize: crate::Authorize = std::sync::Arc::new(move |check: &crate::AuthzCheck| {
            seen.lock().unwrap().push(check.clone());
            (check.verb == "get", "RBAC: allowed".to_string())
        });
        let eval = |s: &str| {
            Expression::compile(s)
                .unwrap()
                .evaluate_authorized(&vars, Some(authorize.clone()))
        };
        assert_eq!(
            eval(
                "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('get').allowed()"
            ),
            Ok(json!(true))
        );
        assert_eq!(
            eval("authorizer.requestResource.check('delete').allowed()"),
            Ok(json!(false))
        );
        assert_eq!(
            eval("authorizer.path('/healthz').check('get').reason()"),
            Ok(json!("RBAC: allowed"))
        );
        let asked = asked.lock().unwrap();
        assert_eq!(asked[0].name, "x");
        assert_eq!(
            (asked[1].resource.as_str(), asked[1].name.as_str()),
            ("deployments", "web")
        );
        assert_eq!(asked[2].path.as_deref(), Some("/healthz"));
        assert!(
            Expression::compile("authorizer.path('/x').check('get').allowed()")
                .unwrap()
                .evaluate(&vars)
                .is_err()
        );
    }

    #[test]
    fn dyn_results_are_the_untyped_fields_and_variables() {
        let vars = ["v".to_string()];
        let is_dyn = |s: &str| Expression::compile(s).unwrap().is_dyn(&vars);
        for source in [
            "object.spec.x",
            "params.x",
            "oldObject.x",
            "object['spec']",
            "variables.v",
            "has(object.spec) ? object.spec.x : false",
        ] {
            assert!(is_dyn(source), "{source}");
        }
        for source in [
            "request.dryRun",
            "object.spec.x == true",
            "has(object.spec)",
            "variables.w",
            "object.spec.x.all(y, y)",
        ] {
            assert!(!is_dyn(source), "{source}");
        }
    }

    #[test]
    fn global_matches_reads_its_first_argument_as_the_string() {
        let e = Expression::compile("matches('v1.4.2', 'v1.[0-3].\\\\d+')").unwrap();
        assert_eq!(e.evaluate_bool(&[]), Ok(false));
        let e = Expression::compile("matches('v1.3.0', 'v1.[0-3].\\\\d+')").unwrap();
        assert_eq!(e.evaluate_bool(&[]), Ok(true));
    }
}
