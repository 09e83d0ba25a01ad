//! The CEL environment of CRD validation rules and admission policies: CEL's standard library
//! (`size`, `has`, `all`, `exists`, `exists_one`, `map`, `filter`, `matches`, `contains`,
//! `startsWith`, `endsWith`, …), the strings extension (`lowerAscii`, `upperAscii`, `replace`,
//! `split`, `substring`, `trim`, `indexOf`, `join`, …) and Kubernetes' own libraries
//! (`k8s.io/apiserver/pkg/cel/library`), one child module each:
//! - quantities (here: `quantity`, `isQuantity`, `isGreaterThan`, `isLessThan`, `compareTo`,
//!   `asInteger`, `asApproximateFloat`, `isInteger`, `sign`, `add`, `sub`);
//! - [`ip`] and cidr, [`url`], [`semver`], [`format`], [`lists`] and sets, [`regex`];
//! - the authorizer library (here), for admission policies.
//!
//! # Why extend the `cel` crate rather than evaluate on our own
//! The crate evaluates the language; each library is a set of functions registered through its
//! public API: context functions for new names, `Env` overloads where a standard name gains a
//! type (`string(ip)`, `list.indexOf`), and opaque values ([`opaque`]) for the library types
//! (`net.IP`, `net.CIDR`, `kubernetes.URL`, `kubernetes.Semver`, `kubernetes.NamedFormat`), so
//! they compare with `==` and a function given the wrong type fails as "no such overload".
//! Values, parse rules and messages follow v1.36's Go code (`netip`, `net/url`, blang/semver,
//! apimachinery's validators); each module says where it follows it.
//!
//! # Differences from the real server
//! - A CRD's rules are type-checked when it is written ([`crate::cel_check`]), but a rule it
//!   cannot type, and every other expression (policies, match conditions), is found out only
//!   when evaluated ("no such overload"); a function called globally
//!   that v1.36 declares only as a method (`find('a', 'b')`) may be accepted. A rule
//!   calling a function no library here has is still skipped (never rejected) when evaluated,
//!   as is a rule the parser here cannot read. Rules have no cost budget.
//! - A quantity is its value as a float: exact for the sizes rules compare, but `string()` of
//!   one gives the number, not the canonical form, and values beyond 2^53 or below 10^-9 are
//!   rounded.
//! - A regex that does not compile is `Illegal regex: ` followed by the `regex` crate's message,
//!   not Go's (`error parsing regexp: missing closing ): ...`).
//! - The authorizer library (`authorizer.group(..).resource(..).check(verb).allowed()`,
//!   `path`, `requestResource`, `serviceAccount(namespace, name)`, `fieldSelector`,
//!   `labelSelector`, `reason`, `errored`, `error`) serves admission policies, which pass the
//!   server's authorizer; in CRD rules `check` is unknown. The selectors are carried but not
//!   read: RBAC, the only authorizer here, ignores them, as the real RBAC authorizer does (v1.36
//!   allowed a check with an unparsable selector, `errored()` false).

use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

use cel::extractors::This;
use cel::{Context, Env, ExecutionError, Value};

mod format;
mod ip;
mod lists;
mod opaque;
mod regex;
mod semver;
mod url;

#[cfg(test)]
#[path = "cel_library/hostile_tests.rs"]
mod hostile_tests;

/// The shared environment (standard library, macros, strings extension).
pub(crate) static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(base_env()));

/// The standard library, the strings extension and the overloads of standard names
/// (`string(ip)`, ...) the Kubernetes libraries add.
fn base_env() -> Env {
    let mut env = Env::stdlib();
    // Only fails when a declaration exists already, which it cannot in a fresh stdlib.
    let _ = env.add_extension(cel::extensions::strings);
    ip::add_string_overloads(&mut env);
    lists::add_overloads(&mut env);
    env
}

/// A context over [`ENV`] with the Kubernetes functions.
pub(crate) fn context() -> Context<'static, 'static> {
    context_in(ENV.clone())
}

