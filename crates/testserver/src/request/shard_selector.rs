//! The `shardSelector` list/watch option of KEP-5866 (alpha in v1.36 behind the
//! `ShardedListAndWatch` feature gate): a list or watch sees only the objects whose FNV-1a 64 hash of
//! `metadata.uid` (or `metadata.namespace`) falls in one of the requested half-open ranges.
//!
//! Mirrors apiserver `pkg/sharding/parser.go` (the expression is CEL, parsed but never evaluated:
//! only `shardRange(field, 'hexStart', 'hexEnd')` calls joined by `||` pass) and apimachinery
//! `pkg/sharding/{selector,hash,accessor}.go` (matching, the canonical string echoed in
//! `metadata.shardInfo.selector`).
//!
//! # Differences from kube-apiserver
//! The real server hands the text to the full CEL parser; this one parses the subset that can ever
//! be accepted (identifiers, field selection, calls, string and scalar literals, parentheses, `||`
//! and `&&`). Expressions the real parser rejects as syntax get a `CEL parse error: Syntax error: …`
//! of our own wording (ANTLR's wording is not reproduced); every later check has the real message.

use serde_json::Value;

const UID: &str = "object.metadata.uid";
const NAMESPACE: &str = "object.metadata.namespace";
/// 2^64 written as the exclusive upper bound of the hash space.
const TOP: &str = "0x10000000000000000";

/// A parsed, non-empty shard selector: an object matches when its hash lies in any range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShardSelector {
    /// `object.metadata.uid` or `object.metadata.namespace`, the same for every range.
    key: &'static str,
    /// `[start, end)` over the hash space, each bound below or at 2^64, `start < end`.
    ranges: Vec<(u128, u128)>,
}

/// The FNV-1a 64 hash of `value`, as apimachinery's `HashField` computes it.
pub(crate) fn hash_field(value: &str) -> u64 {
    use std::hash::Hasher;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(value.as_bytes());
    hasher.finish()
}

impl ShardSelector {
    /// Parses a `shardSelector` parameter.
    ///
    /// # Errors
    /// The real parser's message (without the `invalid shard selector: ` prefix the store adds).
    pub(crate) fn parse(expr: &str) -> Result<ShardSelector, String> {
        let expr = expr.trim();
        if expr.is_empty() {
            return Err(
                "empty shard selector is not allowed; omit the parameter for unfiltered lists"
                    .into(),
            );
        }
        let tree = Parser::new(expr)
            .parse()
            .map_err(|why| format!("CEL parse error: Syntax error: {why}"))?;
        let mut requirements = Vec::new();
        walk(&tree, &mut requirements)?;
        let (key, _, _) = requirements[0];
        if let Some((other, _, _)) = requirements.iter().find(|(k, _, _)| *k != key) {
            return Err(format!(
                "all shard ranges must use the same field, got {} and {}",
                go_quote(key),
                go_quote(other)
            ));
        }
        let ranges = requirements.iter().map(|(_, s, e)| (*s, *e)).collect();
        Ok(ShardSelector { key, ranges })
    }

    /// Whether `object` falls in one of the ranges (a missing field hashes as "").
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let pointer = if self.key == UID {
            "/metadata/uid"
        } else {
            "/metadata/namespace"
        };
        let value = object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("");
        let hash = u128::from(hash_field(value));
        self.ranges
            .iter()
            .any(|(start, end)| *start <= hash && hash < *end)
    }

    /// The canonical form the real server echoes in a list's `metadata.shardInfo.selector`.
    pub(crate) fn canonical(&self) -> String {
        let hex = |v: u128| {
            if v == 1 << 64 {
                TOP.to_string()
            } else {
                format!("0x{v:016x}")
            }
        };
        let parts: Vec<String> = self
            .ranges
            .iter()
            .map(|(s, e)| format!("shardRange({}, '{}', '{}')", self.key, hex(*s), hex(*e)))
            .collect();
        parts.join(" || ")
    }
}

/// The CEL node kinds, numbered as cel-go's `ast.ExprKind` (the real messages print the number).
#[derive(Debug)]
enum Expr {
    Call(String, Vec<Expr>),
    Ident(String),
    Literal(Literal),
    Select(Box<Expr>, String),
}

#[derive(Debug)]
enum Literal {
    Str(String),
    Int,
    Uint,
    Double,
    Bool,
    Null,
}

