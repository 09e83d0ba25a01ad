//! The paths of a custom resource in an OpenAPI document, derived from the real server's.
//!
//! `hack/update-openapi-data.py` installs two throw-away CRDs on a real kube-apiserver (one per
//! scope, both with `status` and `scale`) and ships the paths the server publishes for them as
//! templates. A CRD's paths are the template of its scope with the template's names replaced by
//! the CRD's (group, version, kind, list kind, plural, and the operation IDs and tags apiserver's
//! `GetOperationIDAndTags` derives from them), less the subresources the version does not have.
//! So every operation, parameter (`fieldValidation` on PATCH included: kubectl looks for it) and
//! media type is the real server's, not a re-implementation of apiextensions-apiserver's builder.

use serde_json::{Map, Value};

use super::builtin::Builtin;

/// What the paths are generated for.
pub(super) struct Resource<'a> {
    pub(super) group: &'a str,
    pub(super) version: &'a str,
    pub(super) kind: &'a str,
    pub(super) list_kind: String,
    pub(super) plural: &'a str,
    pub(super) namespaced: bool,
    pub(super) status: bool,
    pub(super) scale: bool,
}

/// OpenAPI v2 (Swagger) or v3 shapes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Flavor {
    V2,
    V3,
}

/// The template CRDs' names (`TEMPLATE_*` in `hack/update-openapi-data.py`).
const GROUP: &str = "tmplgroup.kubegen.example.com";
const VERSION: &str = "v9tmpl";

/// The resource's paths (`/apis/<g>/<v>/...` -> path item).
pub(super) fn paths(r: &Resource<'_>, flavor: Flavor, builtin: &Builtin) -> Map<String, Value> {
    let (scope, template_kind) = if r.namespaced {
        ("Namespaced", "TmplKind")
    } else {
        ("Cluster", "TmplClusterKind")
    };
    let flavor_key = match flavor {
        Flavor::V2 => "v2",
        Flavor::V3 => "v3",
    };
    let Some(template) = builtin.crd_templates[scope][flavor_key].as_object() else {
        return Map::new();
    };
    let renames = renames(r, template_kind);
    template
        .iter()
        .filter(|(path, _)| {
            (r.status || !path.ends_with("/{name}/status"))
                && (r.scale || !path.ends_with("/{name}/scale"))
        })
        .map(|(path, item)| {
            let mut item = rename_value(item, &renames);
            fix_articles(&mut item, r.kind);
            (rename(path, &renames), item)
        })
        .collect()
}

/// Template name -> this resource's, longest first so no name is replaced inside a longer one.
fn renames(r: &Resource<'_>, template_kind: &str) -> Vec<(String, String)> {
    let trimmed = r.group.trim_end_matches(".k8s.io");
    let reversed: Vec<&str> = r.group.split('.').rev().collect();
    let mut pairs = vec![
        (GROUP.to_string(), r.group.to_string()),
        ("com.example.kubegen.tmplgroup".into(), reversed.join(".")),
        ("TmplgroupKubegenExampleCom".into(), valid_id(trimmed, true)),
        (
            "tmplgroupKubegenExampleCom".into(),
            valid_id(trimmed, false),
        ),
        (VERSION.into(), r.version.to_string()),
        ("V9tmpl".into(), valid_id(r.version, true)),
        (format!("{template_kind}List"), r.list_kind.clone()),
        (template_kind.to_string(), r.kind.to_string()),
        (
            format!("{}s", template_kind.to_lowercase()),
            r.plural.to_string(),
        ),
    ];
    pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    pairs
}

