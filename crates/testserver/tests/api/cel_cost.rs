//! The cost limits of CRD validation rules: a rule whose estimate fits the CRD's budget but
//! whose evaluation costs more than `PerCallLimit`, and rules that together spend an object's
//! `RuntimeCELCostBudget`, stop validation with v1.36's 422 (answers recorded from v1.36.2 for
//! the same CRD and objects; the `_on_cluster` twin asks the cluster of
//! `KUBEGEN_E2E_KUBECONFIG` the same questions).

use std::time::Duration;

use kubegen_client::Client;
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

use crate::twin::call;

const GROUP: &str = "celcost.kubegen.example.com";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A list of integers of at most `max` items.
fn ints(max: u64) -> Value {
    json!({"type": "array", "maxItems": max, "items": {"type": "integer"}})
}

/// The CRD: a rule on `spec` iterating `n` twice (estimated 6,006,005, within the budget of one
/// rule), eleven rules on `m` sharing the object's budget, and a rule whose cost a string's
/// length sets to the unit.
fn crd() -> Value {
    let mut m = ints(1000);
    m["x-kubernetes-validations"] = Value::Array(vec![
        json!({"rule": "self.all(a, self.all(b, a <= b))"});
        11
    ]);
    let precise = json!({"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.n.all(a, self.n.all(b, a <= b)) && self.s.contains('x')"}],
        "properties": {"n": ints(407), "s": {"type": "string", "maxLength": 40000}}});
    let mut regex = precise.clone();
    regex["x-kubernetes-validations"] =
        json!([{"rule": "self.n.all(a, self.n.all(b, a <= b)) && self.s.matches('^y+$')"}]);
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("costs.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "costs", "singular": "cost", "kind": "Cost", "listKind": "CostList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "!has(self.n) || self.n.all(a, self.n.all(b, a <= b))"}],
                    "properties": {"n": ints(1000), "m": m, "precise": precise,
                                   "regex": regex}}}}}}]}})
}

fn cost(namespace: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Cost",
           "metadata": {"name": name, "namespace": namespace}, "spec": spec})
}

/// The one cause of a 422 `Invalid` answer: `(field, message)`.
fn cause(answer: &(u16, Value)) -> (String, String) {
    let (code, body) = answer;
    assert_eq!(*code, 422, "{body}");
    assert_eq!(body["reason"], "Invalid", "{body}");
    let causes = body["details"]["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{body}");
    let text = |key: &str| causes[0][key].as_str().unwrap().to_string();
    assert_eq!(text("reason"), "FieldValueInvalid");
    (text("field"), text("message"))
}

const CALL_LIMIT: &str = "Invalid value: \"object\": 'operation cancelled: actual cost limit \
exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ";

/// Creates the CRD and the objects in `namespace` and checks v1.36's answers.
async fn check(client: &Client, namespace: &str) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    let (code, body) = call(client, "POST", "/api/v1/namespaces", &ns).await;
    assert!(code == 201 || code == 409, "{body}");
    let (code, body) = call(client, "POST", CRDS, &crd()).await;
    assert!(code == 201 || code == 409, "{body}");
    let path = format!("/apis/{GROUP}/v1/namespaces/{namespace}/costs");
    let create = |name: &str, spec: Value| {
        let object = cost(namespace, name, spec);
        let path = path.clone();
        async move { call(client, "POST", &path, &object).await }
    };
    // A real server serves the resource a moment after the CRD is written.
    let mut first = create("n407", json!({"n": vec![1; 407]})).await;
    for _ in 0..50 {
        if first.0 != 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        first = create("n407", json!({"n": vec![1; 407]})).await;
    }
    // 6·407² + 6·407 + 5 = 996,341: within the limit.
    assert_eq!(first.0, 201, "{}", first.1);
    // 408 items cost 1,001,237.
    let rule = "!has(self.n) || self.n.all(a, self.n.all(b, a <= b))";
    assert_eq!(
        cause(&create("n408", json!({"n": vec![1; 408]})).await),
        ("spec".to_string(), format!("{CALL_LIMIT}{rule}"))
    );
    // Exactly 1,000,000 passes the limit (and the rule is false); 1,000,001 does not.
    let precise = |length: usize| json!({"precise": {"n": vec![1; 407], "s": "y".repeat(length)}});
    let rule = "self.n.all(a, self.n.all(b, a <= b)) && self.s.contains('x')";
    assert_eq!(
        cause(&create("s36590", precise(36_590)).await),
        (
            "spec.precise".to_string(),
            format!("Invalid value: failed rule: {rule}")
        )
    );
    assert_eq!(
        cause(&create("s36591", precise(36_591)).await),
        ("spec.precise".to_string(), format!("{CALL_LIMIT}{rule}"))
    );
    // `matches` costs ceil((1 + length) / 10) × ceil(4 / 4), its receiver's length: 36,589
    // characters bring the rule to 1,000,000, one more to 1,000,001.
    let regex = |length: usize| json!({"regex": {"n": vec![1; 407], "s": "y".repeat(length)}});
    let (code, body) = create("r36589", regex(36_589)).await;
    assert_eq!(code, 201, "{body}");
    let rule = "self.n.all(a, self.n.all(b, a <= b)) && self.s.matches('^y+$')";
    assert_eq!(
        cause(&create("r36590", regex(36_590)).await),
        ("spec.regex".to_string(), format!("{CALL_LIMIT}{rule}"))
    );
    // Eleven rules of 995,931 spend the object's budget of 10,000,000; of 541,502 they fit.
    let (code, body) = create("m300", json!({"m": vec![1; 300]})).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        cause(&create("m407", json!({"m": vec![1; 407]})).await),
        (
            "spec.m".to_string(),
            "Invalid value: \"array\": validation failed due to running out of cost budget, no \
             further validation rules will be run"
                .to_string()
        )
    );
    call(
        client,
        "DELETE",
        &format!("{CRDS}/costs.{GROUP}"),
        &Value::Null,
    )
    .await;
    call(
        client,
        "DELETE",
        &format!("/api/v1/namespaces/{namespace}"),
        &Value::Null,
    )
    .await;
}

#[tokio::test]
async fn rules_stop_at_the_runtime_cost_limits_of_v1_36() {
    let server = TestServer::start().await;
    check(&server.client(), "celcost-ts").await;
}

/// The same requests on the cluster of `KUBEGEN_E2E_KUBECONFIG`. Fails, rather than passing,
/// when it is unset.
#[tokio::test]
#[ignore = "needs a real cluster: KUBEGEN_E2E_KUBECONFIG"]
async fn rules_stop_at_the_runtime_cost_limits_of_v1_36_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    check(&client, &format!("celcost-e2e{}", std::process::id())).await;
}
