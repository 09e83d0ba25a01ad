//! The printers of the admission policy kinds (`pkg/printers/internalversion/printers.go`
//! `printValidatingAdmissionPolicy`, `printMutatingAdmissionPolicy` and their bindings'), so
//! `kubectl get validatingadmissionpolicies` shows v1.36's columns: the number of validations
//! or mutations and the parameter kind of a policy, the policy and parameter reference of a
//! binding.

use serde_json::{Value, json};

/// A policy's cells after NAME: how many entries `list` (`validations` or `mutations`) has,
/// and its `paramKind` as `<apiVersion>/<kind>` (`<unset>` without one).
pub(crate) fn policy(o: &Value, list: &str) -> Vec<Value> {
    let count = o
        .pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let param_kind = match o.pointer("/spec/paramKind") {
        Some(kind) => format!("{}/{}", text(kind, "apiVersion"), text(kind, "kind")),
        None => "<unset>".to_string(),
    };
    vec![json!(count), json!(param_kind)]
}

/// A binding's cells after NAME: its policy and its `paramRef`: `<namespace>/<name>`,
/// `*/<name>` without a namespace, the selector in Go's `LabelSelector.String()` form, or
/// `<unset>`.
pub(crate) fn binding(o: &Value) -> Vec<Value> {
    let policy = o
        .pointer("/spec/policyName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let param_ref = match o.pointer("/spec/paramRef") {
        None => "<unset>".to_string(),
        Some(r) if !text(r, "name").is_empty() => {
            let namespace = match text(r, "namespace") {
                "" => "*",
                ns => ns,
            };
            format!("{namespace}/{}", text(r, "name"))
        }
        Some(r) => r.get("selector").map_or_else(String::new, go_selector),
    };
    vec![json!(policy), json!(param_ref)]
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A `metav1.LabelSelector` as its generated Go `String()` writes it (map keys sorted).
fn go_selector(selector: &Value) -> String {
    let mut labels: Vec<(&String, &Value)> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    labels.sort_by_key(|(k, _)| *k);
    let labels: String = labels
        .iter()
        .map(|(k, v)| format!("{k}: {},", v.as_str().unwrap_or("")))
        .collect();
    let expressions: String = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                text(e, "key"),
                text(e, "operator"),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_bindings_print_as_v136_prints_them() {
        let vap = json!({"spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "true"}, {"expression": "true"}]}});
        assert_eq!(
            policy(&vap, "validations"),
            [json!(2), json!("v1/ConfigMap")]
        );
        let map = json!({"spec": {"mutations": [{}]}});
        assert_eq!(policy(&map, "mutations"), [json!(1), json!("<unset>")]);
        let cases = [
            (json!({"name": "x", "namespace": "pns"}), "pns/x"),
            (json!({"name": "x"}), "*/x"),
            (
                json!({"selector": {"matchLabels": {"a": "b"}}}),
                "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}",
            ),
        ];
        for (param_ref, shown) in cases {
            let b = json!({"spec": {"policyName": "p", "paramRef": param_ref}});
            assert_eq!(binding(&b), [json!("p"), json!(shown)]);
        }
        assert_eq!(
            binding(&json!({"spec": {"policyName": "p"}})),
            [json!("p"), json!("<unset>")]
        );
    }
}
