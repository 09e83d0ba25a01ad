//! ServiceAccount tokens: the signing key (server state, kept in the data directory like a real
//! server's key file), the claims a TokenRequest signs (`crate::handlers::token`) and the checks a
//! token passes before `crate::authn` or a TokenReview accepts it. Mirrors kubernetes
//! `pkg/serviceaccount/claims.go` (claims, `Validate`) and `jwt.go` (`AuthenticateToken`).
//!
//! # The checks, in the real server's order
//! 1. The unverified payload names this server's issuer; otherwise the token is not ours and the
//!    answer is the bare `invalid bearer token` (another authenticator might have taken it).
//! 2. The signature verifies with the key its `kid` names.
//! 3. Its audiences (the API audiences when it has none) meet the requested ones (the API
//!    audiences unless a TokenReview names others).
//! 4. `nbf`, `exp` and `iat` hold with one minute of leeway.
//! 5. The ServiceAccount, and the Secret, Pod or Node it is bound to, still exist with the uids
//!    the token names (a bound Pod's Node is not looked up: the pod stands for it).
//!
//! Failures after step 1 read `[invalid bearer token, <reason>]`, the reasons worded as v1.36.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use parking_lot::RwLock;
use serde_json::{Value, json};

use crate::authz::UserInfo;
use crate::jwt::{SigningKey, unverified_claims};
use crate::storage::State;

/// The issuer and API audience, kube-apiserver's `--service-account-issuer` as the v1.36 the
/// test server is checked against runs it.
pub(crate) const ISSUER: &str = "https://kubernetes.default.svc";
/// go-jose's `DefaultLeeway`, which kube-apiserver applies to `nbf`, `exp`, `iat` and deletions.
const LEEWAY_SECONDS: i64 = 60;

/// The key the server signs ServiceAccount tokens with. Replaced once, when a data directory
/// holds the key of an earlier run.
#[derive(Debug)]
pub(crate) struct TokenKeys {
    key: RwLock<Arc<SigningKey>>,
}

impl TokenKeys {
    /// A freshly generated key.
    pub(crate) fn generate() -> TokenKeys {
        // ring's P-256 generation fails only when the system's random source does, and then no
        // TLS or uid in this server would work either.
        #[allow(clippy::expect_used)]
        let key = SigningKey::generate().expect("the system random source works");
        TokenKeys {
            key: RwLock::new(Arc::new(key)),
        }
    }

    /// The current key.
    pub(crate) fn key(&self) -> Arc<SigningKey> {
        self.key.read().clone()
    }

    /// Uses `key` from now on (a restored one).
    pub(crate) fn replace(&self, key: SigningKey) {
        *self.key.write() = Arc::new(key);
    }
}

/// An object a token is bound to (`spec.boundObjectRef`), with the uid it has now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BoundObject {
    /// `pod`, `secret` or `node`: the claim's key.
    pub(crate) claim: &'static str,
    pub(crate) name: String,
    pub(crate) uid: String,
}

/// What a TokenRequest asks to be signed.
#[derive(Debug)]
pub(crate) struct TokenSpec<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) account: &'a str,
    pub(crate) account_uid: &'a str,
    pub(crate) audiences: &'a [String],
    /// Seconds until `exp`.
    pub(crate) lifetime: i64,
    /// Set when the token is extended: the `warnafter` time, seconds after `iat`.
    pub(crate) warn_after: Option<i64>,
    /// The bound Secret, Pod or Node, and the Node a bound Pod runs on.
    pub(crate) bound: Vec<BoundObject>,
}

/// The claims of a new token issued at `now`, keys in the order the real server writes them.
pub(crate) fn claims(spec: &TokenSpec<'_>, now: Timestamp) -> Value {
    let iat = now.as_second();
    let mut private = serde_json::Map::new();
    private.insert("namespace".into(), spec.namespace.into());
    let mut bound = spec.bound.clone();
    bound.sort_by_key(|b| b.claim);
    for b in bound {
        private.insert(b.claim.into(), json!({"name": b.name, "uid": b.uid}));
    }
    private.insert(
        "serviceaccount".into(),
        json!({"name": spec.account, "uid": spec.account_uid}),
    );
    if let Some(after) = spec.warn_after {
        private.insert("warnafter".into(), json!(iat + after));
    }
    json!({
        "aud": spec.audiences,
        "exp": iat + spec.lifetime,
        "iat": iat,
        "iss": ISSUER,
        "jti": uuid::Uuid::new_v4().to_string(),
        "kubernetes.io": private,
        "nbf": iat,
        "sub": format!("system:serviceaccount:{}:{}", spec.namespace, spec.account),
    })
}

