//! A Service's EndpointSlices as its Deployment's Pods come, become ready and go: the shape the
//! real endpointslice-controller writes (labels, owner, resolved ports, conditions), a placeholder
//! for a Service selecting nothing, and the same slice emptied when the Pods are gone.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kubegen_client::{Client, CreateOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use serde_json::{Value, json};

use crate::{Sim, eventually, scenarios};

scenarios! {
    service_endpoints => ready_pods_fill_their_services_endpoint_slices,
        ready_pods_fill_their_services_endpoint_slices_on_cluster;
}

fn slices(client: &Client, ns: &str) -> ResourceClient<DynamicObject> {
    let api = ApiResource {
        group: "discovery.k8s.io".into(),
        version: "v1".into(),
        api_version: "discovery.k8s.io/v1".into(),
        kind: "EndpointSlice".into(),
        plural: "endpointslices".into(),
    };
    ResourceClient::dynamic(client.clone(), &api, Some(ns))
}

/// The slices of Service `service`, as JSON.
async fn slices_of(client: &Client, ns: &str, service: &str) -> Vec<Value> {
    let selector = format!("kubernetes.io/service-name={service}");
    let list = slices(client, ns)
        .list(&ListOptions::default().labels(selector))
        .await
        .unwrap();
    list.items
        .into_iter()
        .map(|slice| serde_json::to_value(slice).unwrap())
        .collect()
}

/// `(address count, every endpoint ready)` of a Service's one slice, once it has one.
async fn wait_for_endpoints(
    client: &Client,
    ns: &str,
    service: &str,
    want: (usize, bool),
) -> Value {
    eventually(&format!("{service}'s slice to hold {want:?}"), || async {
        let slices = slices_of(client, ns, service).await;
        let [slice] = slices.as_slice() else {
            return None;
        };
        let endpoints = slice["endpoints"].as_array().cloned().unwrap_or_default();
        let ready = endpoints.iter().all(|e| e["conditions"]["ready"] == true);
        ((endpoints.len(), ready) == want).then(|| slice.clone())
    })
    .await
}

async fn service_endpoints(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "schedulerName": sim.scheduler,
                    "nodeSelector": {"nodesim.kubegen.io/pool": sim.pool()},
                    "containers": [{"name": "c", "image": "nginx",
                        "ports": [{"name": "http", "containerPort": 8080}]}]
                }
            }
        }
    }))
    .unwrap();
    ResourceClient::<Deployment>::namespaced(client.clone(), &ns)
        .create(&deployment, &CreateOptions::default())
        .await
        .unwrap();
    let services = ResourceClient::<Service>::namespaced(client.clone(), &ns);
    for service in [
        json!({"metadata": {"name": "web", "labels": {"team": "a"}}, "spec": {"selector": {"app": "web"}, "ports": [
            {"name": "h", "port": 80, "targetPort": "http"},
            {"name": "raw", "port": 81, "targetPort": 9090, "protocol": "UDP"}]}}),
        json!({"metadata": {"name": "empty"}, "spec": {"selector": {"app": "nothing"}, "ports": [{"port": 80}]}}),
        json!({"metadata": {"name": "manual"}, "spec": {"ports": [{"port": 80}]}}),
    ] {
        let service: Service = serde_json::from_value(service).unwrap();
        services
            .create(&service, &CreateOptions::default())
            .await
            .unwrap();
    }

    let slice = wait_for_endpoints(&client, &ns, "web", (2, true)).await;
    let web = services.get("web", &Default::default()).await.unwrap();
    let meta = &slice["metadata"];
    assert_eq!(meta["generateName"], "web-");
    assert_eq!(
        meta["labels"],
        json!({"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
               "kubernetes.io/service-name": "web", "team": "a"})
    );
    assert_eq!(
        meta["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "Service", "name": "web",
                "uid": web.metadata.uid, "controller": true, "blockOwnerDeletion": true}])
    );
    assert!(meta["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"].is_string());
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["ports"],
        json!([{"name": "h", "port": 8080, "protocol": "TCP"}, {"name": "raw", "port": 9090, "protocol": "UDP"}])
    );
    for endpoint in slice["endpoints"].as_array().unwrap() {
        assert_eq!(
            endpoint["conditions"],
            json!({"ready": true, "serving": true, "terminating": false})
        );
        assert!(
            endpoint["nodeName"]
                .as_str()
                .unwrap()
                .starts_with(&sim.nodes)
        );
        assert_eq!(endpoint["targetRef"]["kind"], "Pod");
        assert_eq!(endpoint["addresses"].as_array().unwrap().len(), 1);
    }

    let placeholder = wait_for_endpoints(&client, &ns, "empty", (0, true)).await;
    assert_eq!(
        (&placeholder["endpoints"], &placeholder["ports"]),
        (&Value::Null, &Value::Null)
    );
    assert!(slices_of(&client, &ns, "manual").await.is_empty());

    let name = slice["metadata"]["name"].clone();
    ResourceClient::<Deployment>::namespaced(client.clone(), &ns)
        .patch(
            "web",
            &Patch::Merge(json!({"spec": {"replicas": 0}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    let emptied = wait_for_endpoints(&client, &ns, "web", (0, true)).await;
    assert_eq!(
        emptied["metadata"]["name"], name,
        "the slice is reused, not replaced"
    );
    assert_eq!(
        (&emptied["endpoints"], &emptied["ports"]),
        (&Value::Null, &Value::Null)
    );
}
