use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).unwrap()
}

fn pod(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some("team".into()),
        name: Some(name.into()),
        uid: Some(format!("uid-{name}")),
        ..ObjectReference::default()
    }
}

/// An Event as the recorder builds it: named by `name`, about `regarding`, noted `note`.
fn event(name: &str, regarding: &str, note: &str, second: i64) -> Event {
    Event {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("team".into()),
            ..ObjectMeta::default()
        },
        event_time: Some(MicroTime(at(second))),
        type_: Some("Normal".into()),
        reason: Some("Pulled".into()),
        action: Some("Pulling".into()),
        reporting_controller: Some("example.com/ctl".into()),
        reporting_instance: Some("ctl-a".into()),
        regarding: Some(pod(regarding)),
        note: Some(note.into()),
        ..Event::default()
    }
}

fn series(event: &Event) -> Option<(i32, Timestamp)> {
    event
        .series
        .as_ref()
        .map(|s| (s.count, s.last_observed_time.0))
}

#[test]
fn the_first_is_created_the_second_patches_a_series_of_two_later_ones_only_count() {
    let mut cache = SeriesCache::default();
    let first = event("p.1", "p", "pulled in 1s", 100);
    assert_eq!(
        cache.observe(first.clone(), at(100)),
        Some(Write::Create(first))
    );
    cache.check_invariants();
    // A different note is still the same kind of Event.
    let Some(Write::Patch(patched)) =
        cache.observe(event("p.2", "p", "pulled in 2s", 130), at(130))
    else {
        panic!("the second occurrence patches");
    };
    assert_eq!(
        patched.metadata.name.as_deref(),
        Some("p.1"),
        "the first object is patched"
    );
    assert_eq!(patched.note.as_deref(), Some("pulled in 1s"));
    assert_eq!(series(&patched), Some((2, at(130))));
    assert_eq!(cache.observe(event("p.3", "p", "x", 160), at(160)), None);
    assert_eq!(cache.observe(event("p.4", "p", "x", 190), at(190)), None);
    cache.check_invariants();
    let open = cache.open_series();
    assert_eq!(open.len(), 1);
    assert_eq!(series(&open[0]), Some((4, at(190))));
}

#[test]
fn events_that_differ_in_anything_but_note_time_and_name_are_separate() {
    let mut cache = SeriesCache::default();
    let base = event("p.1", "p", "n", 100);
    assert!(matches!(
        cache.observe(base.clone(), at(100)),
        Some(Write::Create(_))
    ));
    let mut variants = vec![event("q.1", "q", "n", 100)];
    let mut other_action = base.clone();
    other_action.action = Some("Killing".into());
    variants.push(other_action);
    let mut warning = base.clone();
    warning.type_ = Some("Warning".into());
    variants.push(warning);
    let mut other_instance = base.clone();
    other_instance.reporting_instance = Some("ctl-b".into());
    variants.push(other_instance);
    let mut related = base.clone();
    related.related = Some(pod("node-ish"));
    variants.push(related);
    for variant in variants {
        assert!(
            matches!(
                cache.observe(variant.clone(), at(101)),
                Some(Write::Create(_))
            ),
            "{variant:?} is its own kind"
        );
    }
}

#[test]
fn a_series_idle_for_six_minutes_is_written_once_more_and_forgotten() {
    let mut cache = SeriesCache::default();
    cache.observe(event("p.1", "p", "n", 100), at(100));
    cache.observe(event("p.2", "p", "n", 110), at(110));
    cache.observe(event("p.3", "p", "n", 120), at(120));
    cache.observe(event("single.1", "single", "n", 100), at(100));
    // Exactly six minutes after the last occurrence is not yet "before now - 6 min".
    assert!(cache.finish(at(480)).is_empty());
    let finished = cache.finish(at(481));
    assert_eq!(finished.len(), 1);
    assert_eq!(series(&finished[0]), Some((3, at(120))));
    assert!(cache.open_series().is_empty());
    // Both are forgotten: the same Events start over as new objects.
    assert!(matches!(
        cache.observe(event("p.9", "p", "n", 500), at(500)),
        Some(Write::Create(_))
    ));
    assert!(matches!(
        cache.observe(event("single.9", "single", "n", 500), at(500)),
        Some(Write::Create(_))
    ));
    cache.check_invariants();
}

#[test]
fn a_series_still_going_is_not_finished() {
    let mut cache = SeriesCache::default();
    cache.observe(event("p.1", "p", "n", 100), at(100));
    cache.observe(event("p.2", "p", "n", 400), at(400));
    assert!(cache.finish(at(600)).is_empty());
    assert_eq!(cache.open_series().len(), 1);
}
