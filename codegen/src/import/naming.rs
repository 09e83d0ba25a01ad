//! Step 3 of `kubegen import`: one name per struct, identical structs once.
//!
//! # Rules
//! - A nested struct is named after its kind and the JSON path to it, each segment in
//!   PascalCase: `Gateway.spec.listeners` -> `GatewaySpecListeners` (array items and map values
//!   add no segment). The rename table (`[import.rename]` in `kubegen.toml`, keyed by that path)
//!   wins.
//! - Structs with the same fields, docs, types and markers are one struct, named after the
//!   shortest of their paths (five Gateway API routes' `parentRefs` are one type) or a path of
//!   them the rename table names. Kinds themselves are never merged.
//! - A name already taken (another kind, `<Kind>List`, a well-known type the generator
//!   reserves, an earlier struct) gets `2`, `3`, ... in path order: deterministic for a given input.
//! - Field names are the snake case of the JSON name; a Rust keyword gets a trailing `_`
//!   (`type_`, which serde's camelCase turns back into `type`); when camelCase does not give
//!   the JSON name back (`podIP`, `x-kubernetes-foo`) the field gets `+kubegen:json=`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::ir::{FieldIr, StructIr, Ty};
use crate::model::UNKNOWN_FIELDS;

/// The chosen names: per struct index, its name and whether it is emitted (its canonical copy).
pub(crate) struct Names {
    /// Canonical index of each struct (itself when it is the one emitted).
    pub(crate) canon: Vec<usize>,
    /// Name of each canonical struct, by index.
    pub(crate) names: BTreeMap<usize, String>,
}

impl Names {
    /// The name of struct `index` (through its canonical copy).
    pub(crate) fn of(&self, index: usize) -> &str {
        self.names
            .get(&self.canon[index])
            .map(String::as_str)
            .unwrap_or("Unnamed")
    }
}

/// Merges identical structs and names the rest; `kinds` are the kind roots (by index).
pub(crate) fn assign(
    structs: &[StructIr],
    kinds: &[usize],
    rename: &BTreeMap<String, String>,
) -> Names {
    let mut canon: Vec<usize> = (0..structs.len()).collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    // Children are built before their parents, so index order resolves children first.
    for index in 0..structs.len() {
        if kinds.contains(&index) {
            continue;
        }
        let key = content_key(&structs[index], &canon);
        let first = *seen.entry(key).or_insert(index);
        canon[index] = first;
    }
    let mut taken: BTreeSet<String> = crate::wellknown::WellKnown::ALL
        .iter()
        .map(|wk| wk.name().to_owned())
        .chain(["ObjectMeta".to_owned()])
        .collect();
    let mut names = BTreeMap::new();
    for &kind in kinds {
        taken.insert(structs[kind].path.clone());
        taken.insert(format!("{}List", structs[kind].path));
        names.insert(kind, structs[kind].path.clone());
    }
    // A merged struct is named after its shortest path (then the first in order), or after a
    // path of it the rename table names.
    let mut best: BTreeMap<usize, &str> = BTreeMap::new();
    let mut renamed: BTreeMap<usize, &str> = BTreeMap::new();
    for (index, def) in structs.iter().enumerate() {
        if kinds.contains(&index) {
            continue;
        }
        let path = def.path.as_str();
        let slot = best.entry(canon[index]).or_insert(path);
        if (path.len(), path) < (slot.len(), *slot) {
            *slot = path;
        }
        if let Some(name) = rename.get(path) {
            renamed.entry(canon[index]).or_insert(name.as_str());
        }
    }
    let mut order: Vec<(usize, &str)> = best.into_iter().collect();
    order.sort_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)));
    for (index, path) in order {
        let base = renamed
            .get(&index)
            .map_or_else(|| pascal_path(path), |name| (*name).to_owned());
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        taken.insert(name.clone());
        names.insert(index, name);
    }
    Names { canon, names }
}

/// What makes two structs the same type: fields (names, docs, types with children resolved to
/// their canonical copy, requiredness, nullability, markers) and type-level markers.
fn content_key(def: &StructIr, canon: &[usize]) -> String {
    let fields: Vec<String> = def
        .fields
        .iter()
        .map(|field| {
            format!(
                "{}|{}|{}|{}|{}|{}",
                field.json,
                field.docs,
                ty_key(&field.ty, canon),
                field.required,
                field.nullable,
                field.markers.join("\n")
            )
        })
        .collect();
    format!("{}\u{0}{}", fields.join("\u{1}"), def.markers.join("\n"))
}

