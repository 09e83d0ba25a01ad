//! Unit tests for [`Policy`]: one test per matching rule and configuration error.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};

use super::*;

const SHA_A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const SHA_B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn rules(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    list.iter()
        .map(|(name, tags)| {
            (
                (*name).to_owned(),
                tags.iter().map(|t| (*t).to_owned()).collect(),
            )
        })
        .collect()
}

fn build(list: &[(&str, &[&str])], allow_none: bool) -> Result<Policy, Vec<RuleError>> {
    let owned = rules(list);
    let inputs = owned.iter().map(|(name, tags)| RuleInput { name, tags });
    let result = Policy::new(inputs, allow_none);
    if let Ok(policy) = &result {
        policy.check_invariants();
    }
    result
}

fn policy(list: &[(&str, &[&str])]) -> Policy {
    build(list, false).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn union_allows_what_any_member_allows() {
    let web = policy(&[("nginx", &["1.25"])]);
    let cache = policy(&[("redis", &["7"]), ("nginx", &["1.26"])]);
    let pinned = policy(&[(&*format!("app@{SHA_A}"), &[])]);
    let union = Policy::union([&web, &cache, &pinned]);
    union.check_invariants();
    for allowed in [
        "nginx:1.25",
        "nginx:1.26",
        "redis:7",
        &*format!("app@{SHA_A}"),
    ] {
        assert_eq!(union.check(allowed), Ok(()), "{allowed}");
    }
    assert_eq!(
        union.check("redis:6"),
        Err(Denial::TagNotAllowed { tag: "6".into() })
    );
    assert_eq!(union.check("mysql:8"), Err(Denial::NotListed));
}

#[test]
fn union_allows_nothing_on_purpose_only_if_every_member_does() {
    let none = build(&[], true).unwrap_or_else(|e| panic!("{e:?}"));
    let web = policy(&[("nginx", &["1.25"])]);
    let mixed = Policy::union([&none, &web]);
    mixed.check_invariants();
    assert_eq!(mixed.check("nginx:1.25"), Ok(()));
    let only_none = Policy::union([&none, &none]);
    only_none.check_invariants();
    assert_eq!(only_none.check("nginx:1.25"), Err(Denial::NothingAllowed));
}

#[test]
fn listed_tag_is_allowed_and_other_tags_are_not() {
    let p = policy(&[("nginx", &["1.25", "1.26"])]);
    assert_eq!(p.check("nginx:1.25"), Ok(()));
    assert_eq!(p.check("docker.io/library/nginx:1.26"), Ok(()));
    assert_eq!(
        p.check("nginx:1.24"),
        Err(Denial::TagNotAllowed { tag: "1.24".into() })
    );
}

#[test]
fn image_without_tag_is_judged_as_latest() {
    let pinned = policy(&[("nginx", &["1.25"])]);
    assert_eq!(
        pinned.check("nginx"),
        Err(Denial::TagNotAllowed {
            tag: "latest".into()
        })
    );
    let with_latest = policy(&[("nginx", &["latest"])]);
    assert_eq!(with_latest.check("nginx"), Ok(()));
    assert_eq!(with_latest.check("nginx:latest"), Ok(()));
}

#[test]
fn tag_rule_without_tags_is_a_configuration_error() {
    let expected = vec![RuleError::NoTags {
        index: 0,
        name: "ghcr.io/acme/app".into(),
    }];
    assert_eq!(build(&[("ghcr.io/acme/app", &[])], false), Err(expected));
}

#[test]
fn unlisted_image_is_denied() {
    let p = policy(&[("nginx", &["1"])]);
    assert_eq!(p.check("redis:7"), Err(Denial::NotListed));
    // Same path on another registry is another image.
    assert_eq!(p.check("quay.io/library/nginx"), Err(Denial::NotListed));
}

#[test]
fn rules_for_one_name_are_merged() {
    let p = policy(&[("nginx", &["1"]), ("docker.io/library/nginx", &["2"])]);
    assert_eq!(p.check("nginx:1"), Ok(()));
    assert_eq!(p.check("nginx:2"), Ok(()));
}

#[test]
fn digest_is_denied_even_when_its_tag_is_allowed() {
    let p = policy(&[("nginx", &["1.25"])]);
    let image = format!("nginx@{SHA_A}");
    assert_eq!(
        p.check(&image),
        Err(Denial::DigestNotAllowed {
            digest: SHA_A.into()
        })
    );
    let tagged = format!("nginx:1.25@{SHA_A}");
    assert_eq!(
        p.check(&tagged),
        Err(Denial::DigestNotAllowed {
            digest: SHA_A.into()
        })
    );
}

#[test]
fn explicitly_allowed_digest_matches_only_itself() {
    let p = policy(&[(&format!("nginx@{SHA_A}"), &[])]);
    assert_eq!(p.check(&format!("docker.io/library/nginx@{SHA_A}")), Ok(()));
    assert_eq!(p.check(&format!("nginx:1.25@{SHA_A}")), Ok(()));
    assert_eq!(
        p.check(&format!("nginx@{SHA_B}")),
        Err(Denial::DigestNotAllowed {
            digest: SHA_B.into()
        })
    );
    // A digest rule says nothing about tags.
    assert_eq!(p.check("nginx:1.25"), Err(Denial::NotListed));
}

#[test]
fn unparsable_image_is_denied_with_the_parse_error() {
    let p = policy(&[("nginx", &["1"])]);
    assert_eq!(
        p.check("NGINX"),
        Err(Denial::Unparsable(ImageRefError::InvalidName {
            component: "NGINX".into()
        }))
    );
    assert_eq!(p.check(""), Err(Denial::Unparsable(ImageRefError::Empty)));
}

#[test]
fn empty_list_is_a_configuration_error_unless_allow_none() {
    assert_eq!(build(&[], false), Err(vec![RuleError::EmptyList]));
    let none = build(&[], true).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(none.check("nginx:1"), Err(Denial::NothingAllowed));
}

#[test]
fn allow_none_with_images_is_a_configuration_error() {
    assert_eq!(
        build(&[("nginx", &["1"])], true),
        Err(vec![RuleError::AllowNoneWithImages])
    );
}

#[test]
fn every_bad_rule_is_reported_at_once() {
    let digest_rule = format!("nginx@{SHA_A}");
    let errors = build(
        &[
            ("Bad Name", &[]),
            ("nginx:1.2", &[]),
            (&digest_rule, &["1"]),
            ("redis", &["-x"]),
            ("ok", &["1"]),
        ],
        false,
    )
    .err()
    .unwrap_or_default();
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(matches!(
        &errors[0],
        RuleError::InvalidName { index: 0, .. }
    ));
    assert_eq!(
        errors[1],
        RuleError::TagInName {
            index: 1,
            name: "nginx:1.2".into()
        }
    );
    assert_eq!(
        errors[2],
        RuleError::TagsWithDigest {
            index: 2,
            name: digest_rule.clone()
        }
    );
    assert!(matches!(&errors[3], RuleError::InvalidTag { index: 3, .. }));
    assert!(
        errors[1].to_string().contains("spec.images[1].tags"),
        "{}",
        errors[1]
    );
}

#[test]
fn tag_and_digest_in_a_rule_name_is_rejected() {
    let name = format!("nginx:1@{SHA_A}");
    assert_eq!(
        build(&[(&name, &[])], false),
        Err(vec![RuleError::TagInName { index: 0, name }])
    );
}

fn deployment(init: &[(&str, Option<&str>)], containers: &[(&str, Option<&str>)]) -> Deployment {
    let to_containers = |list: &[(&str, Option<&str>)]| -> Vec<Container> {
        list.iter()
            .map(|(name, image)| Container {
                name: (*name).to_owned(),
                image: image.map(str::to_owned),
                ..Container::default()
            })
            .collect()
    };
    Deployment {
        spec: Some(DeploymentSpec {
            template: PodTemplateSpec {
                spec: Some(PodSpec {
                    init_containers: (!init.is_empty()).then(|| to_containers(init)),
                    containers: to_containers(containers),
                    ..PodSpec::default()
                }),
                ..PodTemplateSpec::default()
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

#[test]
fn violations_cover_init_containers_first_and_skip_imageless_ones() {
    let p = policy(&[("nginx", &["1.25"])]);
    let d = deployment(
        &[("setup", Some("busybox"))],
        &[
            ("web", Some("nginx:1.25")),
            ("sidecar", Some("nginx:1.0")),
            ("empty", None),
        ],
    );
    let found = p.violations(&d);
    assert_eq!(
        found,
        vec![
            ContainerViolation {
                container: "setup".into(),
                image: "busybox".into(),
                init: true,
                denial: Denial::NotListed,
            },
            ContainerViolation {
                container: "sidecar".into(),
                image: "nginx:1.0".into(),
                init: false,
                denial: Denial::TagNotAllowed { tag: "1.0".into() },
            },
        ]
    );
}

#[test]
fn deployment_with_only_allowed_images_has_no_violations() {
    let p = policy(&[("nginx", &["1.25"]), ("busybox", &["1.36"])]);
    let d = deployment(
        &[("setup", Some("busybox:1.36"))],
        &[("web", Some("nginx:1.25"))],
    );
    assert_eq!(p.violations(&d), vec![]);
    assert_eq!(p.violations(&Deployment::default()), vec![]);
}

#[test]
fn denial_reasons_are_distinct_camel_case_words() {
    let reasons = [
        Denial::NotListed.reason(),
        Denial::TagNotAllowed { tag: "x".into() }.reason(),
        Denial::DigestNotAllowed {
            digest: SHA_A.into(),
        }
        .reason(),
        Denial::NothingAllowed.reason(),
        Denial::Unparsable(ImageRefError::Empty).reason(),
    ];
    let unique: HashSet<_> = reasons.iter().collect();
    assert_eq!(unique.len(), reasons.len());
    assert!(
        reasons
            .iter()
            .all(|r| r.chars().all(|c| c.is_ascii_alphabetic()))
    );
}
