//! The server's ServiceAccount token signing key and the compact JWS (JSON Web Signature) it
//! writes and checks: what kube-apiserver's `--service-account-signing-key-file` and
//! `--service-account-key-file` are, and what go-jose does for it in `pkg/serviceaccount/jwt.go`.
//!
//! # Why ES256, and why no JWT crate
//! kube-apiserver signs with whatever key it is given: RS256 for an RSA key (the usual setup, and
//! the running v1.36 reference), ES256 for a P-256 key. `ring`, already in the tree through
//! rustls, generates and uses P-256 keys but cannot generate RSA keys, so the test server
//! generates an ECDSA P-256 key and signs ES256, a setup the real server supports as well.
//! `jsonwebtoken` 10 no longer offers a ring backend (only aws-lc-rs, which we keep out of the
//! tree, or RustCrypto, a second crypto stack), and the kube checks (60 s leeway, the audience
//! rule, its error wording) are the real server's own, not a generic validator's. One algorithm
//! in compact serialisation is a header, a payload and a signature, so this module writes it
//! with `ring` and `base64` directly.
//!
//! # The key id
//! `kid` is kube-apiserver's `keyIDFromPublicKey`: the unpadded base64url of the SHA-256 of the
//! public key's PKIX (`SubjectPublicKeyInfo`) DER encoding, so relying parties can pick the key
//! from the JWKS without it revealing anything.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde::Serialize;
use serde_json::Value;

/// The DER prefix of a P-256 `SubjectPublicKeyInfo` (algorithm id-ecPublicKey, curve prime256v1,
/// a 66-byte bit string), followed by the 65-byte uncompressed point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// The JWS `alg` of every token this server signs.
pub(crate) const ALGORITHM: &str = "ES256";

/// Why a token's signature is not accepted. The messages are the real server's (go-jose's and
/// `jwt.go`'s), as a TokenReview shows them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SignatureError {
    /// Not three base64url parts with a JSON header and payload: not a JWT at all.
    Malformed,
    /// The header names a key id this server does not have.
    UnknownKey,
    /// The signature does not verify with the server's key (or the algorithm is not ES256).
    BadSignature,
}

impl std::fmt::Display for SignatureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SignatureError::Malformed => "invalid bearer token",
            SignatureError::UnknownKey => "invalid signature, no keys found",
            SignatureError::BadSignature => "go-jose/go-jose: error in cryptographic primitive",
        })
    }
}

/// An ECDSA P-256 key pair that signs and verifies ServiceAccount tokens.
///
/// # Invariants
/// `kid` is derived from `pair`'s public key; `pkcs8` is `pair`'s encoding.
pub(crate) struct SigningKey {
    pair: EcdsaKeyPair,
    /// The PKCS#8 v1 DER the pair was made from, what the data directory keeps.
    pkcs8: Vec<u8>,
    kid: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// The header of a token; only what this server writes and reads.
#[derive(Serialize, serde::Deserialize)]
struct Header {
    alg: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kid: Option<String>,
}

impl SigningKey {
    /// A new random key.
    ///
    /// # Errors
    /// The system's random source failed (a message for [`crate::Error`]).
    pub(crate) fn generate() -> Result<SigningKey, String> {
        let rng = SystemRandom::new();
        let document = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| "cannot generate a P-256 key".to_string())?;
        SigningKey::from_pkcs8(document.as_ref())
    }

