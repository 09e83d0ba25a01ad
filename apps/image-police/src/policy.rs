//! The image policy of a namespace: which images its Deployments may run.
//!
//! Pure logic, no I/O: a [`Policy`] is built from each WhiteList's rules, the policies of all
//! WhiteLists of a namespace are joined with [`Policy::union`], and the result is asked about each
//! image a pod template would run. Reconcile turns the answers into deletions, Events and status;
//! the admission webhook (`webhook.rs`) into denials.
//! Nothing in client-go corresponds; the rules follow the seed's "Container Image Police".
//!
//! # Matching rules
//! - Names are compared after normalization ([`ImageRef`]): `nginx`, `library/nginx` and
//!   `docker.io/library/nginx` are the same image.
//! - A rule allows exactly the tags it lists; there is no wildcard (as the WhiteList API documents),
//!   so a tag rule without tags is a configuration error. An image written without a tag runs
//!   `latest`, and is judged as `latest`.
//! - An image pinned by digest (`app@sha256:...`, with or without a tag) runs whatever the digest
//!   names, which no tag rule can vouch for: it is allowed only by a rule whose name carries that
//!   exact digest (`name: app@sha256:...`, no tags).
//! - A WhiteList with no rules is a configuration error (most likely a mistake that would delete
//!   every Deployment in the namespace) unless its spec sets `allowNone: true`, which means
//!   "allow nothing" on purpose.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

use k8s_openapi::api::core::v1::Container;
use kubegen_runtime::pod_template::PodTemplate;

use crate::image_ref::{ImageRef, ImageRefError, parse_tag};

/// One rule as written in a WhiteList (`spec.images[i]`).
#[derive(Clone, Copy, Debug)]
pub struct RuleInput<'a> {
    /// Image name, optionally pinned by digest (`nginx`, `ghcr.io/a/b@sha256:...`).
    pub name: &'a str,
    /// Allowed tags (required, except for digest rules).
    pub tags: &'a [String],
}

/// The allowed images of one WhiteList (or the union of several), normalized for lookup.
///
/// # Invariants
/// - Keys of `tags` and `digests` are normalized names ([`ImageRef::name`]).
/// - Every tag set in `tags` is non-empty.
/// - `allow_none` implies both maps are empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// Normalized name -> tags allowed for it (several rules for one name are merged).
    tags: HashMap<String, BTreeSet<String>>,
    /// Normalized name -> digests explicitly allowed for it.
    digests: HashMap<String, HashSet<String>>,
    /// The spec said "allow nothing" on purpose.
    allow_none: bool,
}

/// Why a WhiteList's rules cannot be turned into a [`Policy`]. All problems of a list are
/// reported together, so a user fixes them in one edit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// No rules and `allowNone` not set.
    #[error("spec.images is empty; set spec.allowNone: true to allow no images on purpose")]
    EmptyList,
    /// A rule's name is not an image reference.
    #[error("spec.images[{index}].name {name:?}: {source}")]
    InvalidName {
        /// Index of the rule in `spec.images`.
        index: usize,
        /// The name as written.
        name: String,
        /// What is wrong with it.
        source: ImageRefError,
    },
    /// A rule's name carries a tag; tags belong in `tags`.
    #[error(
        "spec.images[{index}].name {name:?} has a tag; list tags under spec.images[{index}].tags"
    )]
    TagInName {
        /// Index of the rule.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// A tag rule lists no tags, so it would allow nothing (there is no wildcard).
    #[error(
        "spec.images[{index}] ({name:?}) lists no tags; list every allowed tag (there is no wildcard)"
    )]
    NoTags {
        /// Index of the rule.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// A digest rule also lists tags, which would be ignored.
    #[error("spec.images[{index}].name {name:?} is pinned by digest; remove its tags")]
    TagsWithDigest {
        /// Index of the rule.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// A listed tag is not a valid tag.
    #[error("spec.images[{index}].tags: {source}")]
    InvalidTag {
        /// Index of the rule.
        index: usize,
        /// What is wrong with the tag.
        source: ImageRefError,
    },
    /// `allowNone` is set but rules are listed too: the intent is unclear.
    #[error("spec.allowNone is true but spec.images is not empty")]
    AllowNoneWithImages,
}

/// Why an image is not allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// No rule names this image.
    NotListed,
    /// The image is listed, but not with this tag (`latest` when none was written).
    TagNotAllowed {
        /// The tag the runtime would pull.
        tag: String,
    },
    /// The image is pinned by a digest no rule names explicitly.
    DigestNotAllowed {
        /// The digest as written.
        digest: String,
    },
    /// The WhiteList allows nothing (`allowNone: true`).
    NothingAllowed,
    /// The image string cannot be parsed, so it cannot be matched.
    Unparsable(ImageRefError),
}

impl Denial {
    /// A CamelCase reason for Events and `status.lastViolations[].reason`.
    pub fn reason(&self) -> &'static str {
        match self {
            Denial::NotListed => "ImageNotListed",
            Denial::TagNotAllowed { .. } => "TagNotAllowed",
            Denial::DigestNotAllowed { .. } => "DigestNotAllowed",
            Denial::NothingAllowed => "NothingAllowed",
            Denial::Unparsable(_) => "InvalidImage",
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::NotListed => f.write_str("image is not on the WhiteList"),
            Denial::TagNotAllowed { tag } => write!(f, "tag {tag:?} is not allowed for this image"),
            Denial::DigestNotAllowed { digest } => {
                write!(f, "digest {digest} is not explicitly allowed")
            }
            Denial::NothingAllowed => f.write_str("the WhiteList allows no images"),
            Denial::Unparsable(e) => write!(f, "cannot match image: {e}"),
        }
    }
}

