//! The verdicts of v1.36 on a table of rules (`rule_check_v1_36.json`, recorded by creating a
//! CRD per rule on the real server), and the rules of real projects' CRDs, which v1.36 accepts.

use serde_json::{Value, json};

use crate::check_rules;

/// cel-go names the type of `self` `selfType<nanoseconds>`; the number is not compared.
fn without_type_number(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("selfType") {
        out.push_str(&rest[..at + "selfType".len()]);
        rest = rest[at + "selfType".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

#[test]
fn rules_get_the_verdicts_and_messages_of_v1_36() {
    let table: Value = serde_json::from_str(include_str!("rule_check_v1_36.json")).unwrap();
    let cases = table["cases"].as_array().unwrap();
    assert!(cases.len() >= 25);
    let mut mismatches = Vec::new();
    for case in cases {
        let mut schema = table["schema"].clone();
        let mut rule = json!({"rule": case["rule"]});
        if let Some(message) = case.get("messageExpression") {
            rule["messageExpression"] = message.clone();
        }
        schema["properties"]["spec"]["x-kubernetes-validations"] = json!([rule]);
        let errors = check_rules(&schema, "spec.validation.openAPIV3Schema");
        let ours = match errors.as_slice() {
            [] => json!({"accepted": true}),
            [error] => json!({"accepted": false, "field": error.field,
                "message": without_type_number(&error.message())}),
            more => json!({"accepted": false, "errors": more.len()}),
        };
        let theirs = if case["accepted"] == true {
            json!({"accepted": true})
        } else {
            json!({"accepted": false, "field": case["field"],
                "message": without_type_number(case["message"].as_str().unwrap())})
        };
        if ours != theirs {
            mismatches.push(format!(
                "{}\n  v1.36: {theirs}\n  ours:  {ours}",
                case["rule"]
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// How many rules sit under `schema`.
fn count_rules(schema: &Value) -> usize {
    match schema {
        Value::Object(map) => {
            let own = map
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            own + map.values().map(count_rules).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_rules).sum(),
        _ => 0,
    }
}

fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

/// Gateway API's, prometheus-operator's, Istio's and Argo's CRDs, and this repository's own
/// (`deploy/`, the codegen golden files): v1.36 accepts every rule.
#[test]
fn real_projects_rules_all_type_check() {
    use serde::Deserialize;
    let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        "codegen/tests/import/testdata",
        "codegen/tests/golden",
        "deploy",
    ] {
        yaml_files(&repository.join(dir), &mut files);
    }
    let (mut rules, mut refused) = (0, Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for document in serde_yaml::Deserializer::from_str(&text) {
            // A document that does not parse ends the file: the reader cannot resume after it.
            let Ok(crd) = Value::deserialize(document) else {
                break;
            };
            if crd["kind"] != "CustomResourceDefinition" {
                continue;
            }
            for (i, version) in crd["spec"]["versions"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
            {
                let schema = &version["schema"]["openAPIV3Schema"];
                rules += count_rules(schema);
                let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
                for error in check_rules(schema, &path) {
                    refused.push(format!(
                        "{} {}: {error}",
                        file.display(),
                        crd["metadata"]["name"]
                    ));
                }
            }
        }
    }
    assert!(rules > 1000, "only {rules} rules found");
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// The cost verdicts of v1.36 (`rule_cost_v1_36.json`, recorded there as its `recorded` note
/// says): every rule, message expression and set of rules gets v1.36's verdict, and a refused
/// one exactly v1.36's causes, factors included.
#[test]
fn rule_costs_get_the_verdicts_of_v1_36() {
    let table: Value = serde_json::from_str(include_str!("rule_cost_v1_36.json")).unwrap();
    let cases = table["cases"].as_array().unwrap();
    let mut mismatches = Vec::new();
    for case in cases {
        let mut schema = table["schema"].clone();
        let mut node = &mut schema["properties"]["spec"];
        for key in case["on"].as_array().into_iter().flatten() {
            let key = key.as_str().unwrap();
            node = if node["type"] == "object" && node["properties"].get(key).is_some() {
                &mut node["properties"][key]
            } else {
                &mut node[key]
            };
        }
        let sources: Vec<Value> = match case.get("rules") {
            Some(rules) => rules.as_array().unwrap().clone(),
            None => vec![case["rule"].clone()],
        };
        let rules: Vec<Value> = sources
            .into_iter()
            .map(|rule| match case.get("messageExpression") {
                Some(message) => json!({"rule": rule, "messageExpression": message}),
                None => json!({"rule": rule}),
            })
            .collect();
        node["x-kubernetes-validations"] = Value::Array(rules);
        let ours: Vec<Value> = check_rules(&schema, "spec.validation.openAPIV3Schema")
            .iter()
            .map(|e| json!([e.field, e.message()]))
            .collect();
        let theirs = case.get("causes").cloned().unwrap_or(json!([]));
        if Value::Array(ours.clone()) != theirs {
            mismatches.push(format!("{case}\n  ours: {ours:?}"));
        }
    }
    assert!(cases.len() > 150, "only {} cases", cases.len());
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// A rule on the root sees `kind`, `apiVersion` and only `metadata.name` and
/// `.generateName` (v1.36's answers for these CRDs, recorded there).
#[test]
fn root_rules_see_type_and_object_meta() {
    let verdict = |properties: Value, rule: &str| {
        let schema = json!({"type": "object", "properties": properties,
            "x-kubernetes-validations": [{"rule": rule}]});
        check_rules(&schema, "spec.validation.openAPIV3Schema")
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    let spec = json!({"spec": {"type": "object"}});
    assert!(verdict(spec.clone(), "self.metadata.name.size() < 10").is_empty());
    let short_name = json!({"metadata": {"type": "object",
        "properties": {"name": {"type": "string", "maxLength": 5}}}});
    assert!(
        verdict(
            short_name,
            "self.metadata.name.size() < 10 && self.kind == 'x'"
        )
        .is_empty()
    );
    assert_eq!(
        verdict(spec, "self.metadata.labels.size() < 10"),
        [
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: \
          {\"Rule\":\"self.metadata.labels.size() \\u003c 10\",\"Message\":\"\",\"MessageExpression\":\"\",\
          \"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: \
          <input>:1:14: undefined field 'labels'\n | self.metadata.labels.size() < 10\n | .............^"
        ]
    );
}

/// `oldSelf` only where the old value correlates (map lists, maps and atomic maps do, other
/// lists do not): v1.36's answer for this CRD (recorded there; it lists the causes in random
/// order).
#[test]
fn old_self_is_refused_where_nothing_correlates() {
    let item = json!({"type": "object", "properties": {"n": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.n >= oldSelf.n"}]});
    let short =
        |rule: Value| json!({"type": "string", "maxLength": 5, "x-kubernetes-validations": [rule]});
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "atomic": {"type": "array", "maxItems": 5, "items": item},
        "maplist": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["n"], "items": {"type": "object", "required": ["n"],
            "properties": {"n": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.n >= oldSelf.n"}]}},
        "setlist": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "set",
            "items": short(json!({"rule": "self == oldSelf"}))},
        "m": {"type": "object", "maxProperties": 5,
            "additionalProperties": short(json!({"rule": "self == oldSelf"}))},
        "opt": {"type": "array", "maxItems": 5,
            "items": short(json!({"rule": "oldSelf.hasValue()", "optionalOldSelf": true}))},
        "plain": short(json!({"rule": "self.size() > 1", "optionalOldSelf": false})),
        "atomic_map": {"type": "object", "x-kubernetes-map-type": "atomic",
            "properties": {"a": short(json!({"rule": "self == oldSelf"}))}}}}}});
    let spec = "spec.validation.openAPIV3Schema.properties[spec]";
    let errors: Vec<String> = check_rules(&schema, "spec.validation.openAPIV3Schema")
        .iter()
        .map(ToString::to_string)
        .collect();
    let within = "oldSelf cannot be used on the uncorrelatable portion of the schema within";
    assert_eq!(
        errors,
        [
            format!(
                "{spec}.properties[atomic].items.x-kubernetes-validations[0].rule: Invalid value: \"self.n >= oldSelf.n\": {within} {spec}.properties[atomic]"
            ),
            format!(
                "{spec}.properties[opt].items.x-kubernetes-validations[0].rule: Invalid value: \"oldSelf.hasValue()\": {within} {spec}.properties[opt]"
            ),
            format!(
                "{spec}.properties[plain].x-kubernetes-validations[0].optionalOldSelf: Invalid value: false: may not be set if oldSelf is not used in rule"
            ),
            format!(
                "{spec}.properties[setlist].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": {within} {spec}.properties[setlist]"
            ),
        ]
    );
}