/// A context over `env` (the shared one, or one that knows a mutation's object types) with
/// the Kubernetes functions.
pub(crate) fn context_in(env: Arc<Env>) -> Context<'static, 'static> {
    let mut ctx = Context::with_env(env);
    // A name the environment declares already keeps its standard meaning.
    let _ = ctx.add_function("quantity", |s: Arc<String>| {
        parse_quantity(&s).map(Value::Float)
    });
    let _ = ctx.add_function("isQuantity", |s: Arc<String>| parse_quantity(&s).is_ok());
    let _ = ctx.add_function("isGreaterThan", |This(a): This<Value>, b: Value| {
        compare("isGreaterThan", &a, &b).map(|o| o == Ordering::Greater)
    });
    let _ = ctx.add_function("isLessThan", |This(a): This<Value>, b: Value| {
        compare("isLessThan", &a, &b).map(|o| o == Ordering::Less)
    });
    let _ = ctx.add_function("compareTo", |This(a): This<Value>, b: Value| {
        compare("compareTo", &a, &b).map(|o| o as i64)
    });
    let _ = ctx.add_function("asInteger", |This(a): This<f64>| a as i64);
    let _ = ctx.add_function("asApproximateFloat", |This(a): This<f64>| a);
    let _ = ctx.add_function("isInteger", |This(a): This<f64>| a.fract() == 0.0);
    let _ = ctx.add_function("sign", |This(a): This<f64>| a.signum() as i64);
    let _ = ctx.add_function("add", |This(a): This<f64>, b: Value| {
        Ok::<_, ExecutionError>(a + number(&b)?)
    });
    let _ = ctx.add_function("sub", |This(a): This<f64>, b: Value| {
        Ok::<_, ExecutionError>(a - number(&b)?)
    });
    add_authorizer_builders(&mut ctx);
    ip::register(&mut ctx);
    url::register(&mut ctx);
    semver::register(&mut ctx);
    format::register(&mut ctx);
    lists::register(&mut ctx);
    regex::register(&mut ctx);
    ctx
}

/// The marker key of the maps the authorizer library passes along its chain.
const AUTHZ: &str = "__authz__";

/// What a policy's `authorizer` asks (apiserver `pkg/cel/library/authz.go`): a resource check
/// (`authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('get')`)
/// or a path check (`authorizer.path('/healthz').check('get')`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthzCheck {
    /// A non-resource path, for a path check.
    pub path: Option<String>,
    /// API group (`""` for the core group).
    pub group: String,
    /// Resource (plural), e.g. `deployments`.
    pub resource: String,
    /// Subresource, e.g. `status`, or empty.
    pub subresource: String,
    /// Namespace, empty for cluster-scoped or all namespaces.
    pub namespace: String,
    /// Object name, empty for any.
    pub name: String,
    /// Verb, e.g. `get`.
    pub verb: String,
    /// `serviceAccount(namespace, name)`: ask as that ServiceAccount instead of the requesting
    /// user (`system:serviceaccount:<namespace>:<name>`, in groups `system:serviceaccounts` and
    /// `system:serviceaccounts:<namespace>`).
    pub service_account: Option<(String, String)>,
}

/// Answers an [`AuthzCheck`]: allowed, and the authorizer's reason.
pub type Authorize = Arc<dyn Fn(&AuthzCheck) -> (bool, String) + Send + Sync>;

/// The value bound to `authorizer`, with `authorizer.requestResource` naming the written
/// resource (group, resource, subresource, namespace, name).
pub fn authorizer_value(request_resource: [&str; 5]) -> serde_json::Value {
    let [group, resource, subresource, namespace, name] = request_resource;
    serde_json::json!({AUTHZ: "authorizer", "requestResource": {AUTHZ: "resource",
        "group": group, "resource": resource, "subresource": subresource,
        "namespace": namespace, "name": name}})
}