/// The user a valid token authenticates, with what a TokenReview shows of it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TokenUser {
    pub(crate) user: UserInfo,
    /// `authentication.kubernetes.io/credential-id` (`JTI=<jti>`), `pod-name`, `pod-uid`,
    /// `node-name`, `node-uid`, as set.
    pub(crate) extra: BTreeMap<String, Vec<String>>,
    /// The requested audiences the token is valid for.
    pub(crate) audiences: Vec<String>,
}

/// Why a token is refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TokenError {
    /// Not a token of this issuer (or not a JWT): `invalid bearer token`.
    NotOurs,
    /// One of ours that fails a check, with the real server's reason.
    Invalid(String),
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::NotOurs => f.write_str("invalid bearer token"),
            TokenError::Invalid(reason) => write!(f, "[invalid bearer token, {reason}]"),
        }
    }
}

/// Checks `token` for `requested` audiences (the API audience when empty), at `now`, against
/// the objects in `state`.
///
/// # Errors
/// [`TokenError`] naming the first check that failed (see the module docs).
pub(crate) fn authenticate(
    key: &SigningKey,
    state: &State,
    token: &str,
    requested: &[String],
    now: Timestamp,
) -> Result<TokenUser, TokenError> {
    let peeked = unverified_claims(token).ok_or(TokenError::NotOurs)?;
    if peeked["iss"].as_str() != Some(ISSUER) {
        return Err(TokenError::NotOurs);
    }
    let claims = key
        .verify(token)
        .map_err(|e| TokenError::Invalid(e.to_string()))?;
    let audiences = matching_audiences(&claims, requested).map_err(TokenError::Invalid)?;
    check_times(&claims, now.as_second()).map_err(TokenError::Invalid)?;
    let mut bindings = Bindings::default();
    let private = &claims["kubernetes.io"];
    let namespace = private["namespace"].as_str().unwrap_or_default();
    let account = check_objects(state, private, namespace, now, &mut bindings)
        .map_err(TokenError::Invalid)?;
    let mut extra = BTreeMap::new();
    if let Some(jti) = claims["jti"].as_str().filter(|j| !j.is_empty()) {
        extra.insert(credential("credential-id"), vec![format!("JTI={jti}")]);
    }
    for (kind, name, uid) in bindings.0 {
        extra.insert(credential(&format!("{kind}-name")), vec![name]);
        extra.insert(credential(&format!("{kind}-uid")), vec![uid]);
    }
    Ok(TokenUser {
        user: UserInfo {
            name: format!("system:serviceaccount:{namespace}:{}", account.0),
            uid: account.1,
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
        },
        extra,
        audiences,
    })
}

fn credential(key: &str) -> String {
    format!("authentication.kubernetes.io/{key}")
}

