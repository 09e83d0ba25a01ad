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

/// One string field per Kubernetes CEL library, each with a rule that calls it.
fn library_errors(field: &str, value: Value) -> Vec<String> {
    let rule = |rule: &str, message: &str| json!([{"rule": rule, "messageExpression": message}]);
    let string = |rules: Value| json!({"type": "string", "x-kubernetes-validations": rules});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "properties": {
            "ip": string(rule("cidr('10.0.0.0/8').containsIP(self) && !ip(self).isLoopback()",
                "self + ' is not in ' + string(cidr('10.0.0.0/8').masked())")),
            "url": string(rule("url(self).getScheme() == 'https'",
                "'scheme of ' + url(self).getHost() + ' is ' + url(self).getScheme()")),
            "semver": string(rule("semver(self, true).isGreaterThan(semver('1.2.0'))",
                "'version ' + string(semver(self, true).minor()) + ' is too old'")),
            "format": string(rule("!format.dns1123Label().validate(self).hasValue()",
                "format.dns1123Label().validate(self).value()[0]")),
            "list": {"type": "array", "items": {"type": "integer"}, "x-kubernetes-validations":
                rule("self.max() - self.min() < 10 && self.indexOf(0) == -1",
                    "'spread ' + string(self.max() - self.min())")},
            "sets": {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations":
                rule("sets.contains(['a', 'b'], self)", "'not in a, b'")},
            "regex": string(rule("self.findAll('[0-9]+').size() < 2",
                "'numbers: ' + self.findAll('[0-9]+', 5).join(', ')")),
        }}}}}}]}});
    let schema = Schema::from_crd(&crd, "v1").unwrap().unwrap();
    schema
        .validate(&json!({"spec": {field: value}}), None)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn ip_and_cidr_rules_are_evaluated() {
    assert!(library_errors("ip", json!("10.1.2.3")).is_empty());
    assert_eq!(
        library_errors("ip", json!("11.0.0.1")),
        ["spec.ip: Invalid value: \"11.0.0.1\": 11.0.0.1 is not in 10.0.0.0/8"]
    );
    assert_eq!(
        library_errors("ip", json!("10.0.0.01")),
        [
            "spec.ip: Invalid value: \"string\": IP Address \"10.0.0.01\" parse error during conversion from string: ParseAddr(\"10.0.0.01\"): IPv4 field has octet with leading zero evaluating rule: cidr('10.0.0.0/8').containsIP(self) && !ip(self).isLoopback()"
        ]
    );
}

#[test]
fn url_rules_are_evaluated() {
    assert!(library_errors("url", json!("https://example.com/x")).is_empty());
    assert_eq!(
        library_errors("url", json!("http://example.com:80/x")),
        ["spec.url: Invalid value: \"http://example.com:80/x\": scheme of example.com:80 is http"]
    );
}

#[test]
fn semver_rules_are_evaluated() {
    assert!(library_errors("semver", json!("v1.3")).is_empty());
    assert_eq!(
        library_errors("semver", json!("1.1.9")),
        ["spec.semver: Invalid value: \"1.1.9\": version 1 is too old"]
    );
}

#[test]
fn format_rules_are_evaluated() {
    assert!(library_errors("format", json!("my-name")).is_empty());
    assert_eq!(
        library_errors("format", json!("a.b")),
        ["spec.format: Invalid value: \"a.b\": must not contain dots"]
    );
}

#[test]
fn list_set_and_regex_rules_are_evaluated() {
    assert!(library_errors("list", json!([3, 5, 12])).is_empty());
    assert_eq!(
        library_errors("list", json!([3, 50])),
        ["spec.list: Invalid value: spread 47"]
    );
    assert_eq!(
        library_errors("list", json!([])),
        [
            "spec.list: Invalid value: \"array\": max called on empty list evaluating rule: self.max() - self.min() < 10 && self.indexOf(0) == -1"
        ]
    );
    assert!(library_errors("sets", json!(["b", "a"])).is_empty());
    assert_eq!(
        library_errors("sets", json!(["c"])),
        ["spec.sets: Invalid value: not in a, b"]
    );
    assert_eq!(
        library_errors("regex", json!("a1b22c333")),
        ["spec.regex: Invalid value: \"a1b22c333\": numbers: 1, 22, 333"]
    );
}

/// The CRDs v1.36.2 answered the runtime cost questions for (the same objects created there:
/// see each test).
fn costly_schema() -> Schema {
    let ints = |max: u64| json!({"type": "array", "maxItems": max, "items": {"type": "integer"}});
    let mut m = ints(1000);
    m["x-kubernetes-validations"] = Value::Array(vec![
        json!({"rule": "self.all(a, self.all(b, a <= b))"});
        11
    ]);
    let precise = json!({"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.n.all(a, self.n.all(b, a <= b)) && self.s.contains('x')"}],
        "properties": {"n": ints(407), "s": {"type": "string", "maxLength": 40000}}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": "!has(self.n) || self.n.all(a, self.n.all(b, a <= b))"}],
        "properties": {"n": ints(1000), "m": m, "precise": precise}}}}}}]}});
    Schema::from_crd(&crd, "v1").unwrap().unwrap()
}

