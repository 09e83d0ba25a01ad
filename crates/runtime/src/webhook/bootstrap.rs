//! A self-signed certificate for the webhook server when nothing else provides one (a
//! developer's cluster, a single-replica install without cert-manager), and the injection of its
//! CA into the configurations that call the server. What kubebuilder leaves to cert-manager's
//! CA injector (`cert-manager.io/inject-ca-from`) and kube-rs to openssl commands in a README.
//!
//! # What [`SelfSigned::ensure`] does
//! 1. If the certificate directory already holds `tls.crt`, `tls.key` and `ca.crt` (this process
//!    restarted, the `emptyDir` kept them), they are kept. Otherwise a CA and a serving
//!    certificate for the given DNS names and IP addresses are generated (rcgen, ECDSA P-256,
//!    one year) and written there; the key is written with mode 0600.
//! 2. The CA (`ca.crt`) is added to `caBundle` of every webhook of each listed
//!    `ValidatingWebhookConfiguration` / `MutatingWebhookConfiguration`, and of a CRD's conversion
//!    webhook (GET, set, PUT; a conflict is retried on a fresh GET). Discovery picks the API
//!    version (`v1`, else `v1beta1` for servers before 1.16).
//!
//! # Several replicas
//! Each replica generates its own CA. So that the API server trusts every replica behind the
//! Service, a CA is *added* to the bundle, which keeps the [`KEPT_CAS`] most recently added
//! distinct CAs (enough for two replicas plus a rolling update's surge); older ones, of
//! replicas long gone, drop out. cert-manager (one certificate for all replicas) avoids the
//! question entirely; the controller README compares both.

use std::path::Path;

use base64::Engine as _;
use bytes::Bytes;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup;
use kubegen_client::Client;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use serde_json::Value;

use crate::error::Error;

/// Which object's `caBundle` the bootstrap fills in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaBundleTarget {
    /// Every webhook of the `ValidatingWebhookConfiguration` with this name.
    Validating(String),
    /// Every webhook of the `MutatingWebhookConfiguration` with this name.
    Mutating(String),
    /// The conversion webhook of the `CustomResourceDefinition` with this name.
    Crd(String),
}

impl CaBundleTarget {
    /// The API group, the collection's resource, and the object's name.
    fn parts(&self) -> (&'static str, &'static str, &str) {
        match self {
            CaBundleTarget::Validating(name) => (
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                name,
            ),
            CaBundleTarget::Mutating(name) => (
                "admissionregistration.k8s.io",
                "mutatingwebhookconfigurations",
                name,
            ),
            CaBundleTarget::Crd(name) => {
                ("apiextensions.k8s.io", "customresourcedefinitions", name)
            }
        }
    }
}

/// A self-signed bootstrap: the names the serving certificate is for, and where its CA goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelfSigned {
    /// DNS names of the certificate: the Service's (`<svc>.<namespace>.svc`), `localhost`.
    pub dns_names: Vec<String>,
    /// IP addresses of the certificate (`127.0.0.1` for a webhook reached by `url`).
    pub ip_addresses: Vec<std::net::IpAddr>,
    /// Objects whose `caBundle` gets the CA.
    pub targets: Vec<CaBundleTarget>,
}

/// The files of a certificate directory.
pub(crate) const CERT_FILE: &str = "tls.crt";
pub(crate) const KEY_FILE: &str = "tls.key";
pub(crate) const CA_FILE: &str = "ca.crt";

impl SelfSigned {
    /// Makes sure `dir` holds a certificate (generating one if needed) and writes its CA into
    /// every target; returns the CA (PEM).
    ///
    /// # Errors
    /// [`Error::CertificateUnreadable`] when the files cannot be written or read,
    /// [`Error::CaBundleInjectionFailed`] naming the object that could not be updated.
    pub async fn ensure(&self, client: &Client, dir: &Path) -> Result<String, Error> {
        let ca = self.files(dir)?;
        for target in &self.targets {
            inject(client, target, &ca).await?;
        }
        Ok(ca)
    }

    /// The CA of the certificate in `dir`, generated and written first if absent.
    ///
    /// # Errors
    /// [`Error::CertificateUnreadable`] naming the file.
    pub fn files(&self, dir: &Path) -> Result<String, Error> {
        let ca_path = dir.join(CA_FILE);
        let present = [CERT_FILE, KEY_FILE, CA_FILE]
            .iter()
            .all(|file| dir.join(file).is_file());
        if !present {
            let (cert, key, ca) =
                self.generate()
                    .map_err(|reason| Error::CertificateUnreadable {
                        file: dir.to_owned(),
                        reason,
                    })?;
            std::fs::create_dir_all(dir).map_err(|e| unwritable(dir, &e))?;
            write(&dir.join(KEY_FILE), &key, 0o600)?;
            write(&dir.join(CERT_FILE), &cert, 0o644)?;
            write(&ca_path, &ca, 0o644)?;
            tracing::info!(dir = %dir.display(), names = ?self.dns_names, "generated a self-signed webhook certificate");
        }
        std::fs::read_to_string(&ca_path).map_err(|e| unwritable(&ca_path, &e))
    }

