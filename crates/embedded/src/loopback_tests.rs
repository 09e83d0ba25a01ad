//! Tests of the loopback rewrite of webhook configurations.

use super::*;

fn written(yaml: &'static str) -> Manifest {
    Manifest::compiled_in("webhook.yaml", yaml)
}

#[test]
fn every_webhook_calls_loopback_at_its_service_path() {
    let manifest = written(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n\
         metadata: {name: w}\nwebhooks:\n\
         - {name: a.example.com, clientConfig: {service: {name: s, namespace: n, path: /validate-a}}}\n\
         - {name: b.example.com, clientConfig: {service: {name: s, namespace: n, path: /validate-b}}}\n",
    );
    let configuration = configuration(&manifest, 9443).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        configuration["webhooks"][0]["clientConfig"],
        json!({"url": "https://127.0.0.1:9443/validate-a"})
    );
    assert_eq!(
        configuration["webhooks"][1]["clientConfig"],
        json!({"url": "https://127.0.0.1:9443/validate-b"})
    );
    assert_eq!(configuration["webhooks"][1]["name"], "b.example.com");
}

#[test]
fn a_webhook_without_a_service_path_is_an_error_naming_the_manifest() {
    let manifest = written(
        "kind: ValidatingWebhookConfiguration\nwebhooks:\n- {name: a, clientConfig: {url: 'https://x'}}\n",
    );
    let error = configuration(&manifest, 1)
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert_eq!(
        error,
        Err("webhook.yaml: a webhook without clientConfig.service.path".to_owned())
    );
}