fn costly(spec: Value) -> Vec<String> {
    costly_schema()
        .validate(&json!({"spec": spec}), None)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// A rule whose evaluation costs more than `PerCallLimit` stops there, with v1.36's error: 407
/// items cost 6·407² + 6·407 + 5 = 996,341, 408 items 1,001,237 (v1.36.2 accepted the first
/// object and refused the second with this message).
#[test]
fn an_evaluation_over_the_per_call_limit_stops_validation() {
    assert_eq!(costly(json!({"n": vec![1; 407]})), Vec::<String>::new());
    assert_eq!(
        costly(json!({"n": vec![1; 408]})),
        [
            "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': \
          no further validation rules will be run due to call cost exceeds limit for rule: \
          !has(self.n) || self.n.all(a, self.n.all(b, a <= b))"
        ]
    );
}

/// The count is cel-go's to the unit: 407 items and a 36,590-character string cost exactly
/// 1,000,000 and pass, one character more costs 1,000,001 and is stopped (v1.36.2's answers for
/// these two objects, with the rule on `spec` there).
#[test]
fn the_runtime_cost_is_counted_to_the_unit() {
    let spec = |length: usize| json!({"precise": {"n": vec![1; 407], "s": "y".repeat(length)}});
    let rule = "self.n.all(a, self.n.all(b, a <= b)) && self.s.contains('x')";
    assert_eq!(
        costly(spec(36_590)),
        [format!("spec.precise: Invalid value: failed rule: {rule}")]
    );
    assert_eq!(
        costly(spec(36_591)),
        [format!(
            "spec.precise: Invalid value: \"object\": 'operation cancelled: actual cost limit \
             exceeded': no further validation rules will be run due to call cost exceeds limit \
             for rule: {rule}"
        )]
    );
}

/// The rules of one object share `RuntimeCELCostBudget`: eleven rules of 995,931 each spend it
/// on the eleventh (v1.36.2 refused this object so); with 300 items they fit.
#[test]
fn the_rules_of_an_object_share_one_budget() {
    assert_eq!(costly(json!({"m": vec![1; 300]})), Vec::<String>::new());
    assert_eq!(
        costly(json!({"m": vec![1; 407]})),
        [
            "spec.m: Invalid value: \"array\": validation failed due to running out of cost budget, \
          no further validation rules will be run"
        ]
    );
}

/// A message expression is counted too: over the per-call limit it stops validation with
/// v1.36's error at the rule's field (v1.36.2's answers for 407 and 408 items).
#[test]
fn a_message_expression_over_the_per_call_limit_stops_validation() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "self.n.size() < 0", "fieldPath": ".n",
            "messageExpression": "self.n.all(a, self.n.all(b, a <= b)) ? 'x' : 'y'"}],
        "properties": {"n": {"type": "array", "maxItems": 1000,
                             "items": {"type": "integer"}}}}}}}}]}});
    let schema = Schema::from_crd(&crd, "v1").unwrap().unwrap();
    let errors = |items: usize| -> Vec<String> {
        schema
            .validate(&json!({"spec": {"n": vec![1; items]}}), None)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(errors(407), ["spec.n: Invalid value: x"]);
    assert_eq!(
        errors(408),
        [
            "spec.n: Invalid value: \"object\": no further validation rules will be run due to call \
          cost exceeds limit for messageExpression: \"self.n.all(a, self.n.all(b, a <= b)) ? 'x' \
          : 'y'\""
        ]
    );
}

/// Gateway API's experimental `targetRefs` rule: two comprehensions over 23 `&&`/`||`
/// operators. Its evaluation is deep, and in a user's debug build it overflowed a tokio
/// worker's 2 MiB stack. This workspace's tests build dependencies with `opt-level = 1`, whose
/// frames are smaller: on a 64 KiB thread it overflows here without `stack::with_room`.
#[test]
fn a_deep_rule_is_evaluated_on_a_small_stack() {
    let rule = "self.all(p1, self.exists_one(p2, p1.group == p2.group && p1.kind == p2.kind \
        && p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '') \
        && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) \
        && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ )) \
        && (((!has(p1.sectionName) || p1.sectionName == '') && (!has(p2.sectionName) \
        || p2.sectionName == '')) || ( has(p1.sectionName) && has(p2.sectionName) \
        && p1.sectionName == p2.sectionName)) && (((!has(p1.port) || p1.port == 0) \
        && (!has(p2.port) || p2.port == 0)) || (has(p1.port) && has(p2.port) \
        && p1.port == p2.port))))";
    let reference = json!({"type": "object", "properties": {
        "group": {"type": "string", "maxLength": 253}, "kind": {"type": "string", "maxLength": 63},
        "name": {"type": "string", "maxLength": 253}, "namespace": {"type": "string", "maxLength": 63},
        "sectionName": {"type": "string", "maxLength": 253}, "port": {"type": "integer"}}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"targetRefs": {"type": "array", "maxItems": 16, "items": reference,
                "x-kubernetes-validations": [{"rule": rule, "message": "must be unique"}]}}}}}}}]}});
    let reference = |name: &str| json!({"group": "", "kind": "Service", "name": name});
    let unique = json!({"spec": {"targetRefs": [reference("a"), reference("b")]}});
    let repeated = json!({"spec": {"targetRefs": [reference("a"), reference("a")]}});
    let verdicts = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(move || {
            let schema = Schema::from_crd(&crd, "v1").unwrap().unwrap();
            let count = |object: &Value| schema.validate(object, None).len();
            (count(&unique), count(&repeated))
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(verdicts, (0, 1));
}
