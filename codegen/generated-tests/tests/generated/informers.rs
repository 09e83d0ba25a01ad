//! Typed informers and listers from the generated factory, over the fake clientset's server.

use std::time::Duration;

use kubegen_api::police::v1beta1::{ImageRule, WhiteList, WhiteListSpec};
use kubegen_cache::FactoryOptions;
use kubegen_client::CreateOptions;
use kubegen_clientset::fake;
use kubegen_informers::SharedInformerFactory;

fn white_list(name: &str) -> WhiteList {
    WhiteList {
        metadata: kube_core::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("team-a".into()),
            ..Default::default()
        },
        spec: WhiteListSpec {
            images: vec![ImageRule {
                name: "nginx".into(),
                tags: vec!["1.27".into()],
            }],
            allow_none: None,
        },
        status: None,
    }
}

#[tokio::test(start_paused = true)]
async fn typed_lister_sees_listed_and_watched_objects() {
    let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
    let seed = serde_json::to_value(white_list("seeded")).expect("serializes");
    let cs = fake::Clientset::new([namespace, seed]).expect("fake");
    let factory = SharedInformerFactory::new(cs.client().clone(), FactoryOptions::default());
    let white_lists = factory.police_v1beta1().white_lists();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .expect("synced");
    let lister = white_lists.lister();
    assert!(lister.white_lists("team-a").get("seeded").is_some());
    assert!(lister.get_by_key("team-a/seeded").is_some());

    let client = cs.police_v1beta1().white_lists("team-a");
    client
        .create(&white_list("added"), &CreateOptions::default())
        .await
        .expect("create");
    let mut seen = false;
    for _ in 0..500 {
        if lister.white_lists("team-a").get("added").is_some() {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(seen, "the watch delivered the new object to the cache");
    let everything = lister.list(&kube_core::Selector::default());
    assert_eq!(everything.len(), 2);
    factory.shutdown().await;
}
