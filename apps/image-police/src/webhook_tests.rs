//! The validator judged directly: WhiteLists seeded into a fake API, listed and watched by a real
//! informer (as the manager's is), then one admission per case, with the exact answer.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::UserInfo;
use kubegen_cache::{ClientListWatch, InformerOptions, wait_for_cache_sync};
use kubegen_client::{ListOptions, ResourceClient};
use kubegen_clientset::fake::Clientset as FakeClientset;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

const NS: &str = "team";
const OWN_NAMESPACE: &str = "image-police";
/// The message's tail for `redis:7` in container `main` of a namespace allowing nginx only.
const REDIS_NOT_LISTED: &str =
    "image \"redis:7\" of container \"main\" (ImageNotListed: image is not on the WhiteList)";

fn whitelist(namespace: &str, name: &str, images: Value) -> Value {
    json!({
        "apiVersion": "police.example.com/v1beta1", "kind": "WhiteList",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"images": images},
    })
}

/// A WhiteList allowing `nginx:1.27` only: the one of docs/webhook-reference.md.
fn nginx_only(namespace: &str) -> Value {
    whitelist(
        namespace,
        "allowed-images",
        json!([{"name": "nginx", "tags": ["1.27"]}]),
    )
}

/// The webhook over an informer that listed `objects` from a fake API and synced.
async fn synced_hook(objects: Vec<Value>, allow_protected: bool) -> ImagePolicyWebhook {
    let clientset = FakeClientset::new(objects).unwrap_or_else(|e| panic!("seed: {e}"));
    let hook = hook_over(&clientset, allow_protected);
    hook.informer.start();
    wait_for_cache_sync(Duration::from_secs(10), &[&hook.informer])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    hook
}

/// The webhook over an informer of `clientset`'s WhiteLists that is not started.
fn hook_over(clientset: &FakeClientset, allow_protected: bool) -> ImagePolicyWebhook {
    let client = ResourceClient::<WhiteList>::all_namespaces(clientset.fake().client());
    let list_watch = ClientListWatch::new(client, ListOptions::default());
    let informer = SharedIndexInformer::new(list_watch, InformerOptions::default());
    ImagePolicyWebhook {
        whitelists: WhiteListLister::new(informer.lister()),
        informer,
        protected: ProtectedNamespaces::new(OWN_NAMESPACE, allow_protected),
    }
}

/// A pod spec with `init` init containers and `containers`, each `(name, image)`.
fn pod_spec(init: &[(&str, &str)], containers: &[(&str, &str)]) -> Value {
    let list = |items: &[(&str, &str)]| -> Vec<Value> {
        items
            .iter()
            .map(|(name, image)| json!({"name": name, "image": image}))
            .collect()
    };
    json!({"initContainers": list(init), "containers": list(containers)})
}

/// An object of `kind` in `namespace` whose pods run `pod` (the smallest valid shape of each).
fn object<K: DeserializeOwned>(kind: &str, namespace: &str, pod: Value) -> K {
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": pod.clone()});
    let selector = json!({"matchLabels": {"app": "x"}});
    let (api_version, spec) = match kind {
        "Pod" => ("v1", pod),
        "Job" => ("batch/v1", json!({"template": template})),
        "CronJob" => (
            "batch/v1",
            json!({"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}}),
        ),
        "StatefulSet" => (
            "apps/v1",
            json!({"selector": selector, "serviceName": "x", "template": template}),
        ),
        _ => (
            "apps/v1",
            json!({"selector": selector, "template": template}),
        ),
    };
    let value = json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": "x", "namespace": namespace},
        "spec": spec,
    });
    serde_json::from_value(value).unwrap_or_else(|e| panic!("{kind}: {e}"))
}

/// The webhook's answer to `operation` of `object` in `namespace`.
async fn admit<K>(
    hook: &ImagePolicyWebhook,
    operation: Operation,
    namespace: &str,
    object: &K,
    dry_run: bool,
) -> Result<Warnings, Denial>
where
    K: Admissible + PodTemplate,
{
    let user = UserInfo::default();
    let request = Admission {
        operation,
        object,
        old_object: None,
        dry_run,
        namespace: Some(namespace),
        name: "x",
        user: &user,
    };
    hook.validate(&request).await
}

/// The 403 the API server relays, reason `ForbiddenImage`.
fn forbidden(message: String) -> Denial {
    Denial {
        message,
        code: 403,
        reason: "ForbiddenImage".to_owned(),
        unavailable: false,
    }
}