fn text(map: &cel::objects::Map, key: &str) -> String {
    match map
        .map
        .get(&cel::objects::Key::String(Arc::new(key.to_string())))
    {
        Some(Value::String(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// `target` with `key` set to `value`, when it is a map of the authorizer library.
fn with_field(target: Value, key: &str, value: Arc<String>) -> Result<Value, ExecutionError> {
    let Value::Map(map) = target else {
        return Err(ExecutionError::function_error(key, "not an authorizer"));
    };
    if text(&map, AUTHZ).is_empty() {
        return Err(ExecutionError::function_error(key, "not an authorizer"));
    }
    let mut fields = (*map.map).clone();
    let kind = if key == "path" { "path" } else { "resource" };
    fields.insert(
        cel::objects::Key::String(Arc::new(AUTHZ.into())),
        Value::String(Arc::new(kind.into())),
    );
    fields.insert(
        cel::objects::Key::String(Arc::new(key.into())),
        Value::String(value),
    );
    Ok(Value::Map(cel::objects::Map {
        map: Arc::new(fields),
    }))
}

/// `authorizer.serviceAccount(namespace, name)`: the same authorizer asking as that
/// ServiceAccount. Names are checked as apiserver `pkg/cel/library/authz.go` does, with its
/// errors.
fn service_account(
    target: Value,
    namespace: Arc<String>,
    name: Arc<String>,
) -> Result<Value, ExecutionError> {
    let Value::Map(map) = target else {
        return Err(ExecutionError::function_error(
            "serviceAccount",
            "not an authorizer",
        ));
    };
    if text(&map, AUTHZ) != "authorizer" {
        return Err(ExecutionError::function_error(
            "serviceAccount",
            "not an authorizer",
        ));
    }
    if !format::dns1123_subdomain(&name).is_empty() {
        return Err(ExecutionError::function_error(
            "serviceAccount",
            "Invalid service account name",
        ));
    }
    if !format::dns1123_label(&namespace).is_empty() {
        return Err(ExecutionError::function_error(
            "serviceAccount",
            "Invalid service account namespace",
        ));
    }
    let mut fields = (*map.map).clone();
    let key = |k: &str| cel::objects::Key::String(Arc::new(k.to_string()));
    fields.insert(key(SA_NAMESPACE), Value::String(namespace));
    fields.insert(key(SA_NAME), Value::String(name));
    Ok(Value::Map(cel::objects::Map {
        map: Arc::new(fields),
    }))
}

/// The keys under which [`service_account`] keeps the ServiceAccount along the chain.
const SA_NAMESPACE: &str = "__serviceAccountNamespace__";
const SA_NAME: &str = "__serviceAccountName__";

/// The builder steps of the authorizer library; `check` is added per evaluation, by
/// [`add_authorizer_check`], as it needs the server's authorizer.
fn add_authorizer_builders(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function(
        "serviceAccount",
        |This(target): This<Value>, namespace: Arc<String>, name: Arc<String>| {
            service_account(target, namespace, name)
        },
    );
    for key in [
        "group",
        "resource",
        "subresource",
        "namespace",
        "name",
        "path",
        "fieldSelector",
        "labelSelector",
    ] {
        let _ = ctx.add_function(key, move |This(target): This<Value>, value: Arc<String>| {
            with_field(target, key, value)
        });
    }
    let decision = |key: &'static str| {
        move |This(target): This<Value>| -> Result<Value, ExecutionError> {
            match target {
                Value::Map(map) if text(&map, AUTHZ) == "decision" => Ok(map
                    .map
                    .get(&cel::objects::Key::String(Arc::new(key.into())))
                    .cloned()
                    .unwrap_or(Value::Null)),
                _ => Err(ExecutionError::function_error(
                    key,
                    "not an authorization decision",
                )),
            }
        }
    };
    for key in ["allowed", "reason", "errored", "error"] {
        let _ = ctx.add_function(key, decision(key));
    }
}

/// `check(verb)`: asks `authorize` and gives a decision (`allowed()`, `reason()`,
/// `errored()`, `error()`).
pub(crate) fn add_authorizer_check(ctx: &mut Context<'static, 'static>, authorize: Authorize) {
    let _ = ctx.add_function(
        "check",
        move |This(target): This<Value>, verb: Arc<String>| {
            let Value::Map(map) = target else {
                return Err(ExecutionError::function_error("check", "not an authorizer"));
            };
            let path = (text(&map, AUTHZ) == "path").then(|| text(&map, "path"));
            let check = AuthzCheck {
                path,
                group: text(&map, "group"),
                resource: text(&map, "resource"),
                subresource: text(&map, "subresource"),
                namespace: text(&map, "namespace"),
                name: text(&map, "name"),
                verb: verb.to_string(),
                service_account: map
                    .map
                    .contains_key(&cel::objects::Key::String(Arc::new(SA_NAME.into())))
                    .then(|| (text(&map, SA_NAMESPACE), text(&map, SA_NAME))),
            };
            let (allowed, reason) = authorize(&check);
            let mut fields = std::collections::HashMap::new();
            let key = |k: &str| cel::objects::Key::String(Arc::new(k.to_string()));
            fields.insert(key(AUTHZ), Value::String(Arc::new("decision".into())));
            fields.insert(key("allowed"), Value::Bool(allowed));
            fields.insert(key("reason"), Value::String(Arc::new(reason)));
            fields.insert(key("errored"), Value::Bool(false));
            fields.insert(key("error"), Value::String(Arc::new(String::new())));
            Ok(Value::Map(cel::objects::Map {
                map: Arc::new(fields),
            }))
        },
    );
}

/// The order of two versions or two quantities (the functions both libraries name).
fn compare(function: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    if let Some(order) = semver::compare(a, b) {
        return Ok(order);
    }
    match (a, b) {
        (Value::Float(a), Value::Float(b)) => Ok(a.partial_cmp(b).unwrap_or(Ordering::Equal)),
        _ => Err(opaque::no_overload(function)),
    }
}

fn number(v: &Value) -> Result<f64, ExecutionError> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        Value::UInt(u) => Ok(*u as f64),
        other => Err(ExecutionError::function_error(
            "add",
            format!("not a quantity: {other:?}"),
        )),
    }
}

const QUANTITY_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// The value of a Kubernetes quantity (`resource.ParseQuantity`).
pub(crate) fn parse_quantity(s: &str) -> Result<f64, ExecutionError> {
    let invalid = || ExecutionError::function_error("quantity", QUANTITY_ERROR);
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '+' | '-' | '.')))
        .unwrap_or(s.len());
    let (digits, suffix) = s.split_at(split);
    let number: f64 = digits.parse().map_err(|_| invalid())?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent => {
            let power = exponent
                .strip_prefix(['e', 'E'])
                .and_then(|p| p.parse::<i32>().ok())
                .ok_or_else(invalid)?;
            10f64.powi(power)
        }
    };
    Ok(number * factor)
}

