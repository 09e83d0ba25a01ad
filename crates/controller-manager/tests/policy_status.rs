//! `validatingadmissionpolicy-status-controller` on the in-process test server and
//! (`_on_cluster`) on a real one: the warnings are the ones v1.36.2's controller-manager wrote for
//! the same policies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, Patch, PatchOptions, ResourceClient,
};
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn policies(client: &Client) -> ResourceClient<DynamicObject> {
    let resource = ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingAdmissionPolicy".into(),
        plural: "validatingadmissionpolicies".into(),
    };
    ResourceClient::dynamic(client.clone(), &resource, None)
}

/// A policy on pods and deployments (and rules the checker skips), with a param kind.
fn mixed(name: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["", "apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["pods", "deployments", "configmaps/status", "*"]
            }]},
            "variables": [{"name": "nm", "expression": "object.metadata.name"}],
            "validations": [
                {"expression": "variables.nm.size() < 10 && params.data.x == 'y'"},
                {"expression": "object.spec.replicas > 0", "messageExpression": "'bad ' + params.dataa"}
            ]
        }
    })
}

/// A policy on deployments alone, first without a type error.
fn deployments(name: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["deployments"]
            }]},
            "validations": [{"expression": "object.spec.replicas > 0"}]
        }
    })
}

/// The policy's status once the controller observed its current generation.
async fn observed_status(api: &ResourceClient<DynamicObject>, name: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let policy = api.get(name, &GetOptions::default()).await.unwrap();
        let status = &policy.data["status"];
        if status["observedGeneration"].as_i64() == policy.metadata.generation {
            let managers: Vec<(String, String, String)> = policy
                .metadata
                .managed_fields
                .iter()
                .flatten()
                .filter(|m| m.subresource.as_deref() == Some("status"))
                .map(|m| {
                    (
                        m.manager.clone().unwrap_or_default(),
                        m.operation.clone().unwrap_or_default(),
                        m.subresource.clone().unwrap_or_default(),
                    )
                })
                .collect();
            assert_eq!(
                managers,
                [(
                    "validatingadmissionpolicy-status".to_owned(),
                    "Apply".to_owned(),
                    "status".to_owned()
                )],
                "{} {:?}",
                policy.data["status"],
                policy.metadata.managed_fields
            );
            return status.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name}: status never observed generation {:?}: {policy:?}",
            policy.metadata.generation
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn scenario(client: &Client, prefix: &str) {
    let api = policies(client);
    let (mixed_name, deployments_name) = (format!("{prefix}-mixed"), format!("{prefix}-deploy"));
    for policy in [mixed(&mixed_name), deployments(&deployments_name)] {
        let object: DynamicObject = serde_json::from_value(policy).unwrap();
        api.create(&object, &CreateOptions::default())
            .await
            .unwrap();
    }

    let replicas = "ERROR: <input>:1:12: undefined field 'replicas'\n | object.spec.replicas > 0\n | ...........^";
    let dataa = "ERROR: <input>:1:16: undefined field 'dataa'\n | 'bad ' + params.dataa\n | ...............^";
    assert_eq!(
        observed_status(&api, &mixed_name).await,
        json!({"observedGeneration": 1, "typeChecking": {"expressionWarnings": [
            {"fieldRef": "spec.validations[1].expression",
             "warning": format!("/v1, Kind=Pod: {replicas}\n")},
            {"fieldRef": "spec.validations[1].messageExpression",
             "warning": format!("/v1, Kind=Pod: {dataa}\n\napps/v1, Kind=Deployment: {dataa}\n")}
        ]}})
    );
    assert_eq!(
        observed_status(&api, &deployments_name).await,
        json!({"observedGeneration": 1, "typeChecking": {}})
    );

    let misspelt = json!({"spec": {"validations": [{"expression": "object.spec.replicaz > 0"}]}});
    api.patch(
        &deployments_name,
        &Patch::Merge(misspelt),
        &PatchOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        observed_status(&api, &deployments_name).await,
        json!({"observedGeneration": 2, "typeChecking": {"expressionWarnings": [
            {"fieldRef": "spec.validations[0].expression",
             "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 0\n | ...........^\n"}
        ]}})
    );

    for name in [&mixed_name, &deployments_name] {
        api.delete(name, &DeleteOptions::default()).await.unwrap();
    }
}

#[tokio::test]
async fn policies_get_the_type_checking_warnings_of_v1_36() {
    let server = TestServer::start().await;
    scenario(&server.client(), "tc").await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn policies_get_the_type_checking_warnings_of_v1_36_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    scenario(&client, &format!("kcm-e2e-tc-{}", std::process::id())).await;
}
