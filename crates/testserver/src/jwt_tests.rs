use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use super::{SignatureError, SigningKey, unverified_claims};

/// A P-256 key made by `openssl ecparam -genkey` + `openssl pkcs8 -topk8 -nocrypt`, and what
/// openssl says of its public key: the SHA-256 of its PKIX DER (kube's `keyIDFromPublicKey`),
/// and the point's coordinates.
const PKCS8: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZBE9CDqKYz3Qwek84MI8BFGi+MFYCvvve8Kzp0yVhN6hRANCAATA/wsmz16/g9axKkRz0k4f0WzLMvgIzs8YEhmbA6jaIEu4cNyjZE1dkasz4i1tiGPogIv5AafeLK1TMCKAKZS+";
const KID: &str = "vSKipOHiBaTMKNZBuZxyvg9bbZnqgar6vMOG7zIyYEo";
const X: &str = "wP8LJs9ev4PWsSpEc9JOH9FsyzL4CM7PGBIZmwOo2iA";
const Y: &str = "S7hw3KNkTV2RqzPiLW2IY-iAi_kBp94srVMwIoAplL4";

fn fixed_key() -> SigningKey {
    SigningKey::from_pkcs8(&STANDARD.decode(PKCS8).unwrap()).unwrap()
}

fn part(token: &str, i: usize) -> Value {
    let text = token.split('.').nth(i).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text).unwrap()).unwrap()
}

#[test]
fn key_id_is_the_hash_of_the_pkix_public_key_as_kube_apiserver_derives_it() {
    assert_eq!(fixed_key().kid(), KID);
}

#[test]
fn jwk_lists_the_curve_point_in_go_jose_field_order() {
    let jwk = serde_json::to_string(&fixed_key().jwk()).unwrap();
    assert_eq!(
        jwk,
        format!(
            r#"{{"use":"sig","kty":"EC","kid":"{KID}","crv":"P-256","alg":"ES256","x":"{X}","y":"{Y}"}}"#
        )
    );
}

#[test]
fn a_signed_token_names_its_key_and_verifies() {
    let key = fixed_key();
    let claims = json!({"aud": ["a"], "sub": "s"});
    let token = key.sign(&claims).unwrap();
    assert_eq!(part(&token, 0), json!({"alg": "ES256", "kid": KID}));
    assert_eq!(key.verify(&token), Ok(claims.clone()));
    assert_eq!(unverified_claims(&token), Some(claims));
}

#[test]
fn a_generated_key_survives_its_pkcs8_encoding() {
    let key = SigningKey::generate().unwrap();
    let again = SigningKey::from_pkcs8(key.pkcs8()).unwrap();
    assert_eq!(key.kid(), again.kid());
    let token = key.sign(&json!({"x": 1})).unwrap();
    assert_eq!(again.verify(&token), Ok(json!({"x": 1})));
}

#[test]
fn tampered_foreign_and_malformed_tokens_are_refused_with_the_real_reasons() {
    let key = fixed_key();
    let token = key.sign(&json!({"sub": "s"})).unwrap();
    let (signed, _) = token.rsplit_once('.').unwrap();
    let forged_payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"admin"}"#);
    let header = signed.split('.').next().unwrap();
    let tampered = format!(
        "{header}.{forged_payload}.{}",
        token.rsplit('.').next().unwrap()
    );
    assert_eq!(key.verify(&tampered), Err(SignatureError::BadSignature));

    let other = SigningKey::generate()
        .unwrap()
        .sign(&json!({"sub": "s"}))
        .unwrap();
    assert_eq!(key.verify(&other), Err(SignatureError::UnknownKey));
    assert_eq!(
        SignatureError::UnknownKey.to_string(),
        "invalid signature, no keys found"
    );

    for garbage in ["", "hello", "abc.def.ghi", "a.b.c.d", "...", "e30.e30.%%%"] {
        assert_eq!(
            key.verify(garbage),
            Err(SignatureError::Malformed),
            "{garbage}"
        );
    }
    assert_eq!(unverified_claims("abc.def.ghi"), None);
}

#[test]
fn a_token_without_kid_is_checked_against_the_key() {
    let key = fixed_key();
    let token = key.sign(&json!({"sub": "s"})).unwrap();
    let mut parts = token.splitn(2, '.');
    let _ = parts.next();
    let rest = parts.next().unwrap();
    let no_kid = format!("{}.{rest}", URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256"}"#));
    // The header is part of what was signed, so a changed header no longer verifies.
    assert_eq!(key.verify(&no_kid), Err(SignatureError::BadSignature));
}