    /// The key a PKCS#8 DER document holds (what [`SigningKey::pkcs8`] gave).
    ///
    /// # Errors
    /// The document is not a P-256 private key.
    pub(crate) fn from_pkcs8(der: &[u8]) -> Result<SigningKey, String> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(|e| format!("not a PKCS#8 P-256 private key: {e}"))?;
        let kid = key_id(pair.public_key().as_ref());
        Ok(SigningKey {
            pair,
            pkcs8: der.to_vec(),
            kid,
        })
    }

    /// The PKCS#8 DER encoding of the private key.
    pub(crate) fn pkcs8(&self) -> &[u8] {
        &self.pkcs8
    }

    /// The key id tokens name in their header and the JWKS lists.
    #[cfg(test)]
    pub(crate) fn kid(&self) -> &str {
        &self.kid
    }

    /// `claims` signed as a compact JWS with header `{"alg":"ES256","kid":…}`.
    ///
    /// # Errors
    /// Signing failed (the random source), which a caller reports as a 500.
    pub(crate) fn sign(&self, claims: &Value) -> Result<String, String> {
        let header = Header {
            alg: ALGORITHM.into(),
            kid: Some(self.kid.clone()),
        };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let payload = serde_json::to_vec(claims).map_err(|e| e.to_string())?;
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(payload)
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| "cannot sign the token".to_string())?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }

    /// The payload of `token` once its signature verifies with this key.
    ///
    /// # Errors
    /// [`SignatureError`], in the order go-jose finds them: the shape, the key id, the signature.
    pub(crate) fn verify(&self, token: &str) -> Result<Value, SignatureError> {
        let (header, payload, signature) = split(token)?;
        let header: Header = decode_json(header)?;
        if header.kid.as_deref().is_some_and(|kid| kid != self.kid) {
            return Err(SignatureError::UnknownKey);
        }
        let claims: Value = decode_json(payload)?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| SignatureError::Malformed)?;
        if header.alg != ALGORITHM {
            return Err(SignatureError::BadSignature);
        }
        let signed = &token[..header_and_payload_len(token)];
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, self.pair.public_key().as_ref())
            .verify(signed.as_bytes(), &signature)
            .map_err(|_| SignatureError::BadSignature)?;
        Ok(claims)
    }

    /// The public key as a JWK, fields in go-jose's order (`use`, `kty`, `kid`, `crv`, `alg`, `x`,
    /// `y`), as `/openid/v1/jwks` lists it.
    pub(crate) fn jwk(&self) -> Jwk {
        let point = self.pair.public_key().as_ref();
        // An uncompressed point: 0x04, then 32 bytes of x and 32 of y.
        let x = point.get(1..33).unwrap_or_default();
        let y = point.get(33..65).unwrap_or_default();
        Jwk {
            key_use: "sig",
            kty: "EC",
            kid: self.kid.clone(),
            crv: "P-256",
            alg: ALGORITHM,
            x: URL_SAFE_NO_PAD.encode(x),
            y: URL_SAFE_NO_PAD.encode(y),
        }
    }
}

/// One entry of a JWKS.
#[derive(Serialize, Debug)]
pub(crate) struct Jwk {
    #[serde(rename = "use")]
    key_use: &'static str,
    kty: &'static str,
    kid: String,
    crv: &'static str,
    alg: &'static str,
    x: String,
    y: String,
}

/// kube-apiserver's `keyIDFromPublicKey` for an uncompressed P-256 point.
fn key_id(point: &[u8]) -> String {
    let mut spki = P256_SPKI_PREFIX.to_vec();
    spki.extend_from_slice(point);
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &spki))
}

fn split(token: &str) -> Result<(&str, &str, &str), SignatureError> {
    let mut parts = token.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(h), Some(p), Some(s), None) => Ok((h, p, s)),
        _ => Err(SignatureError::Malformed),
    }
}

/// The length of `header.payload` in a token [`split`] accepted.
fn header_and_payload_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(token.len())
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, SignatureError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| SignatureError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| SignatureError::Malformed)
}

/// The payload of a token, unverified: what kube-apiserver peeks at to see whether a token is
/// its issuer's before it spends a signature check on it.
pub(crate) fn unverified_claims(token: &str) -> Option<Value> {
    let (_, payload, _) = split(token).ok()?;
    decode_json(payload).ok()
}

#[cfg(test)]
#[path = "jwt_tests.rs"]
mod tests;
