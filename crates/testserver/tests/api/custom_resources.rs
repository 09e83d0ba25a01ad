//! Custom resources under their CRD's structural schema: pruning, defaulting and validation on
//! every write path, answers copied from a real v1.36.2 (the same CRD installed there).

use crate::common::*;
use serde_json::{Value, json};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const PROBES: &str = "/apis/schemaprobe.kubegen.example.com/v1/namespaces/default/probes";
const NOT_CHECKED: &str = "<nil>: Invalid value: null: some validation rules were not checked \
because the object was invalid; correct the existing errors to complete validation";

fn crd() -> Value {
    json!({"metadata": {"name": "probes.schemaprobe.kubegen.example.com"},
           "spec": {"group": "schemaprobe.kubegen.example.com", "scope": "Namespaced",
                    "names": {"kind": "Probe", "plural": "probes", "singular": "probe", "listKind": "ProbeList"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "subresources": {"status": {},
                                         "scale": {"specReplicasPath": ".spec.replicas",
                                                   "statusReplicasPath": ".status.replicas"}},
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "properties": {
                                "replicas": {"type": "integer", "minimum": 0, "maximum": 10},
                                "a": {"type": "string", "default": "dflt"},
                                "nul": {"type": "string", "nullable": true, "default": "x"},
                                "nonnul": {"type": "string", "default": "y"},
                                "word": {"type": "string"},
                                "immut": {"type": "string", "x-kubernetes-validations": [
                                    {"rule": "self == oldSelf", "message": "immutable"}]},
                                "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                                        "properties": {"spec": {"type": "object",
                                                       "properties": {"x": {"type": "string"}}}}}}},
                            "status": {"type": "object", "properties": {
                                "replicas": {"type": "integer"},
                                "phase": {"type": "string", "enum": ["A", "B"]}}}}}}}]}})
}

async fn harness() -> Harness {
    let h = start().await;
    let reply = h.http.post(CRDS, crd()).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    h
}

fn probe(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "schemaprobe.kubegen.example.com/v1", "kind": "Probe",
           "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn create_prunes_and_defaults_like_v1_36() {
    let h = harness().await;
    let sent = probe(
        "p",
        json!({"word": "w", "extra": 1, "nul": null, "nonnul": null,
        "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n", "junk": 1},
                "spec": {"x": "1", "y": 2}, "other": 3}}),
    );
    let reply = h.http.post(&format!("{PROBES}?dryRun=All"), sent).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(
        reply.body["spec"],
        json!({"a": "dflt", "nonnul": "y", "nul": null, "word": "w",
               "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n"}, "spec": {"x": "1"}}})
    );
}

#[tokio::test]
async fn status_writes_validate_the_status_and_ignore_the_spec() {
    let h = harness().await;
    let created = h
        .http
        .post(PROBES, probe("s", json!({"replicas": 1, "immut": "a"})))
        .await;
    assert_eq!(created.code, 201, "{}", created.body);
    let merge = "application/merge-patch+json";
    let path = format!("{PROBES}/s/status");
    let bad = json!({"status": {"phase": "C", "replicas": 2}, "spec": {"replicas": 99}});
    let reply = h.http.patch(&path, merge, bad).await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        format!(
            "Probe.schemaprobe.kubegen.example.com \"s\" is invalid: [status.phase: Unsupported value: \"C\": supported values: \"A\", \"B\", {NOT_CHECKED}]"
        )
    );
    assert_eq!(
        reply.body["details"]["causes"][0],
        json!({"reason": "FieldValueNotSupported", "field": "status.phase",
               "message": "Unsupported value: \"C\": supported values: \"A\", \"B\""})
    );
    let good =
        json!({"status": {"phase": "A", "replicas": 2, "junk": 1}, "spec": {"replicas": 99}});
    let reply = h.http.patch(&path, merge, good).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["status"], json!({"phase": "A", "replicas": 2}));
    assert_eq!(reply.body["spec"]["replicas"], 1);
}