fn ty_key(ty: &Ty, canon: &[usize]) -> String {
    match ty {
        Ty::Struct(index) => format!("S{}", canon[*index]),
        Ty::Vec(inner) => format!("V({})", ty_key(inner, canon)),
        Ty::Map(inner) => format!("M({})", ty_key(inner, canon)),
        other => format!("{other:?}"),
    }
}

/// `Gateway.spec.listeners` -> `GatewaySpecListeners`.
pub(crate) fn pascal_path(path: &str) -> String {
    path.split('.').map(pascal).collect()
}

/// One JSON name in PascalCase: `certificateRefs` -> `CertificateRefs`, `x-foo` -> `XFoo`.
pub(crate) fn pascal(segment: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in segment.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    if out.chars().next().is_none_or(|c| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// The Rust field names of a struct's fields, collision-free, with whether each needs
/// `+kubegen:json=` (camelCase of the name is not the JSON name).
pub(crate) fn field_names(fields: &[FieldIr]) -> Vec<(String, bool)> {
    let mut used = BTreeSet::new();
    fields
        .iter()
        .map(|field| {
            let base = rust_field(&field.json);
            let mut name = base.clone();
            let mut n = 2;
            while used.contains(&name) || name == "metadata" || name == UNKNOWN_FIELDS {
                name = format!("{base}_{n}");
                n += 1;
            }
            used.insert(name.clone());
            let needs_json = crate::names::camel(&name) != field.json;
            (name, needs_json)
        })
        .collect()
}

/// `podIP` -> `pod_ip`, `type` -> `type_`, `$ref` -> `ref_`, `x-foo` -> `x_foo`.
fn rust_field(json: &str) -> String {
    let cleaned: String = json
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut name = crate::names::snake(&cleaned).trim_matches('_').to_owned();
    while name.contains("__") {
        name = name.replace("__", "_");
    }
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "f_");
    }
    if is_reserved(&name) {
        name.push('_');
    }
    name
}

/// Keywords: strict, reserved, and the ones that cannot be raw identifiers.
fn is_reserved(name: &str) -> bool {
    const WORDS: [&str; 51] = [
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
        "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final",
        "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
    ];
    WORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(json: &str) -> FieldIr {
        FieldIr {
            json: json.to_owned(),
            docs: String::new(),
            ty: Ty::String,
            required: false,
            nullable: false,
            markers: Vec::new(),
        }
    }

    #[test]
    fn field_names_escape_keywords_and_mark_names_camel_case_cannot_give_back() {
        let fields = [
            "type",
            "podIP",
            "x-foo",
            "hostname",
            "podIp",
            "self",
            "$ref",
            "kind",
            "unknownFields",
        ];
        let names = field_names(&fields.map(field));
        let expected = [
            ("type_", false),
            ("pod_ip", true),
            ("x_foo", true),
            ("hostname", false),
            ("pod_ip_2", true),
            ("self_", false),
            ("ref_", true),
            ("kind", false),
            // The generated struct keeps the keys it does not know in `unknown_fields`.
            ("unknown_fields_2", true),
        ];
        let names: Vec<(&str, bool)> = names.iter().map(|(n, j)| (n.as_str(), *j)).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn nested_names_follow_the_path_in_pascal_case() {
        assert_eq!(pascal_path("HTTPRoute.spec.rules"), "HTTPRouteSpecRules");
        assert_eq!(pascal_path("X.spec.x-foo.3d"), "XSpecXFooT3d");
    }

    fn def(path: &str, fields: Vec<FieldIr>) -> StructIr {
        StructIr {
            path: path.to_owned(),
            owner: "A".to_owned(),
            fields,
            markers: Vec::new(),
        }
    }

    #[test]
    fn identical_structs_are_one_and_taken_names_get_a_number() {
        let structs = vec![
            def("A.spec.ref", vec![field("name")]),
            def("A.status.ref", vec![field("name")]),
            def("A.spec", vec![]),
            def("A", vec![]),
            def("B.spec.condition", vec![field("other")]),
        ];
        let rename = BTreeMap::from([("A.spec".to_owned(), "Condition".to_owned())]);
        let names = assign(&structs, &[3], &rename);
        assert_eq!(names.of(1), "ASpecRef");
        assert_eq!(names.of(0), "ASpecRef");
        assert_eq!(names.of(2), "Condition2", "Condition is a well-known type");
        assert_eq!(names.of(4), "BSpecCondition");
        assert_eq!(names.of(3), "A");
    }
}
