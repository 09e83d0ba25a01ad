use serde_json::json;

use super::*;

fn pod() -> Value {
    json!({"spec": {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "c"}, {"name": "d"}],
    }})
}

#[test]
fn the_container_must_be_named_unless_the_pod_has_one() {
    assert_eq!(container(&pod(), "p", "d").unwrap(), "d");
    assert_eq!(container(&pod(), "p", "init").unwrap(), "init");
    let one = json!({"spec": {"containers": [{"name": "only"}]}});
    assert_eq!(container(&one, "p", "").unwrap(), "only");
    let cases = [
        (
            pod(),
            "",
            "a container name must be specified for pod p, choose one of: [init c d]",
        ),
        (pod(), "zz", "container zz is not valid for pod p"),
        (
            json!({"spec": {}}),
            "",
            "a container name must be specified for pod p",
        ),
    ];
    for (pod, asked, message) in cases {
        let err = container(&pod, "p", asked).unwrap_err();
        assert_eq!((err.code, err.message.as_str()), (400, message));
    }
}

#[test]
fn log_options_are_validated_as_v1_36_does() {
    let check = |raw: &str| validate_log_options("p", &Query::parse(Some(raw)));
    assert!(check("tailLines=0&limitBytes=1&sinceSeconds=1").is_ok());
    let cases = [
        (
            "tailLines=-1",
            "PodLogOptions \"p\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "limitBytes=0",
            "PodLogOptions \"p\" is invalid: limitBytes: Invalid value: 0: must be greater than 0",
        ),
        (
            "sinceSeconds=0",
            "PodLogOptions \"p\" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0",
        ),
        (
            "sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z",
            "PodLogOptions \"p\" is invalid: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        ),
    ];
    for (raw, message) in cases {
        let err = check(raw).unwrap_err();
        assert_eq!((err.code, err.message.as_str()), (422, message), "{raw}");
    }
    assert_eq!(check("tailLines=x").unwrap_err().code, 400);
}

#[test]
fn the_kubelet_query_uses_the_kubelets_parameter_names() {
    let query = |raw: &str| Query::parse(Some(raw));
    assert_eq!(
        kubelet_query(
            Connect::Exec,
            &query(
                "stdin=true&stdout=true&tty=false&command=sh&command=-c&command=exit%203&container=c"
            )
        ),
        "input=1&output=1&command=sh&command=-c&command=exit%203"
    );
    assert_eq!(
        kubelet_query(Connect::Attach, &query("stderr=1&command=x")),
        "error=1"
    );
    assert_eq!(
        kubelet_query(Connect::PortForward, &query("ports=80&ports=81,82")),
        "port=80%2C81%2C82"
    );
    assert_eq!(
        kubelet_query(
            Connect::Log,
            &query("follow=true&tailLines=2&container=c&limitBytes=5")
        ),
        "follow=true&tailLines=2&limitBytes=5"
    );
}

#[test]
fn the_kubelet_is_reached_at_the_preferred_address_and_advertised_port() {
    let node = json!({"status": {
        "addresses": [{"type": "Hostname", "address": "n0"}, {"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 4321}},
    }});
    assert_eq!(
        kubelet_endpoint(&node, "n0").unwrap(),
        ("127.0.0.1".to_owned(), 4321)
    );
    let bare = json!({"status": {"addresses": [{"type": "Hostname", "address": "n0"}]}});
    assert_eq!(
        kubelet_endpoint(&bare, "n0").unwrap(),
        ("n0".to_owned(), 10250)
    );
    assert_eq!(kubelet_endpoint(&json!({}), "n0").unwrap_err().code, 500);
}

/// Allows everything but `create` on a subresource (a Role granting `get` on `pods/exec` only).
#[derive(Debug)]
struct GetOnly;

impl crate::authz::Authorizer for GetOnly {
    fn authorize(&self, attributes: &crate::authz::Attributes) -> Decision {
        if attributes.verb == "create" && !attributes.subresource.is_empty() {
            Decision::NoOpinion {
                reason: String::new(),
            }
        } else {
            Decision::Allow {
                reason: String::new(),
            }
        }
    }

    fn rules_for(&self, user: &UserInfo, namespace: &str) -> crate::authz::Rules {
        crate::authz::AllowAll.rules_for(user, namespace)
    }
}

async fn call(api: &ApiServer, method: &str, path: &str, body: &str) -> (u16, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from(body.to_owned()))
        .unwrap();
    let response = api.handle(request).await;
    let code = response.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_upgrade_get_also_needs_create_as_from_1_35() {
    let options = crate::ServerOptions {
        authorizer: std::sync::Arc::new(GetOnly),
        ..crate::ServerOptions::default()
    };
    let api = ApiServer::new(options);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let (code, _) = call(
        &api,
        "POST",
        "/api/v1/namespaces/default/pods",
        &pod.to_string(),
    )
    .await;
    assert_eq!(code, 201);
    for sub in [
        "exec?command=true",
        "attach?stdout=true",
        "portforward?ports=80",
    ] {
        let (code, status) = call(
            &api,
            "GET",
            &format!("/api/v1/namespaces/default/pods/p/{sub}"),
            "",
        )
        .await;
        assert_eq!(code, 403, "{sub}: {status}");
        // v1.36.2's words: the resource without the subresource and the RBAC reason (empty).
        assert_eq!(status["message"], "pods \"p\" is forbidden: ", "{sub}");
        assert_eq!(
            status["details"],
            json!({"name": "p", "kind": "pods"}),
            "{sub}"
        );
    }
    // `get` on pods/log is all a log needs; an unscheduled Pod's log has no content (204, as
    // 1.15 and v1.36.2 answer).
    let (code, _) = call(&api, "GET", "/api/v1/namespaces/default/pods/p/log", "").await;
    assert_eq!(code, 204);
}
