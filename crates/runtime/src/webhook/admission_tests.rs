use k8s_openapi::api::apps::v1::Deployment;
use std::collections::BTreeMap;
use std::sync::Mutex;

use super::*;

/// Bodies the real API servers sent: v1.36 for a Deployment POSTed with curl (image
/// `redis:7`, after a mutating webhook added `mutated: yes`), v1.15 for `kubectl create deployment c --image=nginx:1.27`.
const V1_K8S136: &str = include_str!("testdata/admission-v1-k8s136.json");
const V1BETA1_K8S115: &str = include_str!("testdata/admission-v1beta1-k8s115.json");

/// Denies every image but `nginx:1.27`; records what it saw.
#[derive(Default)]
struct OnlyNginx {
    seen: Mutex<Vec<(String, bool)>>,
}

impl Validator<Deployment> for OnlyNginx {
    async fn validate(&self, request: &Admission<'_, Deployment>) -> Result<Warnings, Denial> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).push((
            format!(
                "{:?} {}",
                request.operation,
                request.namespace.unwrap_or("")
            ),
            request.dry_run,
        ));
        let image = request
            .object
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|p| p.containers.first())
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        if image == "nginx:1.27" {
            Ok(vec!["seen".to_owned()])
        } else {
            Err(Denial::with_code(422, format!("{image} is not allowed")).reason("Invalid"))
        }
    }
}

/// Labels every Deployment `labelled=yes`; leaves it alone on dry runs (as a handler with side
/// effects must).
struct Labeller;

impl Mutator<Deployment> for Labeller {
    async fn mutate(
        &self,
        object: &mut Deployment,
        request: &Admission<'_, Deployment>,
    ) -> Result<Warnings, Denial> {
        if !request.dry_run {
            object
                .metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert("labelled".to_owned(), "yes".to_owned());
        }
        Ok(Vec::new())
    }
}

async fn answer(handler: &dyn Handler, body: &str) -> (u16, Value) {
    let answer = handler.handle(body.as_bytes()).await;
    let value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    (answer.status, value)
}

#[tokio::test]
async fn real_v1_and_v1beta1_reviews_decode_and_are_answered_in_their_version() {
    let v1 = V1_K8S136.replace("redis:7", "nginx:1.27");
    for (body, version, namespace) in [
        (v1.as_str(), ADMISSION_V1, "whs136"),
        (V1BETA1_K8S115, ADMISSION_V1BETA1, "whs115"),
    ] {
        let validator = OnlyNginx::default();
        let handler: Typed<Deployment, _> = Typed::new(Validating(validator));
        let (status, review) = answer(&handler, body).await;
        let sent: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        assert_eq!(status, 200);
        assert_eq!(
            review,
            serde_json::json!({
                "kind": "AdmissionReview",
                "apiVersion": version,
                "response": {
                    "uid": sent["request"]["uid"],
                    "allowed": true,
                    "status": {},
                    "warnings": ["seen"],
                }
            })
        );
        let seen = handler
            .judge
            .0
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        assert_eq!(seen, vec![(format!("Create {namespace}"), false)]);
    }
}

#[tokio::test]
async fn a_denial_carries_its_code_reason_and_message() {
    let handler: Typed<Deployment, _> = Typed::new(Validating(OnlyNginx::default()));
    let (status, review) = answer(&handler, V1_K8S136).await;
    assert_eq!(status, 200);
    assert_eq!(
        review["response"],
        serde_json::json!({
            "uid": review["response"]["uid"],
            "allowed": false,
            "status": {"status": "Failure", "code": 422, "reason": "Invalid", "message": "redis:7 is not allowed"},
        })
    );
}

#[tokio::test]
async fn a_mutation_is_answered_as_the_json_patch_of_the_change_and_dry_run_reaches_the_handler() {
    let handler: Typed<Deployment, _> = Typed::new(Mutating(Labeller));
    let (_, review) = answer(&handler, V1_K8S136).await;
    assert_eq!(review["response"]["patchType"], "JSONPatch", "{review}");
    let patch = review["response"]["patch"]
        .as_str()
        .unwrap_or_else(|| panic!("{review}"));
    let patch = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, patch)
        .unwrap_or_default();
    let patch: Value = serde_json::from_slice(&patch).unwrap_or(Value::Null);
    assert_eq!(
        patch,
        serde_json::json!([{"op": "add", "path": "/metadata/labels/labelled", "value": "yes"}])
    );
    // On a dry run this handler changes nothing: no patch at all.
    let dry = V1_K8S136.replace("\"dryRun\":false", "\"dryRun\":true");
    let (_, review) = answer(&handler, &dry).await;
    assert_eq!(review["response"]["allowed"], true);
    assert_eq!(review["response"].get("patch"), None);
    assert_eq!(review["response"].get("patchType"), None);
}

#[tokio::test]
async fn undecodable_reviews_are_answered_400_never_a_panic() {
    let handler: Typed<Deployment, _> = Typed::new(Validating(OnlyNginx::default()));
    let cases = [
        ("not json", ADMISSION_V1, "", "the body is not JSON"),
        (
            r#"{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview"}"#,
            ADMISSION_V1,
            "",
            "apiVersion \"admission.k8s.io/v2\" is not",
        ),
        (
            r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#,
            ADMISSION_V1BETA1,
            "",
            "carries no request",
        ),
    ];
    for (body, version, uid, message) in cases {
        let (status, review) = answer(&handler, body).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(review["apiVersion"], version, "{body}");
        assert_eq!(review["response"]["uid"], uid, "{body}");
        assert_eq!(review["response"]["allowed"], false, "{body}");
        assert_eq!(review["response"]["status"]["code"], 400, "{body}");
        let text = review["response"]["status"]["message"]
            .as_str()
            .unwrap_or("");
        assert!(text.contains(message), "{body}: {text}");
    }
    // An object that is not a Deployment: the uid is still answered.
    let bad = V1_K8S136.replace("\"replicas\":1", "\"replicas\":\"one\"");
    let (_, review) = answer(&handler, &bad).await;
    let sent: Value = serde_json::from_str(V1_K8S136).unwrap_or(Value::Null);
    assert_eq!(review["response"]["uid"], sent["request"]["uid"]);
    assert_eq!(review["response"]["status"]["code"], 400);
}

#[tokio::test]
async fn unavailable_fails_the_call_so_the_failure_policy_decides() {
    struct NotSynced;
    impl Validator<Deployment> for NotSynced {
        async fn validate(&self, _: &Admission<'_, Deployment>) -> Result<Warnings, Denial> {
            Err(Denial::unavailable("caches not synced"))
        }
    }
    let handler: Typed<Deployment, _> = Typed::new(Validating(NotSynced));
    let answer = handler.handle(V1_K8S136.as_bytes()).await;
    assert_eq!(
        answer,
        Answer {
            status: 503,
            body: b"caches not synced".to_vec()
        }
    );
}