impl Expr {
    fn kind(&self) -> u8 {
        match self {
            Expr::Call(..) => 1,
            Expr::Ident(_) => 3,
            Expr::Literal(_) => 5,
            Expr::Select(..) => 7,
        }
    }
}

type Requirement = (&'static str, u128, u128);

fn walk(expr: &Expr, out: &mut Vec<Requirement>) -> Result<(), String> {
    match expr {
        Expr::Call(name, args) if name == "_||_" => {
            for arg in args {
                walk(arg, out)?;
            }
            Ok(())
        }
        Expr::Call(name, args) if name == "shardRange" => {
            out.push(shard_range(args)?);
            Ok(())
        }
        Expr::Call(name, _) => Err(format!(
            "unsupported function {}; only shardRange() and || are allowed",
            go_quote(name)
        )),
        other => Err(format!(
            "unexpected expression kind {}; expected shardRange() call or || operator",
            other.kind()
        )),
    }
}

fn shard_range(args: &[Expr]) -> Result<Requirement, String> {
    let [field, start, end] = args else {
        return Err(format!(
            "shardRange() requires exactly 3 arguments, got {}",
            args.len()
        ));
    };
    let path = field_path(field).map_err(|e| format!("shardRange() first argument: {e}"))?;
    let key = match path.as_str() {
        UID => UID,
        NAMESPACE => NAMESPACE,
        _ => {
            return Err(format!(
                "unsupported field path {}; supported: {UID}, {NAMESPACE}",
                go_quote(&path)
            ));
        }
    };
    let (start_text, start) = hex_literal(start, "hexStart")?;
    let (end_text, end) = hex_literal(end, "hexEnd")?;
    if start >= end {
        return Err(format!(
            "shard range start {start_text} must be less than end {end_text}"
        ));
    }
    Ok((key, start, end))
}

fn field_path(expr: &Expr) -> Result<String, String> {
    match expr {
        Expr::Ident(name) => Ok(name.clone()),
        Expr::Select(operand, field) => Ok(format!("{}.{field}", field_path(operand)?)),
        other => Err(format!(
            "expected field path (e.g. object.metadata.uid), got expression kind {}",
            other.kind()
        )),
    }
}

/// A bound: `0x` and exactly 16 lowercase hex digits, or 2^64 written with 17.
fn hex_literal<'a>(expr: &'a Expr, name: &str) -> Result<(&'a str, u128), String> {
    let s = match expr {
        Expr::Literal(Literal::Str(s)) => s.as_str(),
        Expr::Literal(other) => {
            // The Go type of cel-go's literal value, as `%T` prints it.
            let go_type = match other {
                Literal::Int => "int64",
                Literal::Uint => "uint64",
                Literal::Double => "float64",
                Literal::Bool => "bool",
                _ => "structpb.NullValue",
            };
            return Err(format!("{name} must be a string literal, got {go_type}"));
        }
        other => {
            return Err(format!(
                "{name} must be a string literal (e.g. '0xff'), got expression kind {}",
                other.kind()
            ));
        }
    };
    let Some(hex) = s.strip_prefix("0x") else {
        return Err(format!("{name} must have '0x' prefix, got {}", go_quote(s)));
    };
    if hex.is_empty() {
        return Err(format!("{name}: hex value is required after '0x'"));
    }
    let digits = hex.len();
    if digits > 17 {
        return Err(format!(
            "{name}: hex value too long ({digits} chars, max 17): {}",
            go_quote(hex)
        ));
    }
    if let Some(c) = hex
        .chars()
        .find(|c| !c.is_ascii_digit() && !('a'..='f').contains(c))
    {
        return Err(format!(
            "{name}: invalid hex character {} in {}",
            go_quote(&c.to_string()),
            go_quote(s)
        ));
    }
    if digits == 17 && s != TOP {
        return Err(format!(
            "{name}: 17-digit hex value must be '{TOP}' (2^64), got {}",
            go_quote(s)
        ));
    }
    if digits != 16 && digits != 17 {
        let padded = format!("0x{}{hex}", "0".repeat(16 - digits));
        return Err(format!(
            "{name} must be a 0x-prefixed 16-digit hex value, got {} (did you mean {}?)",
            go_quote(s),
            go_quote(&padded)
        ));
    }
    let value = u128::from_str_radix(hex, 16).map_err(|e| format!("{name}: {e}"))?;
    Ok((s, value))
}