/// One container of a Deployment that runs a denied image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerViolation {
    /// Container name.
    pub container: String,
    /// The image as written in the pod template.
    pub image: String,
    /// Whether it is an init container.
    pub init: bool,
    /// Why the image is denied.
    pub denial: Denial,
}

impl Policy {
    /// Builds the policy for `rules`; `allow_none` is the spec's explicit "allow nothing".
    ///
    /// # Errors
    /// Every [`RuleError`] found, in rule order.
    pub fn new<'a>(
        rules: impl IntoIterator<Item = RuleInput<'a>>,
        allow_none: bool,
    ) -> Result<Policy, Vec<RuleError>> {
        let mut policy = Policy {
            allow_none,
            ..Policy::default()
        };
        let mut errors = Vec::new();
        let mut count = 0;
        for (index, rule) in rules.into_iter().enumerate() {
            count += 1;
            if let Err(e) = policy.add_rule(index, rule) {
                errors.push(e);
            }
        }
        match (count, allow_none) {
            (0, false) => errors.push(RuleError::EmptyList),
            (1.., true) => errors.push(RuleError::AllowNoneWithImages),
            _ => {}
        }
        if errors.is_empty() {
            Ok(policy)
        } else {
            Err(errors)
        }
    }

    /// The policy allowing every image one of `policies` allows: the policy of a namespace with
    /// several WhiteLists, where a second list can only allow more. It allows nothing on purpose
    /// only if every one of them does (and, for no policies at all, it allows nothing).
    pub fn union<'a>(policies: impl IntoIterator<Item = &'a Policy>) -> Policy {
        let mut union = Policy {
            allow_none: true,
            ..Policy::default()
        };
        for policy in policies {
            union.allow_none &= policy.allow_none;
            for (name, tags) in &policy.tags {
                union
                    .tags
                    .entry(name.clone())
                    .or_default()
                    .extend(tags.iter().cloned());
            }
            for (name, digests) in &policy.digests {
                let entry = union.digests.entry(name.clone()).or_default();
                entry.extend(digests.iter().cloned());
            }
        }
        union
    }

    fn add_rule(&mut self, index: usize, rule: RuleInput<'_>) -> Result<(), RuleError> {
        let image = ImageRef::parse(rule.name).map_err(|source| RuleError::InvalidName {
            index,
            name: rule.name.to_owned(),
            source,
        })?;
        let name = rule.name.to_owned();
        if let Some(digest) = image.digest() {
            if image.tag().is_some() {
                return Err(RuleError::TagInName { index, name });
            }
            if !rule.tags.is_empty() {
                return Err(RuleError::TagsWithDigest { index, name });
            }
            self.digests
                .entry(image.name())
                .or_default()
                .insert(digest.to_owned());
            return Ok(());
        }
        if image.tag().is_some() {
            return Err(RuleError::TagInName { index, name });
        }
        if rule.tags.is_empty() {
            return Err(RuleError::NoTags { index, name });
        }
        let mut tags = BTreeSet::new();
        for tag in rule.tags {
            tags.insert(parse_tag(tag).map_err(|source| RuleError::InvalidTag { index, source })?);
        }
        self.tags.entry(image.name()).or_default().extend(tags);
        Ok(())
    }

    /// Judges one image reference as written in a pod template.
    ///
    /// # Errors
    /// The [`Denial`] saying why the image may not run.
    pub fn check(&self, image: &str) -> Result<(), Denial> {
        if self.allow_none {
            return Err(Denial::NothingAllowed);
        }
        let image = ImageRef::parse(image).map_err(Denial::Unparsable)?;
        let name = image.name();
        if let Some(digest) = image.digest() {
            return match self.digests.get(&name) {
                Some(allowed) if allowed.contains(digest) => Ok(()),
                _ => Err(Denial::DigestNotAllowed {
                    digest: digest.to_owned(),
                }),
            };
        }
        match self.tags.get(&name) {
            None => Err(Denial::NotListed),
            Some(tags) if tags.contains(image.effective_tag()) => Ok(()),
            Some(_) => Err(Denial::TagNotAllowed {
                tag: image.effective_tag().to_owned(),
            }),
        }
    }

    /// Every container and init container of `object`'s pod spec whose image is denied, init
    /// containers first (they run first). Containers without an image are skipped: the API server
    /// refuses to create their Pods, so they run nothing.
    pub fn violations(&self, object: &impl PodTemplate) -> Vec<ContainerViolation> {
        let Some(pod) = object.pod_spec() else {
            return Vec::new();
        };
        let init = pod.init_containers.iter().flatten().map(|c| (c, true));
        let regular = pod.containers.iter().map(|c| (c, false));
        init.chain(regular)
            .filter_map(|(container, init)| self.container_violation(container, init))
            .collect()
    }

    fn container_violation(&self, container: &Container, init: bool) -> Option<ContainerViolation> {
        let image = container.image.as_deref()?;
        let denial = self.check(image).err()?;
        Some(ContainerViolation {
            container: container.name.clone(),
            image: image.to_owned(),
            init,
            denial,
        })
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        if self.allow_none {
            assert!(self.tags.is_empty() && self.digests.is_empty());
        }
        assert!(self.tags.values().all(|tags| !tags.is_empty()));
        for name in self.tags.keys().chain(self.digests.keys()) {
            let parsed = ImageRef::parse(name).map(|i| i.name());
            assert_eq!(parsed.as_deref(), Ok(name.as_str()), "key not normalized");
        }
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
