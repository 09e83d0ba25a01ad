use serde_json::{Value, json};

use super::Schema;

fn schema() -> Schema {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.cpu <= 64 || self.bus == 'virtio'",
             "messageExpression": "'disk bus ' + self.bus + ' supports at most 64 CPUs'",
             "reason": "FieldValueForbidden", "fieldPath": ".bus"},
            {"rule": "!has(self.a) || self.a != 'bad'", "fieldPath": ".a"}],
        "properties": {
            "cpu": {"type": "integer"},
            "bus": {"type": "string"},
            "a": {"type": "string"},
            "disk": {"type": "integer", "x-kubernetes-validations": [
                {"rule": "self >= oldSelf", "message": "may grow but not shrink"}]},
            "list": {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [
                {"rule": "self.all(x, x.size() > 1)"},
                {"rule": "size(self) < 3", "reason": "FieldValueDuplicate"}]},
            "q": {"type": "string", "x-kubernetes-validations": [
                {"rule": "quantity(self).isGreaterThan(quantity('1Gi'))", "message": "small"}]},
            "w": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self.startsWith('w') && self.matches('^[a-z]+$')",
                 "messageExpression": "'starts ' + self"},
                {"rule": "url(self).getScheme() == 'https'"}]},
        }}}}}}]}});
    Schema::from_crd(&crd, "v1").unwrap().unwrap()
}

fn errors(spec: Value, old: Option<Value>) -> Vec<String> {
    let old = old.map(|spec| json!({"spec": spec}));
    schema()
        .validate(&json!({"spec": spec}), old.as_ref())
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_false_rule_reports_its_message_reason_and_field_path() {
    assert_eq!(
        errors(json!({"cpu": 65, "bus": "sata"}), None),
        ["spec.bus: Forbidden: disk bus sata supports at most 64 CPUs"]
    );
    assert_eq!(
        errors(
            json!({"cpu": 1, "bus": "sata", "a": "bad", "list": ["a", "bb", "c"], "q": "1Mi", "w": "W"}),
            None
        ),
        [
            "spec.a: Invalid value: failed rule: !has(self.a) || self.a != 'bad'",
            "spec.list: Invalid value: failed rule: self.all(x, x.size() > 1)",
            "spec.list: Duplicate value",
            "spec.q: Invalid value: \"1Mi\": small",
            "spec.w: Invalid value: \"W\": starts W",
            "spec.w: Invalid value: \"string\": URL parse error during conversion from string: parse \"W\": invalid URI for request evaluating rule: url(self).getScheme() == 'https'",
        ]
    );
}

#[test]
fn transition_rules_need_an_old_value() {
    assert_eq!(
        errors(json!({"cpu": 1, "disk": 5}), None),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            json!({"cpu": 1, "disk": 5}),
            Some(json!({"cpu": 1, "disk": 20}))
        ),
        ["spec.disk: Invalid value: 5: may grow but not shrink"]
    );
    assert_eq!(
        errors(
            json!({"cpu": 1, "disk": 30}),
            Some(json!({"cpu": 1, "disk": 20}))
        ),
        Vec::<String>::new()
    );
}

#[test]
fn evaluation_errors_name_the_type_and_the_rule() {
    assert_eq!(
        errors(json!({"cpu": 1, "q": "abc"}), None),
        [
            "spec.q: Invalid value: \"string\": quantities must match the regular expression \
          '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: small"
        ]
    );
}

/// v1.36: `spec: Invalid value: "object": no such key: word evaluating rule: self.word == "w"`.
#[test]
fn a_missing_field_is_an_evaluation_error_at_the_rules_node() {
    assert_eq!(
        errors(json!({"cpu": 65}), None),
        [
            "spec: Invalid value: \"object\": no such key: bus evaluating rule: \
          self.cpu <= 64 || self.bus == 'virtio'"
        ]
    );
}
