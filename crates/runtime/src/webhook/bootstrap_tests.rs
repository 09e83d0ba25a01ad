use kubegen_testserver::TestServer;
use serde_json::json;

use super::*;
use crate::manifests;

/// A fresh CA (PEM), as one replica's bootstrap generates it.
fn fresh_ca() -> String {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bootstrap = SelfSigned {
        dns_names: vec!["localhost".to_owned()],
        ..SelfSigned::default()
    };
    bootstrap
        .files(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The CAs (PEM blocks, trimmed) of a base64 `caBundle`.
fn cas(bundle: &Value) -> Vec<String> {
    let pem = base64::engine::general_purpose::STANDARD
        .decode(
            bundle
                .as_str()
                .unwrap_or_else(|| panic!("no caBundle: {bundle}")),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let pem = String::from_utf8(pem).unwrap_or_else(|e| panic!("{e}"));
    pem.split_inclusive("-----END CERTIFICATE-----")
        .map(str::trim)
        .filter(|block| !block.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_bundle_keeps_the_last_four_distinct_cas_newest_last() {
    let generated: Vec<String> = (0..5).map(|_| fresh_ca()).collect();
    let mut object = json!({"webhooks": [{"clientConfig": {"url": "https://x"}}]});
    for ca in &generated {
        set_ca_bundle(&mut object, ca);
    }
    let bundle = &object["webhooks"][0]["clientConfig"]["caBundle"];
    let trimmed: Vec<String> = generated.iter().map(|ca| ca.trim().to_owned()).collect();
    assert_eq!(cas(bundle), trimmed[1..].to_vec(), "the oldest dropped out");
    // A replica restarting with its kept CA moves it last instead of adding it twice.
    set_ca_bundle(&mut object, &generated[2]);
    let bundle = &object["webhooks"][0]["clientConfig"]["caBundle"];
    let expected = [&trimmed[1], &trimmed[3], &trimmed[4], &trimmed[2]];
    assert_eq!(cas(bundle), expected.map(String::clone).to_vec());
}

#[test]
fn an_undecodable_bundle_is_replaced_and_every_spelling_is_filled() {
    let ca = fresh_ca();
    let mut object = json!({
        "webhooks": [
            {"clientConfig": {"service": {"name": "a"}, "caBundle": "not base64!"}},
            {"clientConfig": {"url": "https://b"}},
            {"name": "no client config"},
        ],
        "spec": {"conversion": {"webhookClientConfig": {"url": "https://c"}}},
    });
    set_ca_bundle(&mut object, &ca);
    for pointer in [
        "/webhooks/0/clientConfig/caBundle",
        "/webhooks/1/clientConfig/caBundle",
        "/spec/conversion/webhookClientConfig/caBundle",
    ] {
        let bundle = object.pointer(pointer).cloned().unwrap_or(Value::Null);
        assert_eq!(cas(&bundle), vec![ca.trim().to_owned()], "{pointer}");
    }
    assert_eq!(object["webhooks"][2], json!({"name": "no client config"}));
}

/// A CRD standing in for a built-in configuration kind the test server does not serve.
fn configuration_crd(kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.admissionregistration.k8s.io")},
        "spec": {
            "group": "admissionregistration.k8s.io",
            "scope": "Cluster",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    })
}

/// A CRD with a conversion webhook (served by `url`), as an operator's CRD with `/convert`.
fn converted_crd() -> Value {
    let version = |name: &str, storage: bool| {
        json!({
            "name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
        })
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"kind": "CronTab", "plural": "crontabs", "singular": "crontab", "listKind": "CronTabList"},
            "versions": [version("v1", true), version("v2", false)],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1", "v1beta1"],
                    "clientConfig": {"url": "https://127.0.0.1:9443/convert"},
                },
            },
        },
    })
}

fn configuration(kind: &str, name: &str) -> Value {
    let webhook = |hook: &str| {
        json!({
            "name": format!("{hook}.example.com"),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "clientConfig": {"service": {"name": "svc", "namespace": "ns", "path": "/x"}},
        })
    };
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name},
        "webhooks": [webhook("one"), webhook("two")],
    })
}

async fn get(client: &Client, path: &str) -> Value {
    let request =
        json_request(http::Method::GET, path, Bytes::new()).unwrap_or_else(|e| panic!("{e}"));
    client
        .request_json(request)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

#[tokio::test]
async fn ensure_adds_each_replicas_ca_to_every_target_keeping_the_last_four() {
    let server = TestServer::start().await;
    let client = server.client();
    // CRDs first (created and waited for until served), then the objects of their kinds.
    let objects = [
        configuration_crd(
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        ),
        configuration_crd(
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        ),
        converted_crd(),
        configuration("ValidatingWebhookConfiguration", "police"),
        configuration("MutatingWebhookConfiguration", "defaults"),
    ];
    let yaml = objects.map(|o| o.to_string()).join("\n---\n");
    manifests::create_from_yaml(&client, "fixtures", &yaml)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let bootstrap = SelfSigned {
        dns_names: vec!["svc.ns.svc".to_owned()],
        ip_addresses: Vec::new(),
        targets: vec![
            CaBundleTarget::Validating("police".to_owned()),
            CaBundleTarget::Mutating("defaults".to_owned()),
            CaBundleTarget::Crd("crontabs.stable.example.com".to_owned()),
        ],
    };
    // Five replicas over time, each with its own certificate directory (its emptyDir).
    let mut generated = Vec::new();
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ca = bootstrap
            .ensure(&client, dir.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        generated.push(ca.trim().to_owned());
    }
    let kept = generated[1..].to_vec();
    let admission = "/apis/admissionregistration.k8s.io/v1";
    for path in [
        format!("{admission}/validatingwebhookconfigurations/police"),
        format!("{admission}/mutatingwebhookconfigurations/defaults"),
    ] {
        let object = get(&client, &path).await;
        for webhook in 0..2 {
            let bundle = &object["webhooks"][webhook]["clientConfig"]["caBundle"];
            assert_eq!(cas(bundle), kept, "{path} webhook {webhook}");
        }
        // The rest of the configuration is untouched.
        assert_eq!(
            object["webhooks"][1]["clientConfig"]["service"]["path"],
            "/x"
        );
    }
    let crd = get(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
    )
    .await;
    let config = &crd["spec"]["conversion"]["webhook"]["clientConfig"];
    assert_eq!(cas(&config["caBundle"]), kept);
    assert_eq!(config["url"], "https://127.0.0.1:9443/convert");
}

#[tokio::test]
async fn a_missing_target_is_an_error_naming_it() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bootstrap = SelfSigned {
        dns_names: vec!["localhost".to_owned()],
        ip_addresses: Vec::new(),
        targets: vec![CaBundleTarget::Crd("nothing.example.com".to_owned())],
    };
    let error = bootstrap
        .ensure(&server.client(), dir.path())
        .await
        .err()
        .unwrap_or_else(|| panic!("injected into nothing"));
    match error {
        Error::CaBundleInjectionFailed { object, .. } => {
            assert_eq!(object, "customresourcedefinitions/nothing.example.com");
        }
        other => panic!("{other}"),
    }
}