/// Creates one `kind` running `nginx:1.27` (allowed) and one running `redis:7` (denied).
async fn allowed_and_denied<K: Admissible + PodTemplate>(hook: &ImagePolicyWebhook, kind: &str) {
    let allowed: K = object(kind, NS, pod_spec(&[], &[("main", "nginx:1.27")]));
    let denied: K = object(kind, NS, pod_spec(&[], &[("main", "redis:7")]));
    assert_eq!(
        admit(hook, Operation::Create, NS, &allowed, false).await,
        Ok(Vec::new()),
        "{kind}"
    );
    assert_eq!(
        admit(hook, Operation::Create, NS, &denied, false).await,
        Err(forbidden(format!(
            "image-police: {kind} runs images not allowed in namespace \"team\" by WhiteLists [\"allowed-images\"]: {REDIS_NOT_LISTED}"
        ))),
        "{kind}"
    );
    assert_eq!(
        admit(hook, Operation::Update, NS, &denied, false).await,
        admit(hook, Operation::Create, NS, &denied, false).await,
        "{kind}: an UPDATE is judged as a CREATE"
    );
}

#[tokio::test(start_paused = true)]
async fn every_kind_that_creates_pods_is_allowed_or_denied_by_its_images() {
    let hook = synced_hook(vec![nginx_only(NS)], false).await;
    allowed_and_denied::<Deployment>(&hook, "Deployment").await;
    allowed_and_denied::<ReplicaSet>(&hook, "ReplicaSet").await;
    allowed_and_denied::<StatefulSet>(&hook, "StatefulSet").await;
    allowed_and_denied::<DaemonSet>(&hook, "DaemonSet").await;
    allowed_and_denied::<Job>(&hook, "Job").await;
    allowed_and_denied::<CronJob>(&hook, "CronJob").await;
    allowed_and_denied::<Pod>(&hook, "Pod").await;
}

#[tokio::test(start_paused = true)]
async fn the_message_matches_what_the_real_servers_relayed() {
    // docs/webhook-reference.md: `kubectl create deployment evil --image=redis:7` in wh136a.
    let hook = synced_hook(vec![nginx_only("wh136a")], false).await;
    let evil: Deployment = object(
        "Deployment",
        "wh136a",
        pod_spec(&[], &[("redis", "redis:7")]),
    );
    let denial = admit(&hook, Operation::Create, "wh136a", &evil, false)
        .await
        .err()
        .unwrap_or_else(|| panic!("redis:7 was allowed"));
    assert_eq!(
        denial.message,
        "image-police: Deployment runs images not allowed in namespace \"wh136a\" by WhiteLists [\"allowed-images\"]: image \"redis:7\" of container \"redis\" (ImageNotListed: image is not on the WhiteList)"
    );
}