#[tokio::test]
async fn scale_and_patch_writes_are_validated() {
    let h = harness().await;
    h.http
        .post(PROBES, probe("s", json!({"replicas": 1, "immut": "a"})))
        .await;
    let merge = "application/merge-patch+json";
    let reply = h
        .http
        .patch(
            &format!("{PROBES}/s/scale"),
            merge,
            json!({"spec": {"replicas": 11}}),
        )
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "Probe.schemaprobe.kubegen.example.com \"s\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    );
    let patch = json!({"spec": {"immut": "b", "extra": 1}});
    let reply = h.http.patch(&format!("{PROBES}/s"), merge, patch).await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "Probe.schemaprobe.kubegen.example.com \"s\" is invalid: spec.immut: Invalid value: \"b\": immutable"
    );
    // A transition rule has nothing to compare once the field is gone.
    let removed = json!({"spec": {"immut": null}});
    let reply = h
        .http
        .patch(&format!("{PROBES}/s?dryRun=All"), merge, removed)
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(
        reply.body["spec"],
        json!({"a": "dflt", "nonnul": "y", "nul": "x", "replicas": 1})
    );
}

const WIDGETS: &str = "/apis/tokprobe.kubegen.example.com/v1/namespaces/default/widgets";

/// Gateway API's address union (`oneOf` of `type: {enum: [IPAddress]}` and `type: {not: {enum:
/// [IPAddress]}}` on a defaulted `type`), trimmed by hand, plus a `not` and a maximum.
fn widget_crd() -> Value {
    json!({"metadata": {"name": "widgets.tokprobe.kubegen.example.com"},
           "spec": {"group": "tokprobe.kubegen.example.com", "scope": "Namespaced",
                    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "properties": {
                                "size": {"type": "integer", "maximum": 5},
                                "name": {"type": "string", "not": {"enum": ["bad"]}},
                                "addresses": {"type": "array", "items": {
                                    "type": "object",
                                    "oneOf": [
                                        {"properties": {"type": {"enum": ["IPAddress"]},
                                                        "value": {"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}}},
                                        {"properties": {"type": {"not": {"enum": ["IPAddress"]}}}}],
                                    "properties": {
                                        "type": {"type": "string", "default": "IPAddress"},
                                        "value": {"type": "string"}}}}}}}}}}]}})
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "tokprobe.kubegen.example.com/v1", "kind": "Widget",
           "metadata": {"name": "w1"}, "spec": spec})
}

/// v1.36 accepts Gateway API's `examples/standard/gateway-addresses.yaml` addresses, refuses a
/// value its `not` matches with `"spec.name" must not validate the schema (not)`, and answers a
/// create that is both a duplicate and invalid with 422 `spec.size in body should be less than or
/// equal to 5`.
#[tokio::test]
async fn one_of_with_not_accepts_gateway_addresses_and_duplicates_validate_first() {
    let h = start().await;
    let reply = h.http.post(CRDS, widget_crd()).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    let addresses = json!([
        {"value": "1200:0000:AB00:1234:0000:2552:7777:1313"},
        {"value": "21DA:D3:0:2F3B:2AA:FF:FE28:9C5A"},
        {"value": "2001:db8:3c4d:15:0:d234:3eee::"},
        {"value": "0.0.0.0"},
        {"type": "IPAddress", "value": "255.255.255.255"},
        {"type": "Hostname", "value": "example.com"}]);
    let bad_name = h
        .http
        .post(WIDGETS, widget(json!({"size": 1, "name": "bad"})))
        .await;
    assert_status(&bad_name, 422, "Invalid");
    assert_eq!(
        bad_name.body["message"],
        "Widget.tokprobe.kubegen.example.com \"w1\" is invalid: <nil>: Invalid value: \"\": \
         \"spec.name\" must not validate the schema (not)"
    );
    let created = h
        .http
        .post(
            WIDGETS,
            widget(json!({"size": 1, "name": "ok", "addresses": addresses})),
        )
        .await;
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(created.body["spec"]["addresses"][0]["type"], "IPAddress");
    let duplicate = h.http.post(WIDGETS, widget(json!({"size": 9}))).await;
    assert_status(&duplicate, 422, "Invalid");
    assert_eq!(
        duplicate.body["message"],
        "Widget.tokprobe.kubegen.example.com \"w1\" is invalid: spec.size: Invalid value: 9: \
         spec.size in body should be less than or equal to 5"
    );
}

