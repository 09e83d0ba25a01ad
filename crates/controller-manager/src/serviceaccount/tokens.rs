//! `serviceaccount-token-controller`: fills Secrets of type
//! `kubernetes.io/service-account-token` and deletes them with their ServiceAccount.
//! Mirrors `pkg/controller/serviceaccount/tokens_controller.go` (`syncSecret`,
//! `generateTokenIfNeeded`, `syncServiceAccount`).
//!
//! A Secret annotated `kubernetes.io/service-account.name: <sa>` gets `token`, `namespace` and,
//! when the cluster's CA is known, `ca.crt`, and the annotation
//! `kubernetes.io/service-account.uid`. A Secret whose ServiceAccount does not exist (or has
//! another uid than the annotation names) is deleted.
//!
//! # Differences from kube-controller-manager
//! The real controller signs a legacy JWT itself (issuer `kubernetes/serviceaccount`, naming the
//! Secret). Here the token comes from the server's TokenRequest API with a ten-year expiry: a
//! bound-token JWT, which the test server accepts while the ServiceAccount exists with the same
//! uid (`kubegen-testserver`'s `storage/tokens.rs`), but which deleting the Secret does not revoke.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kubegen_cache::{HandlerFns, Lister};
use kubegen_client::{Client, CreateOptions, DeleteOptions, ResourceClient, UpdateOptions};
use serde_json::{Value, json};

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::worker::{self, Next};

const TYPE: &str = "kubernetes.io/service-account-token";
const NAME: &str = "kubernetes.io/service-account.name";
const UID: &str = "kubernetes.io/service-account.uid";
/// Ten years: "does not expire" for a test.
const EXPIRATION_SECONDS: i64 = 10 * 365 * 24 * 3600;

fn is_token(secret: &Secret) -> bool {
    secret.type_.as_deref() == Some(TYPE)
}