/// Replaces every template name in `text` in one left-to-right pass.
fn rename(text: &str, renames: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for (from, to) in renames {
            if let Some(after) = rest.strip_prefix(from.as_str()) {
                out.push_str(to);
                rest = after;
                continue 'scan;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

fn rename_value(value: &Value, renames: &[(String, String)]) -> Value {
    match value {
        Value::String(s) => Value::String(rename(s, renames)),
        Value::Array(items) => items.iter().map(|v| rename_value(v, renames)).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (rename(k, renames), rename_value(v, renames)))
            .collect(),
        other => other.clone(),
    }
}

/// The template says "create a TmplKind"; the real builder picks the article for the kind
/// (apiserver `GetArticleForNoun`): "an Instance", none for a plural-looking "Status".
fn fix_articles(item: &mut Value, kind: &str) {
    let Some(map) = item.as_object_mut() else {
        return;
    };
    for op in map.values_mut() {
        if let Some(Value::String(description)) = op.get_mut("description") {
            for verb in ["create", "delete"] {
                if *description == format!("{verb} a {kind}") {
                    *description = format!("{verb}{}{kind}", article_for(kind));
                }
            }
        }
    }
}

/// apiserver `GetArticleForNoun(noun, " ")`.
fn article_for(noun: &str) -> &'static str {
    if noun.ends_with('s') && !noun.ends_with("ss") {
        return " ";
    }
    let vowel = noun
        .chars()
        .next()
        .is_some_and(|c| "aeiou".contains(c.to_ascii_lowercase()));
    if vowel { " an " } else { " a " }
}

/// apiserver `ToValidOperationID`: drops characters other than letters, `_` and (not first)
/// digits, capitalizing the letter after each dropped one.
fn valid_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::builtin;

    fn whitelists(namespaced: bool, status: bool) -> Resource<'static> {
        Resource {
            group: "police.example.com",
            version: "v1beta1",
            kind: "WhiteList",
            list_kind: "WhiteListList".into(),
            plural: "whitelists",
            namespaced,
            status,
            scale: false,
        }
    }

    #[test]
    fn namespaced_paths_are_the_template_renamed_less_absent_subresources() {
        let paths = paths(&whitelists(true, true), Flavor::V3, builtin::get().unwrap());
        let mut keys: Vec<&str> = paths.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            vec![
                "/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists",
                "/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}",
                "/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}/status",
                "/apis/police.example.com/v1beta1/whitelists",
            ]
        );
        let patch = &paths["/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}"]
            ["patch"];
        assert_eq!(
            patch["operationId"],
            "patchPoliceExampleComV1beta1NamespacedWhiteList"
        );
        assert_eq!(
            patch["tags"],
            serde_json::json!(["policeExampleCom_v1beta1"])
        );
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            serde_json::json!({"group": "police.example.com", "version": "v1beta1", "kind": "WhiteList"})
        );
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
        let text = serde_json::to_string(&paths).unwrap();
        assert!(
            !text.to_lowercase().contains("tmpl"),
            "no template name left"
        );
    }

    #[test]
    fn cluster_scoped_paths_have_no_namespace() {
        let paths = paths(
            &whitelists(false, false),
            Flavor::V2,
            builtin::get().unwrap(),
        );
        let mut keys: Vec<&str> = paths.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            vec![
                "/apis/police.example.com/v1beta1/whitelists",
                "/apis/police.example.com/v1beta1/whitelists/{name}"
            ]
        );
        let create = &paths["/apis/police.example.com/v1beta1/whitelists"]["post"];
        assert_eq!(
            create["operationId"],
            "createPoliceExampleComV1beta1WhiteList"
        );
        assert_eq!(create["description"], "create a WhiteList");
    }

    #[test]
    fn renaming_is_one_pass_and_longest_first() {
        let r = Resource {
            kind: "Instance",
            list_kind: "Instances".into(),
            ..whitelists(true, false)
        };
        let renames = renames(&r, "TmplKind");
        assert_eq!(
            rename("TmplKindList of TmplKind in tmplkinds", &renames),
            "Instances of Instance in whitelists"
        );
        assert_eq!(
            rename(
                "readTmplgroupKubegenExampleComV9tmplNamespacedTmplKind",
                &renames
            ),
            "readPoliceExampleComV1beta1NamespacedInstance"
        );
        let mut item = serde_json::json!({"post": {"description": "create a Instance"}});
        fix_articles(&mut item, "Instance");
        assert_eq!(item["post"]["description"], "create an Instance");
    }

    #[test]
    fn operation_id_parts_follow_the_apiserver_rules() {
        assert_eq!(valid_id("police.example.com", true), "PoliceExampleCom");
        assert_eq!(valid_id("police.example.com", false), "policeExampleCom");
        assert_eq!(valid_id("v1beta1", true), "V1beta1");
        assert_eq!(article_for("Status"), " ");
        assert_eq!(article_for("Class"), " a ");
    }
}
