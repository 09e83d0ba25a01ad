use super::*;

fn time(s: &str) -> Time {
    Time(s.parse().unwrap())
}

fn by_type<'a>(conditions: &'a [NamespaceCondition], type_: &str) -> &'a NamespaceCondition {
    conditions.iter().find(|c| c.type_ == type_).unwrap()
}

#[test]
fn an_emptied_namespace_gets_five_false_conditions_with_the_real_messages() {
    let now = time("2026-01-01T00:00:00Z");
    let got = conditions(&Pass::default(), &[], &now);
    let summary: Vec<_> = got
        .iter()
        .map(|c| {
            (
                c.type_.as_str(),
                c.status.as_str(),
                c.reason.as_deref().unwrap(),
                c.message.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered"
            ),
            (
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed"
            ),
            (
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization"
            ),
            (
                "NamespaceContentRemaining",
                "False",
                "ContentRemoved",
                "All content successfully removed"
            ),
            (
                "NamespaceFinalizersRemaining",
                "False",
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished"
            ),
        ]
    );
    assert!(
        got.iter()
            .all(|c| c.last_transition_time == Some(now.clone()))
    );
}

#[test]
fn remaining_content_and_finalizers_are_counted_sorted() {
    let pass = Pass {
        remaining: [
            ("configmaps.".to_owned(), 2),
            ("widgets.example.com".to_owned(), 1),
        ]
        .into(),
        finalizers: [("example.com/hold".to_owned(), 3)].into(),
        ..Pass::default()
    };
    assert!(!pass.done());
    let got = conditions(&pass, &[], &time("2026-01-01T00:00:00Z"));
    let remaining = by_type(&got, "NamespaceContentRemaining");
    assert_eq!(remaining.status, "True");
    assert_eq!(remaining.reason.as_deref(), Some("SomeResourcesRemain"));
    assert_eq!(
        remaining.message.as_deref(),
        Some(
            "Some resources are remaining: configmaps. has 2 resource instances, widgets.example.com has 1 resource instances"
        )
    );
    let finalizers = by_type(&got, "NamespaceFinalizersRemaining");
    assert_eq!(
        finalizers.message.as_deref(),
        Some(
            "Some content in the namespace has finalizers remaining: example.com/hold in 3 resource instances"
        )
    );
}

#[test]
fn an_unchanged_status_keeps_its_transition_time() {
    let first = conditions(&Pass::default(), &[], &time("2026-01-01T00:00:00Z"));
    let pass = Pass {
        remaining: [("configmaps.".to_owned(), 1)].into(),
        ..Pass::default()
    };
    let later = time("2026-01-01T00:01:00Z");
    let second = conditions(&pass, &first, &later);
    let discovery = by_type(&second, "NamespaceDeletionDiscoveryFailure");
    assert_eq!(
        discovery.last_transition_time,
        Some(time("2026-01-01T00:00:00Z"))
    );
    let remaining = by_type(&second, "NamespaceContentRemaining");
    assert_eq!(remaining.last_transition_time, Some(later));
}
