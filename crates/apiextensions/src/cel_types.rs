//! The CEL types of a schema's values, as the type checker sees them: what
//! apiserver `pkg/cel/common/schemas.go` (`SchemaDeclType`) declares for `self` and `oldSelf` of a
//! rule, and the escaping of property names into CEL identifiers (`pkg/cel/escaping.go`).
//!
//! An object is typed lazily (its schema node is kept, a field's type is computed when the rule
//! selects it), so a rule near the root of a huge schema (Argo's workflows) costs no more than
//! the fields it reads.

use std::fmt;

use crate::node::Node;

/// A CEL type; `Param` only appears in overload signatures (`list(A)`), `Dyn` is the type of
/// whatever the checker does not know.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CelType<'a> {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Timestamp,
    Duration,
    /// A type value (`int`, `type(x)`).
    Type,
    List(Box<CelType<'a>>),
    Map(Box<CelType<'a>>, Box<CelType<'a>>),
    Object(Object<'a>),
    /// An object type declared field by field (an admission request, a policy's variables).
    Record(Record<'a>),
    /// A library type: `kubernetes.Quantity`, `net.IP`, ...
    Opaque(&'static str),
    Optional(Box<CelType<'a>>),
    /// A type parameter of an overload signature.
    Param(&'static str),
}

/// An object type: the schema node with `properties`, or the object meta of a resource root.
#[derive(Clone, Debug)]
pub(crate) struct Object<'a> {
    /// cel-go's name of the type (`selfType0.spec.items.@idx`), shown in messages.
    name: String,
    /// The schema; `None` for the `metadata` of a resource root (`name` and `generateName`).
    node: Option<Node<'a>>,
    /// Whether the node is a resource root (the schema's root, or an embedded resource), which
    /// also has `apiVersion`, `kind` and `metadata`.
    resource: bool,
}

/// An object type with its fields listed, not read from a schema.
#[derive(Clone, Debug)]
pub(crate) struct Record<'a> {
    /// cel-go's name of the type (`kubernetes.AdmissionRequest`).
    pub(crate) name: &'static str,
    /// Fields and their types.
    pub(crate) fields: Vec<(String, CelType<'a>)>,
}

impl<'a> Record<'a> {
    /// The type of `field`, `None` when the record has no such field.
    pub(crate) fn field(&self, field: &str) -> Option<CelType<'a>> {
        self.fields
            .iter()
            .find(|(name, _)| name == field)
            .map(|(_, ty)| ty.clone())
    }
}

impl PartialEq for Record<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl PartialEq for Object<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl<'a> CelType<'a> {
    /// The type of `self` for a rule on `node` (`root`: the schema's root); `None` where the
    /// real server has no type either (a schema without `type`).
    pub(crate) fn of_rule_node(node: Node<'a>, root: bool) -> Option<CelType<'a>> {
        of_schema(node, "selfType0".into(), root || node.embedded())
    }

    /// Whether this is `dyn`, which any value is assignable to and from.
    pub(crate) fn is_dyn(&self) -> bool {
        matches!(self, CelType::Dyn)
    }
}

fn of_schema<'a>(node: Node<'a>, name: String, resource: bool) -> Option<CelType<'a>> {
    if node.int_or_string() {
        return Some(CelType::Dyn);
    }
    Some(match node.kind() {
        "array" => {
            let item = node.items()?;
            CelType::List(Box::new(of_schema(
                item,
                format!("{name}.@idx"),
                item.embedded(),
            )?))
        }
        "object" => match node.get("additionalProperties").filter(|a| a.is_object()) {
            Some(additional) => {
                let values = Node(additional);
                let value = of_schema(values, format!("{name}.@idx"), values.embedded())?;
                CelType::Map(Box::new(CelType::String), Box::new(value))
            }
            None => CelType::Object(Object {
                name,
                node: Some(node),
                resource,
            }),
        },
        "string" => match node.text("format") {
            Some("byte") => CelType::Bytes,
            Some("duration") => CelType::Duration,
            Some("date" | "date-time") => CelType::Timestamp,
            _ => CelType::String,
        },
        "boolean" => CelType::Bool,
        "number" => CelType::Double,
        "integer" => CelType::Int,
        _ => return None,
    })
}

impl<'a> Object<'a> {
    /// The type of the field CEL calls `field` (escaped), `None` when the object declares no
    /// such field (or one the real server cannot type).
    pub(crate) fn field(&self, field: &str) -> Option<CelType<'a>> {
        let name = format!("{}.{field}", self.name);
        let Some(node) = self.node else {
            return matches!(field, "name" | "generateName").then_some(CelType::String);
        };
        if self.resource && !declares_type_and_meta(node) {
            match field {
                "apiVersion" | "kind" => return Some(CelType::String),
                "metadata" => {
                    return Some(CelType::Object(Object {
                        name,
                        node: None,
                        resource: false,
                    }));
                }
                _ => {}
            }
        }
        let (_, property) = node
            .properties()
            .find(|(key, _)| key.as_str() == field || escape(key).as_deref() == Some(field))?;
        of_schema(property, name, property.embedded())
    }
}

/// Whether a resource root declares `kind`, `apiVersion` and `metadata.name` and
/// `.generateName` itself; only then do its declared `metadata` fields stay visible
/// (apiextensions `WithTypeAndObjectMeta`).
pub(crate) fn declares_type_and_meta(node: Node<'_>) -> bool {
    let typed = |node: Option<Node<'_>>, kind: &str| node.is_some_and(|n| n.kind() == kind);
    let meta = node.property("metadata");
    typed(node.property("kind"), "string")
        && typed(node.property("apiVersion"), "string")
        && typed(meta, "object")
        && typed(meta.and_then(|m| m.property("name")), "string")
        && typed(meta.and_then(|m| m.property("generateName")), "string")
}

/// The CEL identifier of property `name`, `None` when it has none (apiserver `Escape`).
pub(crate) fn escape(name: &str) -> Option<String> {
    const RESERVED: [&str; 21] = [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = after;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

impl fmt::Display for CelType<'_> {
    /// cel-go's spelling of the type, as its messages show it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CelType::Dyn => f.write_str("dyn"),
            CelType::Null => f.write_str("null_type"),
            CelType::Bool => f.write_str("bool"),
            CelType::Int => f.write_str("int"),
            CelType::Uint => f.write_str("uint"),
            CelType::Double => f.write_str("double"),
            CelType::String => f.write_str("string"),
            CelType::Bytes => f.write_str("bytes"),
            CelType::Timestamp => f.write_str("timestamp"),
            CelType::Duration => f.write_str("duration"),
            CelType::Type => f.write_str("type"),
            CelType::List(item) => write!(f, "list({item})"),
            CelType::Map(key, value) => write!(f, "map({key}, {value})"),
            CelType::Object(object) => f.write_str(&object.name),
            CelType::Record(record) => f.write_str(record.name),
            CelType::Opaque(name) | CelType::Param(name) => f.write_str(name),
            CelType::Optional(inner) => write!(f, "optional_type({inner})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn property_names_escape_as_the_apiserver_does() {
        assert_eq!(escape("replicas").as_deref(), Some("replicas"));
        assert_eq!(escape("dash-name").as_deref(), Some("dash__dash__name"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1st"), None);
        assert_eq!(escape("a b"), None);
    }

    #[test]
    fn schema_nodes_give_their_cel_types() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "number"}},
            "port": {"x-kubernetes-int-or-string": true},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
        }});
        let Some(CelType::Object(root)) = CelType::of_rule_node(Node(&schema), true) else {
            panic!("the root is an object");
        };
        let field = |name: &str| root.field(name).map(|t| t.to_string());
        assert_eq!(field("n").as_deref(), Some("int"));
        assert_eq!(field("when").as_deref(), Some("timestamp"));
        assert_eq!(field("tags").as_deref(), Some("list(string)"));
        assert_eq!(field("labels").as_deref(), Some("map(string, double)"));
        assert_eq!(field("port").as_deref(), Some("dyn"));
        assert_eq!(field("free"), None);
        assert_eq!(field("kind").as_deref(), Some("string"));
        assert_eq!(field("metadata").as_deref(), Some("selfType0.metadata"));
        let Some(CelType::Object(metadata)) = root.field("metadata") else {
            panic!("metadata is an object");
        };
        assert_eq!(metadata.field("name"), Some(CelType::String));
        assert_eq!(metadata.field("labels"), None);
    }

    #[test]
    fn a_root_declaring_its_type_and_meta_keeps_its_metadata_fields() {
        let string = json!({"type": "string"});
        let schema = json!({"type": "object", "properties": {
            "kind": string, "apiVersion": string,
            "metadata": {"type": "object", "properties": {"name": string, "generateName": string,
                "labels": {"type": "object", "additionalProperties": string}}}}});
        let Some(CelType::Object(root)) = CelType::of_rule_node(Node(&schema), true) else {
            panic!("the root is an object");
        };
        let Some(CelType::Object(metadata)) = root.field("metadata") else {
            panic!("metadata is an object");
        };
        assert_eq!(
            metadata.field("labels").map(|t| t.to_string()).as_deref(),
            Some("map(string, string)")
        );
    }
}