#[tokio::test(start_paused = true)]
async fn init_containers_are_judged_first_and_every_offender_is_named() {
    let hook = synced_hook(vec![nginx_only(NS)], false).await;
    let pod = pod_spec(
        &[("setup", "busybox:1.36"), ("ok", "nginx:1.27")],
        &[("main", "nginx:1.27"), ("side", "nginx:1.25")],
    );
    let deployment: Deployment = object("Deployment", NS, pod);
    assert_eq!(
        admit(&hook, Operation::Create, NS, &deployment, false).await,
        Err(forbidden(
            "image-police: Deployment runs images not allowed in namespace \"team\" by WhiteLists [\"allowed-images\"]: \
             image \"busybox:1.36\" of init container \"setup\" (ImageNotListed: image is not on the WhiteList); \
             image \"nginx:1.25\" of container \"side\" (TagNotAllowed: tag \"1.25\" is not allowed for this image)"
                .to_owned()
        ))
    );
    // An init container alone is enough to refuse.
    let only_init: Pod = object(
        "Pod",
        NS,
        pod_spec(&[("setup", "redis:7")], &[("main", "nginx:1.27")]),
    );
    let refused = admit(&hook, Operation::Create, NS, &only_init, false).await;
    assert!(
        matches!(&refused, Err(d) if d.message.ends_with("image \"redis:7\" of init container \"setup\" (ImageNotListed: image is not on the WhiteList)")),
        "{refused:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_lists_of_the_namespace_are_joined_and_all_named() {
    let redis = whitelist(NS, "cache", json!([{"name": "redis", "tags": ["7"]}]));
    let elsewhere = whitelist("other", "other", json!([{"name": "mysql", "tags": ["8"]}]));
    let hook = synced_hook(vec![nginx_only(NS), redis, elsewhere], false).await;
    let both: Deployment = object(
        "Deployment",
        NS,
        pod_spec(&[], &[("web", "nginx:1.27"), ("main", "redis:7")]),
    );
    assert_eq!(
        admit(&hook, Operation::Create, NS, &both, false).await,
        Ok(Vec::new())
    );
    let mysql: Deployment = object("Deployment", NS, pod_spec(&[], &[("db", "mysql:8")]));
    assert_eq!(
        admit(&hook, Operation::Create, NS, &mysql, false).await,
        Err(forbidden(
            "image-police: Deployment runs images not allowed in namespace \"team\" by WhiteLists [\"allowed-images\", \"cache\"]: \
             image \"mysql:8\" of container \"db\" (ImageNotListed: image is not on the WhiteList)"
                .to_owned()
        )),
        "only the namespace's own lists count"
    );
}

#[tokio::test(start_paused = true)]
async fn a_namespace_without_whitelists_is_not_enforced() {
    let hook = synced_hook(vec![nginx_only(NS)], false).await;
    let redis: Deployment = object("Deployment", "open", pod_spec(&[], &[("main", "redis:7")]));
    assert_eq!(
        admit(&hook, Operation::Create, "open", &redis, false).await,
        Ok(Vec::new())
    );
}

#[tokio::test(start_paused = true)]
async fn protected_namespaces_are_allowed_unless_the_flag_lifts_protection() {
    let lists = vec![nginx_only("kube-system"), nginx_only(OWN_NAMESPACE)];
    let hook = synced_hook(lists.clone(), false).await;
    for namespace in ["kube-system", OWN_NAMESPACE] {
        let redis: Deployment = object(
            "Deployment",
            namespace,
            pod_spec(&[], &[("main", "redis:7")]),
        );
        assert_eq!(
            admit(&hook, Operation::Create, namespace, &redis, false).await,
            Ok(Vec::new()),
            "{namespace}"
        );
    }
    let open = synced_hook(lists, true).await;
    let redis: Deployment = object(
        "Deployment",
        "kube-system",
        pod_spec(&[], &[("main", "redis:7")]),
    );
    assert_eq!(
        admit(&open, Operation::Create, "kube-system", &redis, false).await,
        Err(forbidden(format!(
            "image-police: Deployment runs images not allowed in namespace \"kube-system\" by WhiteLists [\"allowed-images\"]: {REDIS_NOT_LISTED}"
        )))
    );
}

#[tokio::test(start_paused = true)]
async fn an_invalid_whitelist_pauses_the_namespace_with_a_warning() {
    let broken = whitelist(NS, "broken", json!([]));
    let hook = synced_hook(vec![nginx_only(NS), broken], false).await;
    let redis: Job = object("Job", NS, pod_spec(&[], &[("main", "redis:7")]));
    assert_eq!(
        admit(&hook, Operation::Create, NS, &redis, false).await,
        Ok(vec![
            "image-police: enforcement paused in namespace team: invalid WhiteLists [\"broken\"]"
                .to_owned()
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_is_judged_like_the_real_request() {
    // `kubectl apply --dry-run=server` must show the refusal the real apply would get.
    let hook = synced_hook(vec![nginx_only(NS)], false).await;
    let redis: StatefulSet = object("StatefulSet", NS, pod_spec(&[], &[("main", "redis:7")]));
    let dry = admit(&hook, Operation::Create, NS, &redis, true).await;
    assert_eq!(
        dry,
        admit(&hook, Operation::Create, NS, &redis, false).await
    );
    assert_eq!(dry.map_err(|d| d.code), Err(403));
}

#[tokio::test(start_paused = true)]
async fn delete_and_connect_are_always_allowed() {
    let hook = synced_hook(vec![nginx_only(NS)], false).await;
    let redis: Pod = object("Pod", NS, pod_spec(&[], &[("main", "redis:7")]));
    for operation in [Operation::Delete, Operation::Connect] {
        assert_eq!(
            admit(&hook, operation.clone(), NS, &redis, false).await,
            Ok(Vec::new()),
            "{operation:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn before_the_cache_synced_the_call_fails_with_503() {
    let clientset =
        FakeClientset::new(vec![nginx_only(NS)]).unwrap_or_else(|e| panic!("seed: {e}"));
    let hook = hook_over(&clientset, false);
    let redis: Deployment = object("Deployment", NS, pod_spec(&[], &[("main", "redis:7")]));
    let nginx: Deployment = object("Deployment", NS, pod_spec(&[], &[("main", "nginx:1.27")]));
    let unavailable = Err(Denial {
        message: "image-police: the WhiteList cache has not synced yet".to_owned(),
        code: 503,
        reason: String::new(),
        unavailable: true,
    });
    // Whatever the image: without the lists nothing can be judged, in either direction.
    assert_eq!(
        admit(&hook, Operation::Create, NS, &redis, false).await,
        unavailable
    );
    assert_eq!(
        admit(&hook, Operation::Create, NS, &nginx, false).await,
        unavailable
    );
    hook.informer.start();
    wait_for_cache_sync(Duration::from_secs(10), &[&hook.informer])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        admit(&hook, Operation::Create, NS, &nginx, false).await,
        Ok(Vec::new())
    );
}