/// The pod and node a token stands for: `(kind, name, uid)`.
#[derive(Default)]
struct Bindings(Vec<(&'static str, String, String)>);

/// The token's audiences that are among `requested` (the API audience when empty); a token
/// without audiences counts as one for the API audience.
fn matching_audiences(claims: &Value, requested: &[String]) -> Result<Vec<String>, String> {
    let mut audiences: Vec<String> = match &claims["aud"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .filter_map(|a| a.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    if audiences.is_empty() {
        audiences.push(ISSUER.into());
    }
    let api = [ISSUER.to_string()];
    let requested = if requested.is_empty() {
        &api[..]
    } else {
        requested
    };
    let matching: Vec<String> = audiences
        .iter()
        .filter(|a| requested.contains(a))
        .cloned()
        .collect();
    if matching.is_empty() {
        return Err(format!(
            "token audiences {} is invalid for the target audiences {}",
            go_quoted(&audiences),
            go_quoted(requested)
        ));
    }
    Ok(matching)
}

/// A string list as Go's `%q` prints a `[]string`: `["a" "b"]`.
fn go_quoted(list: &[String]) -> String {
    let quoted: Vec<String> = list
        .iter()
        .map(|s| Value::String(s.clone()).to_string())
        .collect();
    format!("[{}]", quoted.join(" "))
}

/// go-jose's `ValidateWithLeeway` on times, in its order, with `claims.go`'s words.
fn check_times(claims: &Value, now: i64) -> Result<(), String> {
    let time = |key: &str| claims[key].as_f64();
    #[allow(clippy::cast_precision_loss)]
    let (early, late) = ((now + LEEWAY_SECONDS) as f64, (now - LEEWAY_SECONDS) as f64);
    if time("nbf").is_some_and(|nbf| early < nbf) {
        return Err("service account token is not valid yet".into());
    }
    if time("exp").is_some_and(|exp| late > exp) {
        return Err("service account token has expired".into());
    }
    if time("iat").is_some_and(|iat| early < iat) {
        return Err("service account token is issued in the future".into());
    }
    Ok(())
}

/// Checks the ServiceAccount and bound objects the claims name; the account's name and uid.
fn check_objects(
    state: &State,
    private: &Value,
    namespace: &str,
    now: Timestamp,
    bindings: &mut Bindings,
) -> Result<(String, String), String> {
    let named = |key: &str| {
        let claim = &private[key];
        claim.is_object().then(|| {
            let text = |k: &str| claim[k].as_str().unwrap_or_default().to_string();
            (text("name"), text("uid"))
        })
    };
    let (account, account_uid) = named("serviceaccount").unwrap_or_default();
    let Some(stored) = lookup(state, "serviceaccounts", namespace, &account) else {
        return Err(format!("serviceaccounts \"{account}\" not found"));
    };
    if deleted_before_leeway(&stored, now) {
        return Err(INVALIDATED.into());
    }
    let uid = uid_of(&stored);
    if uid != account_uid {
        return Err(format!(
            "service account UID ({uid}) does not match claim ({account_uid})"
        ));
    }
    if let Some((name, claimed)) = named("secret") {
        check_bound(
            state,
            ("secrets", "secret"),
            namespace,
            &name,
            &claimed,
            now,
        )?;
    }
    let pod = named("pod");
    if let Some((name, claimed)) = &pod {
        check_bound(state, ("pods", "pod"), namespace, name, claimed, now)?;
        bindings.0.push(("pod", name.clone(), claimed.clone()));
    }
    if let Some((name, claimed)) = named("node") {
        if pod.is_none() {
            check_bound(state, ("nodes", "node"), "", &name, &claimed, now)?;
        }
        bindings.0.push(("node", name, claimed));
    }
    Ok((account, uid))
}

const INVALIDATED: &str = "service account token has been invalidated";

/// A bound Secret, Pod or Node exists, is not long deleted, and has the claimed uid.
fn check_bound(
    state: &State,
    (plural, word): (&str, &str),
    namespace: &str,
    name: &str,
    claimed: &str,
    now: Timestamp,
) -> Result<(), String> {
    let stored = lookup(state, plural, namespace, name).ok_or(INVALIDATED)?;
    if deleted_before_leeway(&stored, now) {
        return Err(INVALIDATED.into());
    }
    let uid = uid_of(&stored);
    if uid != claimed {
        return Err(format!(
            "{word} UID ({uid}) does not match service account {word} ref claim ({claimed})"
        ));
    }
    Ok(())
}

/// A core (`v1`) object by plural, namespace (empty for cluster-scoped) and name.
pub(crate) fn lookup(state: &State, plural: &str, namespace: &str, name: &str) -> Option<Value> {
    let def = state.registry.get("", "v1", plural)?;
    let key = (namespace.to_string(), name.to_string());
    state
        .store
        .get(&def.key(), &key)
        .map(|stored| (*stored.value).clone())
}

/// The object's `metadata.uid` (empty when it has none).
pub(crate) fn uid_of(object: &Value) -> String {
    object["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Whether the object was marked deleted more than the leeway ago (a pod in graceful deletion
/// keeps its tokens for a minute).
fn deleted_before_leeway(object: &Value, now: Timestamp) -> bool {
    object["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_some_and(|at| at.as_second() < now.as_second() - LEEWAY_SECONDS)
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
