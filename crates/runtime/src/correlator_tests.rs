//! Every rule of the correlator, with explicit timestamps.

use k8s_openapi::api::core::v1::{EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).unwrap_or_else(|e| panic!("{e}"))
}

fn event(object: &str, reason: &str, message: &str, second: i64) -> Event {
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{object}.{second}")),
            namespace: Some("ns".into()),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            kind: Some("Deployment".into()),
            name: Some(object.into()),
            namespace: Some("ns".into()),
            ..ObjectReference::default()
        },
        reason: Some(reason.into()),
        message: Some(message.into()),
        type_: Some("Warning".into()),
        count: Some(1),
        first_timestamp: Some(Time(at(second))),
        last_timestamp: Some(Time(at(second))),
        source: Some(EventSource {
            component: Some("test".into()),
            host: None,
        }),
        ..Event::default()
    }
}

fn correlate(c: &mut Correlator, e: Event, second: i64) -> Correlated {
    c.correlate(e, at(second))
}

#[test]
fn a_repeated_event_patches_the_first_with_a_growing_count() {
    let mut c = Correlator::default();
    assert!(matches!(
        correlate(&mut c, event("web", "R", "m", 0), 0),
        Correlated::Create(_)
    ));
    let Correlated::Patch { name, event, .. } = correlate(&mut c, event("web", "R", "m", 5), 5)
    else {
        panic!("a repeat is a patch");
    };
    assert_eq!(name, "web.0", "the first object is patched");
    assert_eq!(event.count, Some(2));
    assert_eq!(event.first_timestamp, Some(Time(at(0))));
    assert_eq!(event.last_timestamp, Some(Time(at(5))));
}

#[test]
fn the_tenth_distinct_similar_message_is_combined_and_later_ones_patch_it() {
    let mut c = Correlator::default();
    for i in 0..9 {
        let out = correlate(&mut c, event("web", "R", &format!("m{i}"), i), i);
        assert!(
            matches!(out, Correlated::Create(_)),
            "message {i} stands alone"
        );
    }
    let Correlated::Create(combined) = correlate(&mut c, event("web", "R", "m9", 9), 9) else {
        panic!("the combined Event is created once");
    };
    assert_eq!(
        combined.message.as_deref(),
        Some("(combined from similar events): m9")
    );
    let Correlated::Patch { event, .. } = correlate(&mut c, event("web", "R", "m10", 10), 10)
    else {
        panic!("later similar Events patch the combined one");
    };
    assert_eq!(event.count, Some(2));
    assert_eq!(
        event.message.as_deref(),
        Some("(combined from similar events): m10")
    );
}

#[test]
fn another_reason_or_an_expired_group_is_not_combined() {
    let mut c = Correlator::default();
    for i in 0..9 {
        correlate(&mut c, event("web", "R", &format!("m{i}"), i), i);
    }
    let other = correlate(&mut c, event("web", "Other", "x", 9), 9);
    assert!(matches!(other, Correlated::Create(e) if e.message.as_deref() == Some("x")));
    // More than ten minutes after the group's last Event: the group starts over.
    let later = 9 + 601;
    let fresh = correlate(&mut c, event("web", "R", "m-new", later), later);
    assert!(matches!(fresh, Correlated::Create(e) if e.message.as_deref() == Some("m-new")));
}

#[test]
fn the_spam_filter_allows_a_burst_of_25_then_one_per_five_minutes() {
    let mut c = Correlator::default();
    let mut allowed = 0;
    for i in 0..30 {
        let out = correlate(&mut c, event("web", &format!("R{i}"), "m", 0), 0);
        if out != Correlated::Dropped {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 25);
    assert_eq!(
        correlate(&mut c, event("web", "late", "m", 299), 299),
        Correlated::Dropped
    );
    assert_ne!(
        correlate(&mut c, event("web", "late", "m", 300), 300),
        Correlated::Dropped
    );
    assert_ne!(
        correlate(&mut c, event("other", "R", "m", 300), 300),
        Correlated::Dropped,
        "each object has its own bucket"
    );
}