/// Go's `%q` for the strings these messages quote.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A recursive-descent parser for the CEL subset above: `or := and ('||' and)*`,
/// `and := postfix ('&&' postfix)*`, `postfix := primary ('.' ident ('(' args ')')?)*`,
/// `primary := ident ('(' args ')')? | literal | '(' or ')'`.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser { text, pos: 0 }
    }

    fn parse(mut self) -> Result<Expr, String> {
        let expr = self.or()?;
        self.skip_space();
        match self.rest().chars().next() {
            None => Ok(expr),
            Some(c) => Err(format!("unexpected '{c}' at offset {}", self.pos)),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        let found = self.rest().starts_with(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else if self.rest().is_empty() {
            Err(format!("unexpected end of input, expecting '{token}'"))
        } else {
            Err(format!("expecting '{token}' at offset {}", self.pos))
        }
    }

    fn binary(
        &mut self,
        op: &str,
        function: &str,
        next: fn(&mut Self) -> Result<Expr, String>,
    ) -> Result<Expr, String> {
        let mut left = next(self)?;
        while self.eat(op) {
            let right = next(self)?;
            left = Expr::Call(function.into(), vec![left, right]);
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<Expr, String> {
        self.binary("||", "_||_", Self::and)
    }

    fn and(&mut self) -> Result<Expr, String> {
        self.binary("&&", "_&&_", Self::postfix)
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let mut expr = self.primary()?;
        while self.eat(".") {
            let field = self.ident()?;
            if self.eat("(") {
                // A receiver-style call: cel-go keeps the target apart from the arguments.
                expr = Expr::Call(field, self.args()?);
            } else {
                expr = Expr::Select(Box::new(expr), field);
            }
        }
        Ok(expr)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        self.skip_space();
        let Some(c) = self.rest().chars().next() else {
            return Err("unexpected end of input".into());
        };
        match c {
            '(' => {
                self.pos += 1;
                let inner = self.or()?;
                self.expect(")")?;
                Ok(inner)
            }
            '\'' | '"' => self.string(c).map(|s| Expr::Literal(Literal::Str(s))),
            c if c.is_ascii_digit() || c == '-' => Ok(Expr::Literal(self.number()?)),
            c if c == '_' || c.is_ascii_alphabetic() => {
                let name = self.ident()?;
                Ok(match name.as_str() {
                    "true" | "false" => Expr::Literal(Literal::Bool),
                    "null" => Expr::Literal(Literal::Null),
                    _ if self.eat("(") => Expr::Call(name, self.args()?),
                    _ => Expr::Ident(name),
                })
            }
            other => Err(format!("token recognition error at: '{other}'")),
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        self.skip_space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("expecting an identifier at offset {}", self.pos));
        }
        self.pos += len;
        Ok(rest[..len].to_string())
    }

    fn args(&mut self) -> Result<Vec<Expr>, String> {
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(args);
        }
        loop {
            args.push(self.or()?);
            if self.eat(")") {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }

    fn number(&mut self) -> Result<Literal, String> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .skip(1)
            .find(|(_, c)| !c.is_ascii_alphanumeric() && *c != '.')
            .map_or(rest.len(), |(i, _)| i);
        let text = &rest[..len];
        self.pos += len;
        let literal = if let Some(digits) = text.strip_suffix(['u', 'U']) {
            parse_int(digits).map(|_| Literal::Uint)
        } else if text.contains(['.', 'e', 'E']) && !text.starts_with("0x") {
            text.parse::<f64>().ok().map(|_| Literal::Double)
        } else {
            parse_int(text).map(|_| Literal::Int)
        };
        literal.ok_or_else(|| format!("invalid number literal '{text}'"))
    }

    /// A quoted string with CEL's simple escapes.
    fn string(&mut self, quote: char) -> Result<String, String> {
        let start = self.pos;
        let mut chars = self.rest().char_indices().skip(1);
        let mut out = String::new();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c == quote => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some(e @ ('\\' | '\'' | '"' | '`' | '?')) => out.push(e),
                    _ => return Err(format!("invalid escape sequence at offset {}", start + i)),
                },
                '\n' => break,
                c => out.push(c),
            }
        }
        Err(format!("unterminated string literal at offset {start}"))
    }
}

fn parse_int(text: &str) -> Option<()> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let parsed = match digits.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse::<u64>().ok(),
    };
    parsed
        .filter(|_| !negative || !digits.is_empty())
        .map(|_| ())
}

#[cfg(test)]
#[path = "shard_selector_tests.rs"]
mod tests;
