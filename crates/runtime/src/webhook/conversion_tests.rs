use serde_json::json;

use super::*;

/// `stable.example.com`'s CronTab: v1 keeps `spec.cronSpec`, v2 calls it `spec.schedule`.
struct CronTab;

impl Convert for CronTab {
    fn convert(&self, mut object: Value, desired: &str) -> Result<Value, String> {
        let spec = object
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or("the object has no spec")?;
        let (from, to) = match desired {
            "stable.example.com/v2" => ("cronSpec", "schedule"),
            "stable.example.com/v1" => ("schedule", "cronSpec"),
            other => return Err(format!("unknown version {other}")),
        };
        if let Some(value) = spec.remove(from) {
            spec.insert(to.to_owned(), value);
        }
        object["apiVersion"] = Value::String(desired.to_owned());
        Ok(object)
    }
}

/// Answers every object with `apiVersion` left as it was: a broken converter.
struct Forgetful;

impl Convert for Forgetful {
    fn convert(&self, object: Value, _: &str) -> Result<Value, String> {
        Ok(object)
    }
}

/// An object as the API server stores it: full metadata, the CRD's fields.
fn crontab(api_version: &str, name: &str, field: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": "CronTab",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": "0d7a2bb0-3c8e-4d4e-9a59-5d8c3a2b8f10",
            "resourceVersion": "4711",
            "generation": 1,
            "creationTimestamp": "2026-11-26T10:00:00Z",
            "labels": {"app": "cron"},
        },
        "spec": {field: "*/5 * * * *", "image": "cron:1"},
    })
}

/// The body kube-apiserver POSTs (`apiextensions-apiserver`'s webhook converter): the review in
/// `version`, a request with a uid, the desired `group/version`, and the objects.
fn review(version: &str, desired: &str, objects: Vec<Value>) -> String {
    json!({
        "kind": "ConversionReview",
        "apiVersion": version,
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "desiredAPIVersion": desired,
            "objects": objects,
        },
    })
    .to_string()
}

fn registry() -> Conversions {
    let mut conversions = Conversions::default();
    conversions.add("stable.example.com", "CronTab", CronTab);
    conversions.add("broken.example.com", "CronTab", Forgetful);
    conversions
}

async fn answer(conversions: &Conversions, body: &str) -> (u16, Value) {
    let answer = conversions.handle(body.as_bytes()).await;
    let value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    (answer.status, value)
}

#[tokio::test]
async fn v1_and_v1beta1_reviews_round_trip_in_the_version_asked() {
    let conversions = registry();
    for version in [CONVERSION_V1, CONVERSION_V1BETA1] {
        let objects = vec![
            crontab("stable.example.com/v1", "a", "cronSpec"),
            // Already in the desired version: returned untouched.
            crontab("stable.example.com/v2", "b", "schedule"),
        ];
        let body = review(version, "stable.example.com/v2", objects);
        let (status, answer) = answer(&conversions, &body).await;
        assert_eq!(status, 200);
        assert_eq!(
            answer,
            json!({
                "kind": "ConversionReview",
                "apiVersion": version,
                "response": {
                    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                    "result": {"status": "Success"},
                    "convertedObjects": [
                        crontab("stable.example.com/v2", "a", "schedule"),
                        crontab("stable.example.com/v2", "b", "schedule"),
                    ],
                },
            }),
            "{version}"
        );
        // And back.
        let converted = answer["response"]["convertedObjects"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let back = review(version, "stable.example.com/v1", converted);
        let (_, answer) = self::answer(&conversions, &back).await;
        assert_eq!(
            answer["response"]["convertedObjects"],
            json!([
                crontab("stable.example.com/v1", "a", "cronSpec"),
                crontab("stable.example.com/v1", "b", "cronSpec"),
            ]),
            "{version}"
        );
    }
}

/// What kube-apiserver reads of a failed conversion: `result.status: Failure` and the message
/// (it answers the client `conversion webhook for <gvk> failed: <message>`).
fn failure(version: &str, message: &str) -> Value {
    json!({
        "kind": "ConversionReview",
        "apiVersion": version,
        "response": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "result": {"status": "Failure", "message": message, "reason": "ConversionFailed"},
            "convertedObjects": [],
        },
    })
}

#[tokio::test]
async fn an_unknown_kind_or_group_fails_the_whole_review_with_a_message() {
    let conversions = registry();
    let unknown_kind = vec![
        crontab("stable.example.com/v1", "a", "cronSpec"),
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronJob", "metadata": {"name": "c"}}),
    ];
    let body = review(CONVERSION_V1, "stable.example.com/v2", unknown_kind);
    assert_eq!(
        answer(&conversions, &body).await,
        (
            200,
            failure(
                CONVERSION_V1,
                "no conversion is registered for kind \"CronJob\" of group \"stable.example.com\""
            )
        )
    );
    // The same kind in another group is another kind.
    let other_group = vec![crontab("other.example.com/v1", "a", "cronSpec")];
    let body = review(CONVERSION_V1BETA1, "other.example.com/v2", other_group);
    assert_eq!(
        answer(&conversions, &body).await,
        (
            200,
            failure(
                CONVERSION_V1BETA1,
                "no conversion is registered for kind \"CronTab\" of group \"other.example.com\""
            )
        )
    );
}

#[tokio::test]
async fn a_converter_error_or_a_wrong_answer_fails_the_review() {
    let conversions = registry();
    let body = review(
        CONVERSION_V1,
        "stable.example.com/v3",
        vec![crontab("stable.example.com/v1", "a", "cronSpec")],
    );
    assert_eq!(
        answer(&conversions, &body).await.1,
        failure(CONVERSION_V1, "unknown version stable.example.com/v3")
    );
    let body = review(
        CONVERSION_V1,
        "broken.example.com/v2",
        vec![crontab("broken.example.com/v1", "a", "cronSpec")],
    );
    assert_eq!(
        answer(&conversions, &body).await.1,
        failure(
            CONVERSION_V1,
            "converting CronTab from broken.example.com/v1 to broken.example.com/v2 returned apiVersion Some(\"broken.example.com/v1\")"
        )
    );
}

#[tokio::test]
async fn an_unreadable_review_is_a_bad_request_never_a_panic() {
    let conversions = registry();
    for (body, version, message) in [
        ("{", CONVERSION_V1, "the ConversionReview does not decode"),
        (
            r#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v2"}"#,
            CONVERSION_V1,
            "apiVersion \"apiextensions.k8s.io/v2\" is not",
        ),
        (
            r#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1beta1"}"#,
            CONVERSION_V1BETA1,
            "carries no request",
        ),
    ] {
        let (status, answer) = answer(&conversions, body).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(answer["apiVersion"], version, "{body}");
        assert_eq!(answer["response"]["result"]["status"], "Failure", "{body}");
        assert_eq!(answer["response"]["result"]["code"], 400, "{body}");
        let text = answer["response"]["result"]["message"]
            .as_str()
            .unwrap_or("");
        assert!(text.contains(message), "{body}: {text}");
    }
}
