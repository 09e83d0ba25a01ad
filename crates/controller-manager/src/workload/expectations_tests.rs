use std::time::Duration;

use super::Expectations;

#[test]
fn unknown_key_is_satisfied() {
    assert!(Expectations::default().satisfied("ns/rs"));
}

#[tokio::test(start_paused = true)]
async fn creations_block_until_all_are_observed() {
    let e = Expectations::default();
    e.expect_creations("ns/rs", 2);
    assert!(!e.satisfied("ns/rs"));
    e.creation_observed("ns/rs");
    assert!(!e.satisfied("ns/rs"));
    e.creation_observed("ns/rs");
    assert!(e.satisfied("ns/rs"));
}

#[tokio::test(start_paused = true)]
async fn a_pod_deleted_twice_counts_once() {
    let e = Expectations::default();
    e.expect_deletions("ns/rs", vec!["ns/a".into(), "ns/b".into()]);
    e.deletion_observed("ns/rs", "ns/a");
    e.deletion_observed("ns/rs", "ns/a");
    assert!(!e.satisfied("ns/rs"));
    e.deletion_observed("ns/rs", "ns/b");
    assert!(e.satisfied("ns/rs"));
}

#[tokio::test(start_paused = true)]
async fn expectations_expire_after_five_minutes() {
    let e = Expectations::default();
    e.expect_creations("ns/rs", 1);
    tokio::time::advance(Duration::from_secs(300)).await;
    assert!(!e.satisfied("ns/rs"));
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(e.satisfied("ns/rs"));
}

#[tokio::test(start_paused = true)]
async fn delete_forgets_the_key() {
    let e = Expectations::default();
    e.expect_creations("ns/rs", 1);
    e.delete("ns/rs");
    assert!(e.satisfied("ns/rs"));
}

#[tokio::test(start_paused = true)]
async fn creates_and_deletions_expected_together_all_block() {
    let e = Expectations::default();
    e.expect("ns/ds", 1, vec!["ns/old".into()]);
    e.creation_observed("ns/ds");
    assert!(!e.satisfied("ns/ds"), "the deletion is still pending");
    e.deletion_observed("ns/ds", "ns/old");
    assert!(e.satisfied("ns/ds"));
}
