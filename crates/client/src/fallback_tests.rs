use std::time::Duration;

use kube_core::Status;

use super::*;

const URL: &str = "/api/v1/namespaces/ns1/pods/web/exec?command=true";

fn api(code: u16, reason: &str) -> Error {
    Error::Api {
        verb: "GET".to_owned(),
        url: URL.to_owned(),
        status: Box::new(Status::failure("refused", reason).with_code(code)),
        retry_after: None,
    }
}

#[test]
fn every_answer_that_is_not_a_websocket_101_falls_back() {
    let upgrade_failures = [
        api(400, "BadRequest"),
        api(403, "Forbidden"),
        api(404, "NotFound"),
        api(500, "InternalError"),
        Error::HttpStatus {
            verb: "GET".to_owned(),
            url: URL.to_owned(),
            code: 502,
            body_excerpt: "<html>bad gateway</html>".to_owned(),
            retry_after: None,
        },
        Error::UpgradeFailed {
            url: URL.to_owned(),
            message: "the server answered 200 OK instead of 101 Switching Protocols".to_owned(),
        },
        Error::UpgradeFailed {
            url: URL.to_owned(),
            message: "the server chose subprotocol \"channel.k8s.io\", which was not offered"
                .to_owned(),
        },
    ];
    for error in upgrade_failures {
        assert!(should_fall_back(&error), "{error} should fall back");
    }
}

#[test]
fn failures_before_any_answer_do_not_fall_back() {
    let others = [
        Error::Connect {
            url: URL.to_owned(),
            message: "connection refused".to_owned(),
        },
        Error::Timeout {
            verb: "GET".to_owned(),
            url: URL.to_owned(),
            after: Duration::from_secs(5),
        },
        Error::RequestFailed {
            verb: "GET".to_owned(),
            url: URL.to_owned(),
            message: "connection reset".to_owned(),
        },
        Error::BuildRequest("a header value is not valid".to_owned()),
        Error::StreamFailed {
            url: URL.to_owned(),
            message: "broken".to_owned(),
        },
    ];
    for error in others {
        assert!(!should_fall_back(&error), "{error} should not fall back");
    }
}