    /// A CA and a serving certificate signed by it: (chain PEM, key PEM, CA PEM).
    fn generate(&self) -> Result<(String, String, String), String> {
        let failed = |e: rcgen::Error| e.to_string();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kubegen-webhook-ca");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(failed)?)
            .map_err(failed)?;
        let mut names = self.dns_names.clone();
        names.extend(self.ip_addresses.iter().map(ToString::to_string));
        let mut params = CertificateParams::new(names).map_err(failed)?;
        let common_name = self
            .dns_names
            .first()
            .map_or("kubegen-webhook", String::as_str);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().map_err(failed)?;
        let cert = params.signed_by(&key, &ca).map_err(failed)?;
        Ok((cert.pem(), key.serialize_pem(), ca.pem()))
    }
}

fn unwritable(file: &Path, error: &std::io::Error) -> Error {
    Error::CertificateUnreadable {
        file: file.to_owned(),
        reason: error.to_string(),
    }
}

fn write(path: &Path, text: &str, mode: u32) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, text).map_err(|e| unwritable(path, &e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| unwritable(path, &e))
}

/// How many CAs a bundle keeps (the most recently added).
pub const KEPT_CAS: usize = 4;

/// How often a conflicting PUT is retried on a fresh GET.
const ATTEMPTS: usize = 3;

/// Writes `ca` (PEM) into `target`'s `caBundle` fields.
async fn inject(client: &Client, target: &CaBundleTarget, ca: &str) -> Result<(), Error> {
    let (group, resource, name) = target.parts();
    let failed = |reason: String| Error::CaBundleInjectionFailed {
        object: format!("{resource}/{name}"),
        reason,
    };
    let version = preferred_version(client, group).await.map_err(failed)?;
    let path = format!("/apis/{group}/{version}/{resource}/{name}");
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        let request = json_request(http::Method::GET, &path, Bytes::new()).map_err(failed)?;
        let mut object: Value = client
            .request_json(request)
            .await
            .map_err(|e| failed(e.to_string()))?;
        set_ca_bundle(&mut object, ca);
        let body = serde_json::to_vec(&object).map_err(|e| failed(e.to_string()))?;
        let request = json_request(http::Method::PUT, &path, Bytes::from(body)).map_err(failed)?;
        match client.request_json::<Value>(request).await {
            Ok(_) => {
                tracing::info!(object = %format!("{resource}/{name}"), "caBundle injected");
                return Ok(());
            }
            Err(error) if error.is_conflict() => last = error.to_string(),
            Err(error) => return Err(failed(error.to_string())),
        }
    }
    Err(failed(last))
}

/// Adds `ca` (PEM) to `caBundle` wherever a configuration or CRD of any served version keeps
/// it, keeping the last [`KEPT_CAS`] distinct CAs.
pub(crate) fn set_ca_bundle(object: &mut Value, ca: &str) {
    let add = |config: &mut serde_json::Map<String, Value>| {
        let old = config.get("caBundle").and_then(Value::as_str).unwrap_or("");
        let bundle = added(old, ca);
        config.insert("caBundle".to_owned(), Value::String(bundle));
    };
    if let Some(webhooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) {
        for webhook in webhooks {
            if let Some(config) = webhook
                .get_mut("clientConfig")
                .and_then(Value::as_object_mut)
            {
                add(config);
            }
        }
    }
    // apiextensions.k8s.io/v1 and v1beta1 spell the CRD's client config differently.
    for pointer in [
        "/spec/conversion/webhook/clientConfig",
        "/spec/conversion/webhookClientConfig",
    ] {
        if let Some(config) = object.pointer_mut(pointer).and_then(Value::as_object_mut) {
            add(config);
        }
    }
}

/// The base64 bundle `old` (base64 of PEM CAs; anything undecodable is dropped) with `ca` added
/// last, keeping the last [`KEPT_CAS`] distinct CAs.
fn added(old: &str, ca: &str) -> String {
    let engine = base64::engine::general_purpose::STANDARD;
    let old = engine
        .decode(old)
        .ok()
        .and_then(|pem| String::from_utf8(pem).ok())
        .unwrap_or_default();
    const END: &str = "-----END CERTIFICATE-----";
    let mut cas: Vec<String> = old
        .split_inclusive(END)
        .map(str::trim)
        .filter(|block| block.starts_with("-----BEGIN CERTIFICATE-----") && block.ends_with(END))
        .map(str::to_owned)
        .collect();
    let ca = ca.trim().to_owned();
    cas.retain(|kept| *kept != ca);
    cas.push(ca);
    let skip = cas.len().saturating_sub(KEPT_CAS);
    let mut pem = cas[skip..].join("\n");
    pem.push('\n');
    engine.encode(pem)
}

/// `v1` when the server serves it for `group`, else `v1beta1`.
async fn preferred_version(client: &Client, group: &str) -> Result<&'static str, String> {
    let path = format!("/apis/{group}");
    let request = json_request(http::Method::GET, &path, Bytes::new())?;
    let served: APIGroup = client
        .request_json(request)
        .await
        .map_err(|e| format!("discovery of {path}: {e}"))?;
    let has = |v: &str| served.versions.iter().any(|s| s.version == v);
    match (has("v1"), has("v1beta1")) {
        (true, _) => Ok("v1"),
        (false, true) => Ok("v1beta1"),
        (false, false) => Err(format!("{path} serves neither v1 nor v1beta1")),
    }
}

fn json_request(
    method: http::Method,
    path: &str,
    body: Bytes,
) -> Result<http::Request<Bytes>, String> {
    http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
#[path = "bootstrap_tests.rs"]
mod tests;