/// A type whose struct literals build plain maps: `JSONPatch{op: "add", path: "/x"}` and the
/// `Object{...}`, `Object.spec{...}` literals of a MutatingAdmissionPolicy's mutations, which
/// the real server types from the written kind's schema. Here every field is accepted and the
/// value is the map of the literal's fields, which is what the mutation is then read as.
struct OpenStruct(cel::common::types::Type);

impl cel::StructType for OpenStruct {
    fn get_type(&self) -> &cel::common::types::Type {
        &self.0
    }

    fn new_value<'b, 'v>(
        &self,
        fields: std::collections::BTreeMap<String, cel::common::value::CowVal<'b, 'v>>,
    ) -> Result<Box<dyn cel::common::value::Val + 'v>, ExecutionError> {
        let mut map = std::collections::HashMap::new();
        for (name, value) in fields {
            map.insert(name, Value::try_from(&*value)?);
        }
        Box::<dyn cel::common::value::Val>::try_from(Value::from(map))
    }
}

/// [`ENV`]'s library plus `names` as [`OpenStruct`] types.
pub(crate) fn env_with_open_structs(names: &[String]) -> Arc<Env> {
    let mut env = base_env();
    for name in names {
        let ty = cel::common::types::Type::new_opaque_type(name.clone());
        // Fails only for a name declared twice or not an identifier: that literal stays unknown.
        let _ = env.add_type(OpenStruct(ty));
    }
    Arc::new(env)
}
