//! The checks of `authenticate`, each answer copied from a v1.36.2 TokenReview of a token it
//! issued (or one forged with its key) in the same situation.

use jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::registry::ResourceKey;

const NOW: i64 = 1_800_000_000;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).unwrap()
}

fn put(state: &mut State, plural: &str, namespace: &str, name: &str, uid: &str) {
    let meta = json!({"name": name, "namespace": namespace, "uid": uid});
    state.store.insert(
        &ResourceKey::new("", "v1", plural),
        (namespace.into(), name.into()),
        json!({"metadata": meta, "spec": {"serviceAccountName": "bot"}}),
    );
}

fn setup() -> (SigningKey, State) {
    let mut state = State::new(10);
    put(&mut state, "serviceaccounts", "ns", "bot", "u-sa");
    put(&mut state, "pods", "ns", "p", "u-pod");
    put(&mut state, "secrets", "ns", "s", "u-secret");
    put(&mut state, "nodes", "", "n", "u-node");
    (SigningKey::generate().unwrap(), state)
}

fn issue(key: &SigningKey, bound: Vec<BoundObject>, audiences: &[&str]) -> String {
    let audiences: Vec<String> = audiences.iter().map(|a| a.to_string()).collect();
    let spec = TokenSpec {
        namespace: "ns",
        account: "bot",
        account_uid: "u-sa",
        audiences: &audiences,
        lifetime: 3600,
        warn_after: None,
        bound,
    };
    key.sign(&claims(&spec, at(NOW))).unwrap()
}

fn bound(claim: &'static str, name: &str, uid: &str) -> BoundObject {
    BoundObject {
        claim,
        name: name.into(),
        uid: uid.into(),
    }
}

fn review(key: &SigningKey, state: &State, token: &str, requested: &[&str], now: i64) -> String {
    let requested: Vec<String> = requested.iter().map(|a| a.to_string()).collect();
    match authenticate(key, state, token, &requested, at(now)) {
        Ok(user) => format!(
            "ok {} {:?} {:?}",
            user.user.name, user.audiences, user.extra
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn claims_are_those_v1_36_writes() {
    let spec = TokenSpec {
        namespace: "ns",
        account: "bot",
        account_uid: "u-sa",
        audiences: &[ISSUER.to_string()],
        lifetime: 31_536_000,
        warn_after: Some(3607),
        bound: vec![bound("pod", "p", "u-pod"), bound("node", "n", "u-node")],
    };
    let mut claims = claims(&spec, at(NOW));
    assert_eq!(claims["jti"].as_str().unwrap().len(), 36);
    claims["jti"] = json!("J");
    assert_eq!(
        claims,
        json!({"aud": [ISSUER], "exp": NOW + 31_536_000, "iat": NOW, "iss": ISSUER, "jti": "J",
               "kubernetes.io": {"namespace": "ns", "node": {"name": "n", "uid": "u-node"},
                                 "pod": {"name": "p", "uid": "u-pod"},
                                 "serviceaccount": {"name": "bot", "uid": "u-sa"},
                                 "warnafter": NOW + 3607},
               "nbf": NOW, "sub": "system:serviceaccount:ns:bot"})
    );
}

#[test]
fn a_valid_token_is_its_service_account_with_credential_and_pod_extras() {
    let (key, state) = setup();
    let token = issue(&key, vec![bound("pod", "p", "u-pod")], &[ISSUER]);
    let found = authenticate(&key, &state, &token, &[], at(NOW)).unwrap();
    assert_eq!(
        found.user.groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:ns",
            "system:authenticated"
        ]
    );
    assert_eq!(found.user.uid, "u-sa");
    let keys: Vec<&str> = found.extra.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "authentication.kubernetes.io/credential-id",
            "authentication.kubernetes.io/pod-name",
            "authentication.kubernetes.io/pod-uid"
        ]
    );
    assert!(found.extra["authentication.kubernetes.io/credential-id"][0].starts_with("JTI="));
}