/// A rule that does not type-check refuses the CRD, with v1.36's cause (recorded there with
/// the same CRD, named `celcheckxs.celcheck.example.com`).
#[tokio::test]
async fn a_rule_that_does_not_type_check_refuses_the_crd() {
    let h = start().await;
    let mut bad = crd();
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] =
        json!([{"rule": "self.nosuchfield == 1"}]);
    let reply = h.http.post(CRDS, bad.clone()).await;
    assert_status(&reply, 422, "Invalid");
    let causes = reply.body["details"]["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{}", reply.body);
    assert_eq!(
        causes[0]["field"],
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    );
    assert_eq!(
        causes[0]["message"],
        "Invalid value: {\"Rule\":\"self.nosuchfield == 1\",\"Message\":\"\",\"MessageExpression\":\"\",\
         \"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: \
         ERROR: <input>:1:5: undefined field 'nosuchfield'\n | self.nosuchfield == 1\n | ....^"
    );
    // The same rule on an update of a stored CRD is refused too.
    let reply = h.http.post(CRDS, crd()).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    bad["metadata"]["resourceVersion"] = reply.body["metadata"]["resourceVersion"].clone();
    let reply = h
        .http
        .put(
            &format!("{CRDS}/probes.schemaprobe.kubegen.example.com"),
            bad,
        )
        .await;
    assert_status(&reply, 422, "Invalid");
}

/// Versions with different schemas are checked each at its own path, rules under `items` and
/// `additionalProperties` included (v1.36's causes, recorded with the same CRD; it lists them
/// in random order).
#[tokio::test]
async fn rules_of_each_version_are_checked_at_their_own_paths() {
    let h = start().await;
    let item = json!({"type": "object", "properties": {"n": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.n > 'a'"}]});
    let v1 = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "list": {"type": "array", "maxItems": 5, "items": item},
        "m": {"type": "object", "maxProperties": 5, "additionalProperties": {
            "type": "string", "maxLength": 5, "x-kubernetes-validations": [
                {"rule": "self", "message": "m", "reason": "FieldValueForbidden"}]}}}}}});
    let mut v2 = v1.clone();
    v2["properties"]["spec"]["properties"]["other"] = json!({"type": "string"});
    let crd = json!({"metadata": {"name": "celcheckps.celcheck.example.com"},
        "spec": {"group": "celcheck.example.com", "scope": "Namespaced",
                 "names": {"plural": "celcheckps", "kind": "Celcheckp"},
                 "versions": [
                     {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": v1}},
                     {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": v2}}]}});
    let reply = h.http.post(CRDS, crd).await;
    assert_status(&reply, 422, "Invalid");
    let mut causes: Vec<String> = reply.body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect();
    causes.sort();
    let overload = "{\"Rule\":\"self.n \\u003e 'a'\",\"Message\":\"\",\"MessageExpression\":\"\",\
        \"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: \
        <input>:1:8: found no matching overload for '_>_' applied to '(int, string)'\n | self.n > 'a'\n | .......^";
    let not_bool = "{\"Rule\":\"self\",\"Message\":\"m\",\"MessageExpression\":\"\",\
        \"Reason\":\"FieldValueForbidden\",\"FieldPath\":\"\",\"OptionalOldSelf\":null}: \
        cel expression must evaluate to a bool";
    let mut expected = Vec::new();
    for i in 0..2 {
        let at = format!("spec.versions[{i}].schema.openAPIV3Schema.properties[spec]");
        expected.push(format!(
            "{at}.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: {overload}"
        ));
        expected.push(format!(
            "{at}.properties[m].additionalProperties.x-kubernetes-validations[0].rule: Invalid value: {not_bool}"
        ));
    }
    expected.sort();
    assert_eq!(causes, expected);
}

/// v1.36.2 stored Istio's `percentage: {value: 100.0}` and read it back as `100`: whole numbers
/// written with a fraction are kept as Go's decoder reads them.
#[tokio::test]
async fn whole_numbers_with_a_fraction_read_back_as_integers() {
    let h = harness().await;
    let reply = h
        .http
        .post(PROBES, probe("n", json!({"replicas": 3.0})))
        .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    let read = h.http.get(&format!("{PROBES}/n")).await;
    assert_eq!(read.body["spec"]["replicas"].to_string(), "3");
}
