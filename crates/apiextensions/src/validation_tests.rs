use serde_json::{Value, json};

use super::Schema;

fn schema() -> Schema {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "required": ["req"],
        "properties": {
            "req": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10},
            "share": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
            "name": {"type": "string", "maxLength": 3, "minLength": 1, "pattern": "^[a-z]+$"},
            "mail": {"type": "string", "format": "email"},
            "day": {"type": "string", "format": "date"},
            "bus": {"type": "string", "enum": ["virtio", "scsi"]},
            "ios": {"x-kubernetes-int-or-string": true,
                    "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "m": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 2},
                  "minProperties": 1, "maxProperties": 2},
            "set": {"type": "array", "items": {"type": "string"}, "maxItems": 2,
                    "minItems": 1, "x-kubernetes-list-type": "set"},
            "map": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"],
                              "properties": {"name": {"type": "string"}}}},
            "word": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self.lowerAscii() == self", "message": "lower"}]},
        }}}}}}]}});
    Schema::from_crd(&crd, "v1").unwrap().unwrap()
}

fn errors(spec: Value) -> Vec<String> {
    let mut spec = spec;
    spec["req"] = json!("r");
    schema()
        .validate(&json!({"spec": spec}), None)
        .iter()
        .map(ToString::to_string)
        .collect()
}

const NOT_CHECKED: &str = "<nil>: Invalid value: null: some validation rules were not checked \
because the object was invalid; correct the existing errors to complete validation";

#[test]
fn each_check_words_its_error_as_v1_36() {
    let cases = [
        (
            json!({"replicas": 11}),
            vec![
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
            ],
        ),
        (
            json!({"share": 0}),
            vec!["spec.share: Invalid value: 0: spec.share in body should be greater than 0"],
        ),
        (
            json!({"name": "abcd"}),
            vec![
                "spec.name: Too long: may not be more than 3 bytes",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"name": ""}),
            vec![
                "spec.name: Invalid value: \"\": spec.name in body should be at least 1 chars long",
            ],
        ),
        (
            json!({"mail": "nobody"}),
            vec![
                "spec.mail: Invalid value: \"nobody\": spec.mail in body must be of type email: \"nobody\"",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"day": "2020-13-01"}),
            vec![
                "spec.day: Invalid value: \"2020-13-01\": spec.day in body must be of type date: \"2020-13-01\"",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"bus": "ide"}),
            vec![
                "spec.bus: Unsupported value: \"ide\": supported values: \"virtio\", \"scsi\"",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"m": {}}),
            vec!["spec.m: Invalid value: 0: spec.m in body should have at least 1 properties"],
        ),
        (
            json!({"m": {"a": 2, "b": 2, "c": 2}}),
            vec![
                "spec.m: Too many: 3: must have at most 2 items",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"m": {"a": 1}}),
            vec![
                "spec.m.a: Invalid value: 1: spec.m.a in body should be greater than or equal to 2",
            ],
        ),
        (
            json!({"set": []}),
            vec!["spec.set: Invalid value: 0: spec.set in body should have at least 1 items"],
        ),
        (
            json!({"set": ["a", "a"]}),
            vec!["spec.set[1]: Duplicate value: \"a\""],
        ),
        (
            json!({"map": [{"name": "a"}, {"name": "a"}, {}]}),
            vec![
                "spec.map[2].name: Required value",
                "spec.map[1]: Duplicate value: {\"name\":\"a\"}",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"replicas": "x"}),
            vec![
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"replicas": 1.5}),
            vec![
                "spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: \"number\"",
                "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in spec.replicas",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"ios": true}),
            vec![
                "spec.ios: Invalid value: \"boolean\": spec.ios in body must be of type integer,string: \"boolean\"",
                "<nil>: Invalid value: \"\": \"spec.ios\" must validate at least one schema (anyOf)",
                "spec.ios: Invalid value: \"boolean\": spec.ios in body must be of type integer: \"boolean\"",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"word": "W"}),
            vec!["spec.word: Invalid value: \"W\": lower"],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(errors(spec.clone()), expected, "{spec}");
    }
}

#[test]
fn required_and_reasons() {
    let found = schema().validate(&json!({"spec": {}}), None);
    assert_eq!(found[0].to_string(), "spec.req: Required value");
    assert_eq!(found[0].kind.reason(), "FieldValueRequired");
}

