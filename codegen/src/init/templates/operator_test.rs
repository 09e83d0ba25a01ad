//! The {{name}} end to end on an API server inside the test process: install the CRD, run the
//! manager, create a {{kind}}, and wait for the operator to report it `Ready`.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{CreateOptions, GetOptions};
use kubegen_runtime::ManagerOptions;

use {{prefix_ident}}_api::{{module}}::{{version}}::{{{kind}}, {{kind}}Spec};
use {{prefix_ident}}_clientset::Clientset;

/// How long the operator may take to mark a new {{kind}} ready.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_new_{{kind_snake}}_becomes_ready() -> anyhow::Result<()> {
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    kubegen_runtime::crds::install(&client, include_str!("../../deploy/crds.yaml")).await?;
    let manager = {{crate}}::manager(client.clone(), ManagerOptions::default())?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.run(async {
        let _ = stopped.await;
    }));

    let {{accessor}} = Clientset::new(client).{{group_version}}().{{accessor}}({{test_namespace}});
    let {{kind_snake}} = {{kind}} {
        metadata: ObjectMeta {
            name: Some("hello".to_owned()),
            ..ObjectMeta::default()
        },
        spec: {{kind}}Spec {
            message: "Hello, world".to_owned(),
        },
        status: None,
    };
    let create = CreateOptions::default();
    {{accessor}}.create(&{{kind_snake}}, &create).await?;

    // Polls the API server (real I/O, so real time) until the operator has written the status.
    let ready = tokio::time::timeout(READY_TIMEOUT, async {
        loop {
            let current = {{accessor}}.get("hello", &GetOptions::default()).await?;
            let status = current.status.clone().unwrap_or_default();
            let is_ready = status
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            if is_ready {
                return Ok::<_, kubegen_client::Error>(current);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await??;
    let status = ready.status.unwrap_or_default();
    assert_eq!(status.observed_generation, ready.metadata.generation);

    let _ = stop.send(());
    running.await??;
    Ok(())
}
