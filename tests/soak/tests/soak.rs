//! The reliability soak (see the crate docs): ~30 s in CI, `KUBEGEN_SOAK_SECS=600` for the long run.

use kubegen_soak::{SoakConfig, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_and_workqueue_converge_exactly_under_churn_and_faults() {
    let config = SoakConfig::from_env();
    let report = run(&config).await;
    println!("{report}");
    let failures = report.failures();
    assert!(
        failures.is_empty(),
        "soak failed:\n{}\n{report}",
        failures.join("\n")
    );
}
