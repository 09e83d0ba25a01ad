//! network-controller: every change to a Network reaches the handler through the reflector, the
//! DeltaFIFO and the indexer, in that order, and the trace shows exactly those steps.

use kubegen_examples::network::trace::{PipelineTrace, Stage, TraceOutput};
use kubegen_examples::network::{self, NetworkController};
use tracing_subscriber::layer::SubscriberExt as _;

use crate::harness::{Env, on_both_targets};

on_both_targets!(
    each_change_is_traced_through_the_whole_pipeline,
    each_change_is_traced_through_the_whole_pipeline_on_testserver,
    each_change_is_traced_through_the_whole_pipeline_on_cluster
);

async fn each_change_is_traced_through_the_whole_pipeline(env: Env) {
    let trace = PipelineTrace::new(TraceOutput::Quiet);
    // A current-thread runtime: every informer task runs on this thread, under this subscriber.
    let _subscriber =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(trace.layer()));
    let ns = env.namespace("network").await;
    let controller =
        NetworkController::start(env.client().clone(), Some(ns.clone()), trace.clone())
            .await
            .unwrap();

    network::tour(env.client(), &trace, &ns, "tour-net")
        .await
        .unwrap();

    let steps: Vec<(Stage, String)> = trace
        .steps_of(&format!("{ns}/tour-net"))
        .into_iter()
        .map(|s| {
            (
                s.stage,
                s.what.split(" rv ").next().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expected = [
        (Stage::Reflector, "WATCH Added"),
        (Stage::DeltaFifo, "queued Added"),
        (Stage::Indexer, "popped, cache applies Added"),
        (Stage::Handler, "on_add cidr 10.0.0.0/24, gateway 10.0.0.1"),
        (Stage::Reflector, "WATCH Modified"),
        (Stage::DeltaFifo, "queued Updated"),
        (Stage::Indexer, "popped, cache applies Updated"),
        (
            Stage::Handler,
            "on_update cidr 10.0.0.0/24, gateway 10.0.0.1 -> cidr 10.0.0.0/24, gateway 10.0.0.254",
        ),
        (Stage::Reflector, "WATCH Deleted"),
        (Stage::DeltaFifo, "queued Deleted"),
        (Stage::Indexer, "popped, cache applies Deleted"),
        (
            Stage::Handler,
            "on_delete cidr 10.0.0.0/24, gateway 10.0.0.254",
        ),
    ];
    let expected: Vec<(Stage, String)> = expected
        .into_iter()
        .map(|(stage, what)| (stage, what.to_owned()))
        .collect();
    assert_eq!(steps, expected);
    controller.shutdown().await;
    env.cleanup(&ns).await;
}
