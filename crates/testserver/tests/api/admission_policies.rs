//! ValidatingAdmissionPolicy and MutatingAdmissionPolicy enforced by the test server as v1.36
//! enforces them. Every expected status code, reason and message below was read from a real
//! kube-apiserver v1.36.2 given the same policies and requests.

use serde_json::{Value, json};

use crate::common::{self, Harness};

const VAP: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const VAPB: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";
const MAP: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";
const MAPB: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings";
const CMS: &str = "/api/v1/namespaces/pol/configmaps";
const SECRETS: &str = "/api/v1/namespaces/pol/secrets";

async fn server() -> Harness {
    let mut options = kubegen_testserver::ServerOptions::default();
    options.controller_manager = false;
    let h = common::start_with(options).await;
    let ns = json!({"metadata": {"name": "pol", "labels": {"policies": "on"}}});
    assert_eq!(h.http.post("/api/v1/namespaces", ns).await.code, 201);
    let other = json!({"metadata": {"name": "plain"}});
    assert_eq!(h.http.post("/api/v1/namespaces", other).await.code, 201);
    h
}

fn status(reply: &common::Reply) -> (u16, &str, &str) {
    (
        reply.code,
        reply.body["reason"].as_str().unwrap_or(""),
        reply.body["message"].as_str().unwrap_or(""),
    )
}

fn rules(resources: &str, operations: Value) -> Value {
    json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
        "operations": operations, "resources": [resources]}]})
}

fn binding(name: &str, policy: &str, actions: Value, extra: Value) -> Value {
    let mut spec = json!({"policyName": policy, "validationActions": actions,
        "matchResources": {"namespaceSelector": {"matchLabels": {"policies": "on"}}}});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"metadata": {"name": name}, "spec": spec})
}

/// The policy of the v1.36 session: a variable, a message, a message expression, a rule that
/// fails to evaluate, and an audit annotation.
async fn install_demo(h: &Harness, actions: Value) {
    let policy = json!({"metadata": {"name": "pol-demo"}, "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": rules("configmaps", json!(["CREATE", "UPDATE"])),
        "variables": [{"name": "nm", "expression": "object.metadata.name"}],
        "validations": [
            {"expression": "variables.nm != 'bad'", "message": "name must not be bad"},
            {"expression": "!has(object.data) || !('x' in object.data)",
             "messageExpression": "'no x key in ' + object.metadata.name", "reason": "Invalid"},
            {"expression": "object.metadata.name != 'err' || object.data.missing == 'a'"}],
        "auditAnnotations": [{"key": "who",
            "valueExpression": "'made by ' + request.userInfo.username"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let binding = binding("pol-demo-b", "pol-demo", actions, json!({}));
    assert_eq!(h.http.post(VAPB, binding).await.code, 201);
}

async fn create_cm(h: &Harness, path: &str, name: &str, data: Value) -> common::Reply {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": data});
    h.http.post(path, cm).await
}

#[tokio::test]
async fn deny_answers_with_the_policy_binding_and_message() {
    let h = server().await;
    install_demo(&h, json!(["Deny"])).await;
    let reply = create_cm(&h, CMS, "bad", json!({"x": "1"})).await;
    let why = "ValidatingAdmissionPolicy 'pol-demo' with binding 'pol-demo-b' denied request: name must not be bad";
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            &*format!("configmaps \"bad\" is forbidden: {why}")
        )
    );
    assert_eq!(
        reply.body["details"],
        json!({"name": "bad", "kind": "configmaps", "causes": [{"message": why}]})
    );
    let reply = create_cm(&h, CMS, "x", json!({"x": "1"})).await;
    assert_eq!(
        status(&reply).2,
        "configmaps \"x\" is forbidden: ValidatingAdmissionPolicy 'pol-demo' with binding 'pol-demo-b' denied request: no x key in x"
    );
    // No `data` (v1.36 drops an empty one from a typed ConfigMap; the test server keeps it).
    let cm = json!({"metadata": {"name": "err"}});
    let reply = h.http.post(CMS, cm).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "configmaps \"err\" is forbidden: ValidatingAdmissionPolicy 'pol-demo' with binding 'pol-demo-b' denied request: expression 'object.metadata.name != 'err' || object.data.missing == 'a'' resulted in error: no such key: data"
        )
    );
    assert_eq!(create_cm(&h, CMS, "ok", json!({})).await.code, 201);
    // The binding selects namespaces labelled `policies: on` only.
    let elsewhere = "/api/v1/namespaces/plain/configmaps";
    assert_eq!(create_cm(&h, elsewhere, "bad", json!({})).await.code, 201);
}

