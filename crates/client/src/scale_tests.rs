use k8s_openapi::api::apps::v1::Deployment;

use super::*;
use crate::client::Client;
use crate::config::Config;

#[tokio::test]
async fn an_update_without_a_name_fails_before_sending() {
    let client = Client::new(Config::new("http://127.0.0.1:9".parse().unwrap())).unwrap();
    let deployments = ResourceClient::<Deployment>::namespaced(client, "team");
    let err = deployments
        .update_scale(&Scale::default(), &UpdateOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "building request: update_scale in /apis/apps/v1/namespaces/team/deployments: the Scale has no metadata.name"
    );
}