#[test]
fn unchanged_values_are_not_checked_again_on_update() {
    let old = json!({"spec": {"req": "r", "replicas": 11, "name": "a"}});
    let new = json!({"spec": {"req": "r", "replicas": 11, "name": "b"}});
    assert_eq!(schema().validate(&new, Some(&old)), vec![]);
}

/// v1.36's answers for the replica path of a `scale` subresource.
#[test]
fn scale_replicas_must_be_integers() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
        "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                   "statusReplicasPath": ".status.replicas"}},
        "schema": {"openAPIV3Schema": {"type": "object",
                                       "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let schema = Schema::from_crd(&crd, "v1").unwrap().unwrap();
    let found = |object: Value| -> Vec<String> {
        schema
            .validate(&object, None)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        found(json!({"spec": {"replicas": 1.5}})),
        [
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64"
        ]
    );
    assert_eq!(
        found(json!({"spec": "str"})),
        [
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: str is of the type string, expected map[string]interface{}"
        ]
    );
    assert_eq!(
        found(json!({"spec": {"replicas": 2}})),
        Vec::<String>::new()
    );
}

/// Gateway API's `GatewaySpecAddress` (standard channel), trimmed by hand: a `oneOf` whose second
/// branch is `not: {enum: [IPAddress]}` on a defaulted `type`.
fn gateway_addresses() -> Schema {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"addresses": {"type": "array", "items": {
            "type": "object",
            "oneOf": [
                {"properties": {"type": {"enum": ["IPAddress"]},
                                "value": {"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}}},
                {"properties": {"type": {"not": {"enum": ["IPAddress"]}}}},
            ],
            "properties": {"type": {"type": "string", "default": "IPAddress"},
                           "value": {"type": "string", "maxLength": 253}}}}}}}}}}]}});
    Schema::from_crd(&crd, "v1").unwrap().unwrap()
}

#[test]
fn one_of_with_a_negated_branch_accepts_exactly_one_match() {
    let schema = gateway_addresses();
    let mut object = json!({"spec": {"addresses": [
        {"value": "1200:0000:AB00:1234:0000:2552:7777:1313"},
        {"value": "2001:db8:3c4d:15:0:d234:3eee::"},
        {"value": "1.1.1.1"},
        {"type": "IPAddress", "value": "255.255.255.255"},
        {"type": "Hostname", "value": "example.com"},
    ]}});
    schema.default(&mut object);
    let found: Vec<String> = schema
        .validate(&object, None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn one_of_with_a_negated_branch_refuses_a_hostname_typed_as_ip_address() {
    let schema = gateway_addresses();
    let mut object = json!({"spec": {"addresses": [{"value": "example.com"}]}});
    schema.default(&mut object);
    let found: Vec<String> = schema
        .validate(&object, None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found[0],
        "<nil>: Invalid value: \"\": \"spec.addresses[0]\" must validate one and only one schema (oneOf). Found none valid"
    );
}

#[test]
fn one_of_says_how_many_branches_matched() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"n": {"type": "integer", "oneOf": [{"minimum": 1}, {"minimum": 2}]}}}}}}}]}});
    let schema = Schema::from_crd(&crd, "v1").unwrap().unwrap();
    let found: Vec<String> = schema
        .validate(&json!({"spec": {"n": 5}}), None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "<nil>: Invalid value: \"\": \"spec.n\" must validate one and only one schema (oneOf). Found 2 valid alternatives"
        ]
    );
}

#[test]
fn not_refuses_a_value_its_schema_accepts() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"name": {"type": "string", "not": {"enum": ["bad"]}}}}}}}}]}});
    let schema = Schema::from_crd(&crd, "v1").unwrap().unwrap();
    let found = |name: &str| -> Vec<String> {
        let object = json!({"spec": {"name": name}});
        schema
            .validate(&object, None)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    // v1.36: `The Widget "w1" is invalid: <nil>: Invalid value: "": "spec.name" must not
    // validate the schema (not)`.
    assert_eq!(
        found("bad"),
        ["<nil>: Invalid value: \"\": \"spec.name\" must not validate the schema (not)"]
    );
    assert_eq!(found("ok"), Vec::<String>::new());
}