#[tokio::test]
async fn warn_adds_a_warning_header_and_admits() {
    let h = server().await;
    install_demo(&h, json!(["Warn", "Audit"])).await;
    let reply = create_cm(&h, CMS, "bad", json!({})).await;
    assert_eq!(reply.code, 201);
    let warnings: Vec<&str> = reply
        .headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(
        warnings,
        [
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'pol-demo' with binding 'pol-demo-b': name must not be bad\""
        ]
    );
}

#[tokio::test]
async fn params_are_read_per_request_and_a_missing_one_denies() {
    let h = server().await;
    let policy = json!({"metadata": {"name": "pol-params"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": rules("secrets", json!(["CREATE"])),
        "matchConditions": [{"name": "skip-ok", "expression": "object.metadata.name != 'skipme'"}],
        "validations": [{"expression": "object.metadata.name.startsWith(params.data.prefix)",
            "messageExpression": "'name must start with ' + params.data.prefix",
            "reason": "Forbidden"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let param_ref = json!({"paramRef": {"name": "limits", "namespace": "pol",
        "parameterNotFoundAction": "Deny"}});
    let b = binding("pol-params-b", "pol-params", json!(["Deny"]), param_ref);
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let secret = |name: &str| json!({"metadata": {"name": name}});
    // No parameter yet: denied whatever the match conditions say (params come first).
    let reply = h.http.post(SECRETS, secret("skipme")).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "secrets \"skipme\" is forbidden: ValidatingAdmissionPolicy 'pol-params' with binding 'pol-params-b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
        )
    );
    let limits = json!({"metadata": {"name": "limits"}, "data": {"prefix": "ok-"}});
    assert_eq!(h.http.post(CMS, limits).await.code, 201);
    let reply = h.http.post(SECRETS, secret("s1")).await;
    assert_eq!(
        status(&reply),
        (
            403,
            "Forbidden",
            "secrets \"s1\" is forbidden: ValidatingAdmissionPolicy 'pol-params' with binding 'pol-params-b' denied request: name must start with ok-"
        )
    );
    assert_eq!(h.http.post(SECRETS, secret("ok-1")).await.code, 201);
    assert_eq!(h.http.post(SECRETS, secret("skipme")).await.code, 201);
}

#[tokio::test]
async fn failure_policy_ignore_and_allow_let_requests_through() {
    let h = server().await;
    let policy = json!({"metadata": {"name": "pol-ign"}, "spec": {
        "failurePolicy": "Ignore",
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": rules("secrets", json!(["CREATE"])),
        "validations": [{"expression": "object.data.nope == 'x'"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let param_ref = json!({"paramRef": {"name": "absent", "namespace": "pol",
        "parameterNotFoundAction": "Deny"}});
    let b = binding("pol-ign-b", "pol-ign", json!(["Deny"]), param_ref);
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let secret = json!({"metadata": {"name": "s"}});
    assert_eq!(h.http.post(SECRETS, secret).await.code, 201);
}

#[tokio::test]
async fn a_match_condition_that_fails_denies_under_fail() {
    let h = server().await;
    let policy = json!({"metadata": {"name": "pol-mc"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": rules("serviceaccounts", json!(["CREATE"])),
        "matchConditions": [{"name": "boom", "expression": "object.metadata.labels.nope == 'x'"}],
        "validations": [{"expression": "true"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = binding("pol-mc-b", "pol-mc", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let path = "/api/v1/namespaces/pol/serviceaccounts";
    // A binding without paramRef evaluates with `params` null.
    let labelled = json!({"metadata": {"name": "sa1", "labels": {"nope": "x"}}});
    assert_eq!(h.http.post(path, labelled).await.code, 201);
    let reply = h
        .http
        .post(path, json!({"metadata": {"name": "sa2"}}))
        .await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "serviceaccounts \"sa2\" is forbidden: ValidatingAdmissionPolicy 'pol-mc' with binding 'pol-mc-b' denied request: expression 'object.metadata.labels.nope == 'x'' resulted in error: no such key: labels"
        )
    );
}

#[tokio::test]
async fn malformed_policies_and_bindings_are_refused_with_v136_causes() {
    let h = server().await;
    let bad = json!({"metadata": {"name": "bad1"}, "spec": {"failurePolicy": "Maybe",
        "validations": [{"expression": ""}],
        "variables": [{"name": "1x", "expression": "true"}]}});
    let reply = h.http.post(VAP, bad).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"bad1\" is invalid: [spec.failurePolicy: Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\", spec.matchConstraints: Required value, spec.variables[0].name: Invalid value: \"1x\": must be a valid CEL identifier, spec.validations[0].expression: Required value: expression is not specified]"
        )
    );
    let bad = json!({"metadata": {"name": "bad1"}, "spec": {
        "validationActions": ["Deny", "Deny", "Nope"], "paramRef": {"name": "a", "selector": {}}}});
    let reply = h.http.post(VAPB, bad).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"bad1\" is invalid: [spec.policyName: Required value, spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, spec.paramRef.parameterNotFoundAction: Required value, spec.validationActions[1]: Duplicate value: \"Deny\", spec.validationActions[2]: Unsupported value: \"Nope\": supported values: \"Audit\", \"Deny\", \"Warn\"]"
        )
    );
    let bad = json!({"metadata": {"name": "bad1"}, "spec": {
        "mutations": [{"patchType": "Nope"}, {"patchType": "JSONPatch"}]}});
    let reply = h.http.post(MAP, bad).await;
    assert_eq!(
        status(&reply).2,
        "MutatingAdmissionPolicy.admissionregistration.k8s.io \"bad1\" is invalid: [spec.matchConstraints: Required value, spec.mutations[0].patchType: Unsupported value: \"Nope\": supported values: \"ApplyConfiguration\", \"JSONPatch\", spec.mutations[1].jsonPatch: Required value: must be specified when patchType is JSONPatch, spec.reinvocationPolicy: Required value]"
    );
}

#[tokio::test]
async fn stored_policies_carry_v136_defaults() {
    let h = server().await;
    install_demo(&h, json!(["Deny"])).await;
    let policy = h.http.get(&format!("{VAP}/pol-demo")).await.body;
    assert_eq!(policy["status"], json!({}));
    assert_eq!(
        policy["spec"]["matchConstraints"],
        json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
            "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"], "scope": "*"}]})
    );
    // `kubectl get` columns, as v1.36 prints them.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let reply = h.http.get_accept(VAP, table).await;
    let names: Vec<&Value> = reply.body["columnDefinitions"]
        .as_array()
        .map(|c| c.iter().map(|c| &c["name"]).collect())
        .unwrap_or_default();
    assert_eq!(names, ["Name", "Validations", "ParamKind", "Age"]);
    let cells = reply.body["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(cells[1..3], [json!(3), json!("<unset>")]);
    let reply = h.http.get_accept(VAPB, table).await;
    let cells = reply.body["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        cells[..3],
        [json!("pol-demo-b"), json!("pol-demo"), json!("<unset>")]
    );
    let binding = h.http.get(&format!("{VAPB}/pol-demo-b")).await.body;
    assert_eq!(
        binding["spec"]["matchResources"],
        json!({"matchPolicy": "Equivalent", "objectSelector": {},
            "namespaceSelector": {"matchLabels": {"policies": "on"}}})
    );
}

#[tokio::test]
async fn a_deleted_binding_stops_denying_at_the_next_request() {
    let h = server().await;
    install_demo(&h, json!(["Deny"])).await;
    assert_eq!(create_cm(&h, CMS, "bad", json!({})).await.code, 422);
    assert_eq!(h.http.delete(&format!("{VAPB}/pol-demo-b")).await.code, 200);
    assert_eq!(create_cm(&h, CMS, "bad", json!({})).await.code, 201);
}

#[tokio::test]
async fn mutating_policies_patch_and_apply_before_validation() {
    let h = server().await;
    let policy = json!({"metadata": {"name": "pol-mut"}, "spec": {
        "reinvocationPolicy": "Never",
        "matchConstraints": rules("configmaps", json!(["CREATE"])),
        "mutations": [
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{metadata: Object.metadata{labels: {\"mutated\": \"yes\"}}}"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: \"add\", path: \"/data\", value: {\"added\": object.metadata.name}}]"}}]}});
    assert_eq!(h.http.post(MAP, policy).await.code, 201);
    let b = json!({"metadata": {"name": "pol-mut-b"}, "spec": {"policyName": "pol-mut",
        "matchResources": {"namespaceSelector": {"matchLabels": {"policies": "on"}}}}});
    assert_eq!(h.http.post(MAPB, b).await.code, 201);
    // A validating policy sees the mutated object.
    let check = json!({"metadata": {"name": "needs-label"}, "spec": {
        "matchConstraints": rules("configmaps", json!(["CREATE"])),
        "validations": [{"expression": "object.metadata.labels.mutated == 'yes'"}]}});
    assert_eq!(h.http.post(VAP, check).await.code, 201);
    let b = binding("needs-label-b", "needs-label", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let reply = create_cm(&h, CMS, "m2", Value::Null).await;
    assert_eq!(reply.code, 201, "{:?}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"], json!({"mutated": "yes"}));
    assert_eq!(reply.body["data"], json!({"added": "m2"}));
}

#[tokio::test]
async fn a_mutation_that_fails_is_refused_with_403() {
    let h = server().await;
    let policy = json!({"metadata": {"name": "pol-mut2"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "reinvocationPolicy": "Never",
        "matchConstraints": rules("secrets", json!(["CREATE"])),
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: \"add\", path: \"/metadata/labels\", value: {\"p\": params.data.v}}]"}}]}});
    assert_eq!(h.http.post(MAP, policy).await.code, 201);
    let b = json!({"metadata": {"name": "pol-mut2-b"}, "spec": {"policyName": "pol-mut2",
        "paramRef": {"name": "mparams", "namespace": "pol", "parameterNotFoundAction": "Deny"},
        "matchResources": {"namespaceSelector": {"matchLabels": {"policies": "on"}}}}});
    assert_eq!(h.http.post(MAPB, b).await.code, 201);
    let secret = json!({"metadata": {"name": "ms"}});
    let reply = h.http.post(SECRETS, secret.clone()).await;
    assert_eq!(
        status(&reply),
        (
            403,
            "Forbidden",
            "policy 'pol-mut2' with binding 'pol-mut2-b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
        )
    );
    let params = json!({"metadata": {"name": "mparams"}, "data": {}});
    assert_eq!(h.http.post(CMS, params).await.code, 201);
    let reply = h.http.post(SECRETS, secret).await;
    assert_eq!(
        status(&reply),
        (
            403,
            "Invalid",
            "policy 'pol-mut2' with binding 'pol-mut2-b' denied request: expression '[JSONPatch{op: \"add\", path: \"/metadata/labels\", value: {\"p\": params.data.v}}]' resulted in error: no such key: v"
        )
    );
}

/// A CRD of the Gateway API group with the channel and bundle-version annotations the
/// `safe-upgrades` policy reads.
fn gateway_crd(plural: &str, channel: &str, bundle: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.gateway.networking.k8s.io"),
            "annotations": {
                "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/4530",
                "gateway.networking.k8s.io/bundle-version": bundle,
                "gateway.networking.k8s.io/channel": channel}},
        "spec": {"group": "gateway.networking.k8s.io",
            "names": {"kind": "PolTest", "plural": plural, "singular": "poltest", "listKind": "PolTestList"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

/// A policy of the shape Gateway API installs with its CRDs (`safe-upgrades`): no
/// experimental-channel CRD over a standard one, no bundle older than the regex allows. The
/// expressions are written for this test; v1.36 gave the verdicts asserted here for the real
/// policy on the same CRDs (v1.4.1 passes: the real regex only refuses v1.0–v1.3 and v0).
#[tokio::test]
async fn a_gateway_style_upgrade_policy_guards_crds() {
    let h = server().await;
    let upgrade_message = "experimental CRDs may not replace standard channel CRDs";
    let version_message = "CRDs of bundles before v1.4 may not be installed";
    let policy = json!({"metadata": {"name": "upgrades"}, "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apiextensions.k8s.io"],
            "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["*"]}]},
        "validations": [
            {"expression": "object.spec.group != 'gateway.networking.k8s.io' || oldObject == null || (has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == 'gateway.networking.k8s.io/channel') && object.metadata.annotations['gateway.networking.k8s.io/channel'] == 'standard') || (oldObject != null && has(oldObject.metadata.annotations) && oldObject.metadata.annotations.exists(k, k == 'gateway.networking.k8s.io/channel') && oldObject.metadata.annotations['gateway.networking.k8s.io/channel'] == 'experimental')",
             "message": upgrade_message, "reason": "Invalid"},
            {"expression": "object.spec.group != 'gateway.networking.k8s.io' || (has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == 'gateway.networking.k8s.io/bundle-version') && !matches(object.metadata.annotations['gateway.networking.k8s.io/bundle-version'], 'v1.[0-3].\\\\d+') && !matches(object.metadata.annotations['gateway.networking.k8s.io/bundle-version'], 'v0'))",
             "message": version_message, "reason": "Invalid"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = json!({"metadata": {"name": "upgrades"}, "spec": {"policyName": "upgrades",
        "validationActions": ["Deny"],
        "matchResources": {"resourceRules": [{"apiGroups": ["apiextensions.k8s.io"],
            "apiVersions": ["v1"], "resources": ["customresourcedefinitions"],
            "operations": ["CREATE", "UPDATE"]}]}}});
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let denied = |plural: &str, message: &str| {
        format!(
            "customresourcedefinitions.apiextensions.k8s.io \"{plural}.gateway.networking.k8s.io\" is forbidden: ValidatingAdmissionPolicy 'upgrades' with binding 'upgrades' denied request: {message}"
        )
    };
    let reply = h
        .http
        .post(crds, gateway_crd("poltests", "standard", "v1.5.0"))
        .await;
    assert_eq!(reply.code, 201, "{:?}", reply.body);
    assert_eq!(
        h.http
            .post(crds, gateway_crd("pololds", "standard", "v1.4.1"))
            .await
            .code,
        201
    );
    let reply = h
        .http
        .post(crds, gateway_crd("pololds2", "standard", "v1.3.0"))
        .await;
    assert_eq!(
        status(&reply),
        (422, "Invalid", &*denied("pololds2", version_message))
    );
    let reply = h
        .http
        .post(crds, gateway_crd("polv0s", "standard", "v0.0.0-dev"))
        .await;
    assert_eq!(status(&reply).2, denied("polv0s", version_message));
    // A new experimental CRD is fine; experimental over standard is not.
    let reply = h
        .http
        .post(crds, gateway_crd("polexps", "experimental", "v1.5.0"))
        .await;
    assert_eq!(reply.code, 201);
    let path = format!("{crds}/poltests.gateway.networking.k8s.io");
    let mut stored = h.http.get(&path).await.body;
    stored["metadata"]["annotations"]["gateway.networking.k8s.io/channel"] = json!("experimental");
    let reply = h.http.put(&path, stored).await;
    assert_eq!(
        status(&reply),
        (422, "Invalid", &*denied("poltests", upgrade_message))
    );
}

/// Parameters by label selector in the request's namespace (no `paramRef.namespace`), each
/// evaluated once; exclusions by name; DELETE sees `oldObject`; a variable that fails.
#[tokio::test]
async fn selected_params_each_warn_and_exclusions_and_variables_behave_as_v136() {
    let h = server().await;
    for (name, tag) in [("sp1", "b25l"), ("sp2", "dHdv")] {
        let secret = json!({"metadata": {"name": name, "labels": {"polparam": "yes"}},
            "data": {"tag": tag}});
        assert_eq!(h.http.post(SECRETS, secret).await.code, 201);
    }
    let mut constraints = rules("configmaps", json!(["CREATE", "DELETE"]));
    constraints["excludeResourceRules"] = json!([{"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["*"], "resources": ["configmaps"], "resourceNames": ["excluded"]}]);
    let policy = json!({"metadata": {"name": "pol-sec"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "Secret"},
        "matchConstraints": constraints,
        "variables": [{"name": "broken", "expression": "object.data.nope"}],
        "validations": [
            {"expression": "request.operation != 'DELETE' || oldObject.metadata.name != 'keep'",
             "messageExpression": "'cannot delete ' + oldObject.metadata.name + ' via ' + params.data.tag"},
            {"expression": "request.operation != 'CREATE' || object.metadata.name != 'usevar' || variables.broken == 'x'"},
            {"expression": "request.operation != 'CREATE' || object.metadata.name != 'warnerr' || object.data.q == 'x'"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let param_ref = json!({"paramRef": {"selector": {"matchLabels": {"polparam": "yes"}},
        "parameterNotFoundAction": "Allow"}});
    let b = binding("pol-sec-b", "pol-sec", json!(["Warn"]), param_ref);
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let warnings = |reply: &common::Reply| -> Vec<String> {
        let prefix = "299 - \"Validation failed for ValidatingAdmissionPolicy 'pol-sec' with binding 'pol-sec-b': ";
        reply
            .headers
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(|w| {
                w.trim_start_matches(prefix)
                    .trim_end_matches('"')
                    .to_string()
            })
            .collect()
    };
    let data = json!({"a": "b"});
    let reply = create_cm(&h, CMS, "warnerr", data.clone()).await;
    assert_eq!(reply.code, 201);
    let error = "expression 'request.operation != 'CREATE' || object.metadata.name != 'warnerr' || object.data.q == 'x'' resulted in error: no such key: q";
    // Once, though both parameters fail: identical warnings are sent once.
    assert_eq!(warnings(&reply), [error]);
    let reply = create_cm(&h, CMS, "usevar", data.clone()).await;
    let error = "expression 'request.operation != 'CREATE' || object.metadata.name != 'usevar' || variables.broken == 'x'' resulted in error: composited variable \\\"broken\\\" fails to evaluate: no such key: nope";
    assert_eq!(warnings(&reply), [error]);
    let reply = create_cm(&h, CMS, "excluded", data.clone()).await;
    assert_eq!(warnings(&reply), Vec::<String>::new());
    assert_eq!(create_cm(&h, CMS, "keep", data).await.code, 201);
    let reply = h.http.delete(&format!("{CMS}/keep")).await;
    assert_eq!(reply.code, 200);
    assert_eq!(
        warnings(&reply),
        ["cannot delete keep via b25l", "cannot delete keep via dHdv"]
    );
}

/// `reinvocationPolicy: IfNeeded`: a policy runs again when a later mutation changed the
/// object, so it sees the label the other policy adds (v1.36: `labels-seen: "1"`, whichever
/// order it ran the two in).
#[tokio::test]
async fn if_needed_policies_run_again_after_later_mutations() {
    let h = server().await;
    let count = json!({"metadata": {"name": "pol-a-count"}, "spec": {
        "reinvocationPolicy": "IfNeeded",
        "matchConstraints": rules("configmaps", json!(["CREATE"])),
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
            "Object{metadata: Object.metadata{annotations: {\"labels-seen\": string(has(object.metadata.labels) ? size(object.metadata.labels) : 0)}}}"}}]}});
    let label = json!({"metadata": {"name": "pol-b-label"}, "spec": {
        "reinvocationPolicy": "Never",
        "matchConstraints": rules("configmaps", json!(["CREATE"])),
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: \"add\", path: \"/metadata/labels\", value: {\"added\": \"yes\"}}]"}}]}});
    for policy in [count, label] {
        let name = policy["metadata"]["name"].clone();
        assert_eq!(h.http.post(MAP, policy).await.code, 201);
        let b = json!({"metadata": {"name": name}, "spec": {"policyName": name,
            "matchResources": {"namespaceSelector": {"matchLabels": {"policies": "on"}}}}});
        assert_eq!(h.http.post(MAPB, b).await.code, 201);
    }
    let reply = create_cm(&h, CMS, "r1", Value::Null).await;
    assert_eq!(reply.code, 201, "{:?}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"], json!({"added": "yes"}));
    assert_eq!(
        reply.body["metadata"]["annotations"],
        json!({"labels-seen": "1"})
    );
}

/// The object selector (new or old object's labels), and `namespaceObject` and `request` in
/// expressions.
#[tokio::test]
async fn object_selector_and_namespace_object_are_honoured() {
    let h = server().await;
    let mut constraints = rules("configmaps", json!(["CREATE", "UPDATE"]));
    constraints["objectSelector"] = json!({"matchLabels": {"checked": "yes"}});
    let policy = json!({"metadata": {"name": "pol-ns"}, "spec": {
        "matchConstraints": constraints,
        "validations": [{"expression": "namespaceObject.metadata.labels.policies != 'on'",
            "messageExpression": "request.operation + ' in ' + namespaceObject.metadata.name"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = binding("pol-ns-b", "pol-ns", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    assert_eq!(
        create_cm(&h, CMS, "unlabelled", Value::Null).await.code,
        201
    );
    let labelled = json!({"metadata": {"name": "labelled", "labels": {"checked": "yes"}}});
    let reply = h.http.post(CMS, labelled).await;
    assert_eq!(
        status(&reply).2,
        "configmaps \"labelled\" is forbidden: ValidatingAdmissionPolicy 'pol-ns' with binding 'pol-ns-b' denied request: CREATE in pol"
    );
    // Labelling a stored object on update: the new object's labels select it.
    let path = format!("{CMS}/unlabelled");
    let mut stored = h.http.get(&path).await.body;
    stored["metadata"]["labels"] = json!({"checked": "yes"});
    let reply = h.http.put(&path, stored).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "configmaps \"unlabelled\" is forbidden: ValidatingAdmissionPolicy 'pol-ns' with binding 'pol-ns-b' denied request: UPDATE in pol"
        )
    );
}

/// `authorizer` asks the server's RBAC as the requesting user (v1.36 gave exactly this denial
/// to a user allowed to create ConfigMaps but not to list Secrets, and admitted the admin).
#[tokio::test]
async fn authorizer_checks_ask_rbac_as_the_requesting_user() {
    let mut options = kubegen_testserver::ServerOptions::default();
    options.controller_manager = false;
    options.bearer_token = Some("admin-token".into());
    options.tokens = vec![(
        "nobody-token".into(),
        kubegen_testserver::UserInfo::new("nobody", "nobody-uid", &[]),
    )];
    options.rbac = true;
    let mut h = common::start_with(options).await;
    h.http.token = Some("admin-token".into());
    let ns = json!({"metadata": {"name": "pol", "labels": {"policies": "on"}}});
    assert_eq!(h.http.post("/api/v1/namespaces", ns).await.code, 201);
    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/pol";
    let role = json!({"metadata": {"name": "cm-writer"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]});
    assert_eq!(h.http.post(&format!("{rbac}/roles"), role).await.code, 201);
    let binding_obj = json!({"metadata": {"name": "nobody-cm"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "nobody"}]});
    assert_eq!(
        h.http
            .post(&format!("{rbac}/rolebindings"), binding_obj)
            .await
            .code,
        201
    );
    let policy = json!({"metadata": {"name": "pol-authz"}, "spec": {
        "matchConstraints": rules("configmaps", json!(["CREATE"])),
        "validations": [
            {"expression": "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()",
             "messageExpression": "request.userInfo.username + ' may not list secrets'"},
            {"expression": "authorizer.requestResource.check('create').allowed() && authorizer.path('/healthz').check('get').allowed()",
             "message": "requestResource"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = binding("pol-authz-b", "pol-authz", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let mut nobody = common::Http::new(&h.server.url());
    nobody.token = Some("nobody-token".into());
    let reply = create_cm(&h, CMS, "c2", Value::Null).await;
    assert_eq!(reply.code, 201, "{:?}", reply.body);
    let cm = json!({"metadata": {"name": "c1"}});
    let reply = nobody.post(CMS, cm).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "configmaps \"c1\" is forbidden: ValidatingAdmissionPolicy 'pol-authz' with binding 'pol-authz-b' denied request: nobody may not list secrets"
        )
    );
}

/// `authorizer.serviceAccount(namespace, name)` asks RBAC as that ServiceAccount, checks both
/// names, and lets RBAC ignore field and label selectors, even unparsable ones (v1.36.2 gave
/// these answers to the same policy: allowed for the bound ServiceAccount, denied for one
/// elsewhere, `Invalid service account name`/`namespace` errors).
#[tokio::test]
async fn authorizer_service_account_checks_ask_as_that_service_account() {
    let mut options = kubegen_testserver::ServerOptions::default();
    options.controller_manager = false;
    options.bearer_token = Some("admin-token".into());
    options.rbac = true;
    let mut h = common::start_with(options).await;
    h.http.token = Some("admin-token".into());
    let ns = json!({"metadata": {"name": "pol", "labels": {"policies": "on"}}});
    assert_eq!(h.http.post("/api/v1/namespaces", ns).await.code, 201);
    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/pol";
    let role = json!({"metadata": {"name": "secret-lister"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]});
    assert_eq!(h.http.post(&format!("{rbac}/roles"), role).await.code, 201);
    let grant = json!({"metadata": {"name": "builder-lists"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-lister"},
        "subjects": [{"kind": "ServiceAccount", "name": "builder", "namespace": "pol"}]});
    assert_eq!(
        h.http
            .post(&format!("{rbac}/rolebindings"), grant)
            .await
            .code,
        201
    );
    let rule = "authorizer.serviceAccount(object.data.ns, object.data.sa).group('').resource('secrets')\
                .namespace('pol').fieldSelector(object.data.fs).labelSelector(object.data.ls)\
                .check('list').allowed()";
    let policy = json!({"metadata": {"name": "pol-sa"}, "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": rules("configmaps", json!(["CREATE"])),
        "validations": [{"expression": rule,
            "messageExpression": "object.data.sa + ' may not list secrets'"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = binding("pol-sa-b", "pol-sa", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let data =
        |ns: &str, sa: &str, fs: &str, ls: &str| json!({"ns": ns, "sa": sa, "fs": fs, "ls": ls});
    let denied = |why: &str| {
        format!(
            "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'pol-sa' with binding 'pol-sa-b' denied request: {why}"
        )
    };
    let allowed = create_cm(&h, CMS, "a", data("pol", "builder", "a==b==c,,", "x in (")).await;
    assert_eq!(allowed.code, 201, "{:?}", allowed.body);
    let reply = create_cm(&h, CMS, "c", data("pol", "other", "", "")).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            denied("other may not list secrets").as_str()
        )
    );
    let reply = create_cm(&h, CMS, "c", data("elsewhere", "builder", "", "")).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            denied("builder may not list secrets").as_str()
        )
    );
    for (ns, sa, why) in [
        ("pol", "Bad_Name", "name"),
        ("Bad_NS", "builder", "namespace"),
    ] {
        let reply = create_cm(&h, CMS, "c", data(ns, sa, "", "")).await;
        let error = format!("expression '{rule}' resulted in error: Invalid service account {why}");
        assert_eq!(status(&reply), (422, "Invalid", denied(&error).as_str()));
    }
}

/// A delete of a collection runs the validating policies once per item, with the item as
/// `oldObject` and no `request.name` (so this `messageExpression` fails and the default message
/// stands), a denial names "Unknown", and the first one ends the request with the items before
/// it deleted. v1.36.2 answered exactly this and kept `keep` and `z`.
#[tokio::test]
async fn a_collection_delete_is_validated_item_by_item() {
    let h = server().await;
    let policy = json!({"metadata": {"name": "pol-dc"}, "spec": {
        "matchConstraints": rules("configmaps", json!(["DELETE"])),
        "validations": [{"expression": "oldObject.metadata.name != 'keep'",
            "messageExpression": "'keep ' + request.name"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = binding("pol-dc-b", "pol-dc", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    for name in ["a", "keep", "z"] {
        assert_eq!(create_cm(&h, CMS, name, Value::Null).await.code, 201);
    }
    let reply = h.http.delete(CMS).await;
    let why = "ValidatingAdmissionPolicy 'pol-dc' with binding 'pol-dc-b' denied request: \
               failed expression: oldObject.metadata.name != 'keep'";
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            format!("configmaps \"Unknown\" is forbidden: {why}").as_str()
        )
    );
    let left = h.http.get(CMS).await.body;
    let names: Vec<&str> = left["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["keep", "z"]);
    // A single delete names the object, and `request.name` is there.
    let reply = h.http.delete(&format!("{CMS}/keep")).await;
    assert_eq!(reply.code, 422);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap_or_default()
            .ends_with("denied request: keep keep")
    );
}

/// `matchPolicy`: a rule naming v1 of a custom resource written through v2 matches under
/// `Equivalent`, with the object converted to v1 (v1.36: `too big in pol.example.com/v1`), and
/// not under `Exact`.
#[tokio::test]
async fn equivalent_policies_see_a_custom_resource_in_the_version_they_match() {
    let h = server().await;
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "polwidgets.pol.example.com"},
        "spec": {"group": "pol.example.com", "scope": "Namespaced",
            "names": {"kind": "PolWidget", "plural": "polwidgets", "singular": "polwidget", "listKind": "PolWidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema},
                         {"name": "v2", "served": true, "storage": false, "schema": schema}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(h.http.post(crds, crd).await.code, 201);
    let policy = json!({"metadata": {"name": "pol-mv"}, "spec": {
        "matchConstraints": {"matchPolicy": "Equivalent", "resourceRules": [{
            "apiGroups": ["pol.example.com"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["polwidgets"]}]},
        "validations": [{"expression": "object.spec.size < 10",
            "messageExpression": "'too big in ' + object.apiVersion"}]}});
    assert_eq!(h.http.post(VAP, policy).await.code, 201);
    let b = binding("pol-mv-b", "pol-mv", json!(["Deny"]), json!({}));
    assert_eq!(h.http.post(VAPB, b).await.code, 201);
    let path = "/apis/pol.example.com/v2/namespaces/pol/polwidgets";
    let widget = |name: &str| {
        json!({"apiVersion": "pol.example.com/v2", "kind": "PolWidget",
            "metadata": {"name": name}, "spec": {"size": 20}})
    };
    let reply = h.http.post(path, widget("w1")).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "polwidgets.pol.example.com \"w1\" is forbidden: ValidatingAdmissionPolicy 'pol-mv' with binding 'pol-mv-b' denied request: too big in pol.example.com/v1"
        )
    );
    let mut stored = h.http.get(&format!("{VAP}/pol-mv")).await.body;
    stored["spec"]["matchConstraints"]["matchPolicy"] = json!("Exact");
    assert_eq!(h.http.put(&format!("{VAP}/pol-mv"), stored).await.code, 200);
    assert_eq!(h.http.post(path, widget("w2")).await.code, 201);
}