fn key(secret: &Secret) -> String {
    let meta = &secret.metadata;
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Registers the handlers; the runner works the Secret queue until the manager stops.
pub(crate) fn start(context: &Context) -> Runner {
    let secrets = context.factory.informer::<Secret>();
    let accounts = context.factory.informer::<ServiceAccount>();
    let queue = worker::queue::<String>("serviceaccount_tokens_secret");
    let (on_add, on_update) = (queue.clone(), queue.clone());
    let _ = secrets.add_event_handler(
        HandlerFns::new()
            .on_add(move |s: &Arc<Secret>, _| {
                if is_token(s) {
                    on_add.add(key(s));
                }
            })
            .on_update(move |_, s: &Arc<Secret>| {
                if is_token(s) {
                    on_update.add(key(s));
                }
            }),
    );
    let secret_lister = secrets.lister();
    let (on_delete, by_account) = (queue.clone(), secret_lister.clone());
    let _ = accounts.add_event_handler(HandlerFns::new().on_delete(
        move |deleted: &kubegen_cache::DeletedObject<ServiceAccount>| {
            let account = deleted.object();
            let namespace = account.metadata.namespace.as_deref().unwrap_or_default();
            for secret in by_account.namespaced(namespace).list(&Default::default()) {
                let annotations = secret.metadata.annotations.as_ref();
                if is_token(&secret)
                    && annotations.and_then(|a| a.get(NAME)) == account.metadata.name.as_ref()
                {
                    on_delete.add(key(&secret));
                }
            }
        },
    ));
    let accounts = accounts.lister();
    let (client, ca) = (context.client.clone(), context.options.root_ca_pem.clone());
    let workers = context.options.workers_or(5);
    let stop = context.stop.clone();
    Box::pin(async move {
        let sync = move |key: String| {
            let (client, secrets, accounts, ca) = (
                client.clone(),
                secret_lister.clone(),
                accounts.clone(),
                ca.clone(),
            );
            async move { sync(&client, &secrets, &accounts, ca.as_deref(), &key).await }
        };
        let workers = worker::spawn(queue, workers, worker::Retries::Forever, sync);
        stopped(stop).await;
        workers.stop().await;
    })
}

/// `syncSecret` for `namespace/name`.
async fn sync(
    client: &Client,
    secrets: &Lister<Secret>,
    accounts: &Lister<ServiceAccount>,
    ca: Option<&str>,
    key: &str,
) -> Result<Next> {
    let Some(secret) = secrets.get_by_key(key) else {
        return Ok(Next::Done);
    };
    let namespace = secret.metadata.namespace.clone().unwrap_or_default();
    let annotations = secret.metadata.annotations.clone().unwrap_or_default();
    let Some(account_name) = annotations.get(NAME) else {
        return Ok(Next::Done);
    };
    let account = accounts.get(Some(&namespace), account_name);
    let uid_matches = |account: &ServiceAccount| {
        annotations
            .get(UID)
            .is_none_or(|uid| account.metadata.uid.as_ref() == Some(uid))
    };
    let api = ResourceClient::<Secret>::namespaced(client.clone(), &namespace);
    let name = secret.metadata.name.clone().unwrap_or_default();
    let Some(account) = account.filter(|a| uid_matches(a)) else {
        return delete_secret(&api, &secret).await;
    };
    let data = secret.data.clone().unwrap_or_default();
    let ca_missing =
        ca.is_some_and(|pem| data.get("ca.crt").map(|b| b.0.as_slice()) != Some(pem.as_bytes()));
    let complete = data.contains_key("token")
        && data.get("namespace").map(|b| b.0.as_slice()) == Some(namespace.as_bytes())
        && annotations.contains_key(UID)
        && !ca_missing;
    if complete {
        return Ok(Next::Done);
    }
    let token = issue(client, &namespace, account_name).await?;
    let mut next = (*secret).clone();
    let mut data: BTreeMap<String, ByteString> = data;
    data.insert("token".into(), ByteString(token.into_bytes()));
    data.insert(
        "namespace".into(),
        ByteString(namespace.clone().into_bytes()),
    );
    if let Some(pem) = ca {
        data.insert("ca.crt".into(), ByteString(pem.as_bytes().to_vec()));
    }
    next.data = Some(data);
    let uid = account.metadata.uid.clone().unwrap_or_default();
    next.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(UID.into(), uid);
    match api.update(&next, &UpdateOptions::default()).await {
        Ok(_) => Ok(Next::Done),
        Err(e) if e.is_not_found() => Ok(Next::Done),
        Err(e) => Err(request(format!("populate token secret {namespace}/{name}"))(e)),
    }
}

/// A token for `namespace/account` from the TokenRequest API.
async fn issue(client: &Client, namespace: &str, account: &str) -> Result<String> {
    let accounts = ResourceClient::<ServiceAccount>::namespaced(client.clone(), namespace);
    let body = json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": EXPIRATION_SECONDS},
    });
    let issued: Value = accounts
        .create_subresource(account, "token", &body, &CreateOptions::default())
        .await
        .map_err(request(format!(
            "request a token for {namespace}/{account}"
        )))?;
    match issued.pointer("/status/token").and_then(Value::as_str) {
        Some(token) => Ok(token.to_owned()),
        None => Err(crate::Error::InvalidObject {
            object: format!("TokenRequest for {namespace}/{account}"),
            reason: "the answer holds no status.token".into(),
        }),
    }
}

async fn delete_secret(api: &ResourceClient<Secret>, secret: &Secret) -> Result<Next> {
    let name = secret.metadata.name.clone().unwrap_or_default();
    let options = DeleteOptions::default().preconditions(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions {
            uid: secret.metadata.uid.clone(),
            resource_version: None,
        },
    );
    match api.delete(&name, &options).await {
        Ok(()) => Ok(Next::Done),
        Err(e) if e.is_not_found() || e.is_conflict() => Ok(Next::Done),
        Err(e) => Err(request(format!("delete token secret {name}"))(e)),
    }
}