#[test]
fn audiences_must_meet_the_requested_ones() {
    let (key, state) = setup();
    let token = issue(&key, vec![], &[ISSUER]);
    let requested = [ISSUER.to_string(), "x".to_string()];
    let found = authenticate(&key, &state, &token, &requested, at(NOW)).unwrap();
    assert_eq!(found.audiences, [ISSUER]);
    assert_eq!(
        review(&key, &state, &token, &["x"], NOW),
        "[invalid bearer token, token audiences [\"https://kubernetes.default.svc\"] is invalid \
         for the target audiences [\"x\"]]"
    );
    let a1 = issue(&key, vec![], &["a1", "a2"]);
    assert_eq!(
        review(&key, &state, &a1, &[], NOW),
        "[invalid bearer token, token audiences [\"a1\" \"a2\"] is invalid for the target \
         audiences [\"https://kubernetes.default.svc\"]]"
    );
}

#[test]
fn times_hold_with_a_minute_of_leeway() {
    let (key, state) = setup();
    let token = issue(&key, vec![], &[ISSUER]);
    let expired = "[invalid bearer token, service account token has expired]";
    assert!(review(&key, &state, &token, &[], NOW + 3600 + 60).starts_with("ok"));
    assert_eq!(review(&key, &state, &token, &[], NOW + 3600 + 61), expired);
    assert!(review(&key, &state, &token, &[], NOW - 60).starts_with("ok"));
    assert_eq!(
        review(&key, &state, &token, &[], NOW - 61),
        "[invalid bearer token, service account token is not valid yet]"
    );
}

#[test]
fn deleted_or_recreated_objects_invalidate_their_tokens() {
    let (key, mut state) = setup();
    let pod = issue(&key, vec![bound("pod", "p", "u-pod")], &[ISSUER]);
    let secret = issue(&key, vec![bound("secret", "s", "u-secret")], &[ISSUER]);
    let node = issue(&key, vec![bound("node", "n", "u-node")], &[ISSUER]);
    put(&mut state, "pods", "ns", "p", "u-pod-2");
    put(&mut state, "secrets", "ns", "s", "u-secret-2");
    put(&mut state, "nodes", "", "n", "u-node-2");
    let check = |token: &str, state: &State| review(&key, state, token, &[], NOW);
    assert_eq!(
        check(&pod, &state),
        "[invalid bearer token, pod UID (u-pod-2) does not match service account pod ref claim (u-pod)]"
    );
    assert_eq!(
        check(&secret, &state),
        "[invalid bearer token, secret UID (u-secret-2) does not match service account secret ref claim (u-secret)]"
    );
    assert_eq!(
        check(&node, &state),
        "[invalid bearer token, node UID (u-node-2) does not match service account node ref claim (u-node)]"
    );
    let mut gone = State::new(10);
    put(&mut gone, "serviceaccounts", "ns", "bot", "u-sa");
    for token in [&pod, &secret, &node] {
        assert_eq!(
            check(token, &gone),
            "[invalid bearer token, service account token has been invalidated]"
        );
    }
    put(&mut gone, "serviceaccounts", "ns", "bot", "u-sa-2");
    let plain = issue(&key, vec![], &[ISSUER]);
    assert_eq!(
        check(&plain, &gone),
        "[invalid bearer token, service account UID (u-sa-2) does not match claim (u-sa)]"
    );
    assert_eq!(
        check(&plain, &State::new(10)),
        "[invalid bearer token, serviceaccounts \"bot\" not found]"
    );
}

#[test]
fn foreign_and_broken_tokens_get_the_real_reasons() {
    let (key, state) = setup();
    let check = |token: &str| review(&key, &state, token, &[], NOW);
    assert_eq!(check("hello"), "invalid bearer token");
    assert_eq!(check("abc.def.ghi"), "invalid bearer token");
    let other = SigningKey::generate().unwrap();
    let foreign = issue(&other, vec![], &[ISSUER]);
    assert_eq!(
        check(&foreign),
        "[invalid bearer token, invalid signature, no keys found]"
    );
    let other_issuer = key
        .sign(&json!({"iss": "https://other", "aud": [ISSUER]}))
        .unwrap();
    assert_eq!(check(&other_issuer), "invalid bearer token");
    let token = issue(&key, vec![], &[ISSUER]);
    let (signed, _) = token.rsplit_once('.').unwrap();
    let bad = format!("{signed}.{}", "A".repeat(86));
    assert_eq!(
        check(&bad),
        "[invalid bearer token, go-jose/go-jose: error in cryptographic primitive]"
    );
}
