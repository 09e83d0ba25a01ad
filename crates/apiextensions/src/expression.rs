//! A CEL expression over JSON variables, outside any schema: admission webhooks'
//! `matchConditions` (apiserver `pkg/admission/plugin/webhook/matchconditions/matcher.go`) use it
//! with `object`, `oldObject` and `request`. Same dialect as the CRD rules
//! ([`crate::cel_library`]); numbers are ints when integral, doubles otherwise.
//!
//! # Differences from the real server
//! There is no type checker: an expression that does not evaluate to a bool is found out when it
//! is evaluated (an error), not when the configuration is stored; `authorizer` is not bound, so an
//! expression using it fails when evaluated. Parse errors are this parser's, not cel-go's.

use std::sync::Arc;

use cel::Program;
use serde_json::Value;

use crate::Error;
use crate::cel_library::{ENV, context};
use crate::rules::{error_text, to_cel};

/// One compiled expression.
#[derive(Clone)]
pub struct Expression {
    program: Arc<Program>,
    source: String,
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
        let program = ENV.compile(source).map_err(|e| Error::CompileFailed {
            reason: e.to_string(),
        })?;
        Ok(Expression {
            program: Arc::new(program),
            source: source.to_string(),
        })
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
        match self.program.execute(&ctx) {
            Ok(cel::Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!("expected a bool, got {other:?}")),
            Err(error) => Err(error_text(&error)),
        }
    }
}
