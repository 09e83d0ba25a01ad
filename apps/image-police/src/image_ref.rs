//! Parsing of container image references (`registry:port/path/name:tag@sha256:...`).
//!
//! A WhiteList names images the way people write them (`nginx`, `docker.io/library/nginx`,
//! `registry.local:5000/team/app`), and Deployments do the same in `spec.containers[].image`. To
//! compare the two, both sides are parsed into an [`ImageRef`] and normalized the way the container
//! runtime resolves them: no registry means `docker.io`, a single-component name on Docker Hub lives
//! under `library/`, and no tag means `latest`. This mirrors the grammar of
//! `github.com/distribution/reference` (`normalize.go`, `regexp.go`), which kubelet and the CRI use.
//!
//! # Differences from distribution/reference
//! - Validation is a hand-written scanner, not a regular expression; it accepts the same language
//!   for names and tags, and for digests checks `sha256` strictly (64 lowercase hex) and other
//!   algorithms only for a sane alphabet.
//! - `index.docker.io` is folded into `docker.io` (the runtime treats them as one registry).

use std::fmt;

/// The registry assumed when a reference names none.
pub const DEFAULT_REGISTRY: &str = "docker.io";
/// The tag assumed when a reference names none.
pub const DEFAULT_TAG: &str = "latest";
/// Longest accepted name (registry + path), as in distribution/reference.
const MAX_NAME_LEN: usize = 255;
/// Longest accepted tag, as in distribution/reference.
const MAX_TAG_LEN: usize = 128;

/// A parsed, normalized image reference.
///
/// # Invariants
/// - `registry` and `path` are non-empty; `path` never starts or ends with `/`.
/// - On [`DEFAULT_REGISTRY`], `path` has at least two components (`library/` is added).
/// - `tag`, when present, is a valid tag; `digest`, when present, is `algorithm:encoded`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImageRef {
    /// Registry host, with port if one was given (`registry.local:5000`).
    registry: String,
    /// Repository path inside the registry (`library/nginx`, `team/app`).
    path: String,
    /// The tag as written; `None` means the runtime pulls [`DEFAULT_TAG`].
    tag: Option<String>,
    /// The digest as written (`sha256:...`); when present it, not the tag, selects the image.
    digest: Option<String>,
}

/// Why a string is not an image reference.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageRefError {
    /// The reference is empty or only whitespace.
    #[error("image reference is empty")]
    Empty,
    /// The registry or a path component contains characters a registry does not accept.
    #[error("invalid image name component {component:?}")]
    InvalidName {
        /// The offending component.
        component: String,
    },
    /// Registry plus path exceed 255 characters.
    #[error("image name is longer than {MAX_NAME_LEN} characters")]
    NameTooLong,
    /// The tag is empty, too long or uses characters outside `[A-Za-z0-9_.-]`.
    #[error("invalid tag {tag:?}")]
    InvalidTag {
        /// The offending tag.
        tag: String,
    },
    /// The digest is not `algorithm:encoded` (or a malformed `sha256`).
    #[error("invalid digest {digest:?}")]
    InvalidDigest {
        /// The offending digest.
        digest: String,
    },
}

impl ImageRef {
    /// Parses and normalizes `reference`.
    ///
    /// # Errors
    /// An [`ImageRefError`] naming the part of the reference that is malformed.
    pub fn parse(reference: &str) -> Result<ImageRef, ImageRefError> {
        let reference = reference.trim();
        if reference.is_empty() {
            return Err(ImageRefError::Empty);
        }
        let (rest, digest) = match reference.split_once('@') {
            Some((rest, digest)) => (rest, Some(parse_digest(digest)?)),
            None => (reference, None),
        };
        // A ':' after the last '/' starts the tag; one before it is a registry port.
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].find(':') {
            Some(i) => {
                let split = last_slash + i;
                (&rest[..split], Some(parse_tag(&rest[split + 1..])?))
            }
            None => (rest, None),
        };
        let (registry, path) = split_registry(name)?;
        if registry.len() + 1 + path.len() > MAX_NAME_LEN {
            return Err(ImageRefError::NameTooLong);
        }
        Ok(ImageRef {
            registry,
            path,
            tag,
            digest,
        })
    }

    /// The normalized repository name, `registry/path` (`docker.io/library/nginx`).
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.path)
    }

    /// The registry host (and port).
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The tag as written, if any.
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The tag the runtime pulls: the written tag, or [`DEFAULT_TAG`].
    pub fn effective_tag(&self) -> &str {
        self.tag.as_deref().unwrap_or(DEFAULT_TAG)
    }

    /// The digest as written (`sha256:...`), if any.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        assert!(!self.registry.is_empty() && !self.path.is_empty());
        assert!(!self.path.starts_with('/') && !self.path.ends_with('/'));
        if self.registry == DEFAULT_REGISTRY {
            assert!(self.path.contains('/'), "docker.io path without namespace");
        }
    }
}

impl fmt::Display for ImageRef {
    /// Writes the fully normalized form: `registry/path[:tag][@digest]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.path)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// Splits `name` into registry and path, applying Docker Hub's defaults.
///
/// The first component is a registry only if it looks like a host: it contains `.` or `:`, is
/// `localhost`, or has upper-case letters (never valid in a path). `library/nginx` is a path.
fn split_registry(name: &str) -> Result<(String, String), ImageRefError> {
    let (registry, path) = match name.split_once('/') {
        Some((first, rest)) if looks_like_host(first) => (first.to_owned(), rest.to_owned()),
        _ => (DEFAULT_REGISTRY.to_owned(), name.to_owned()),
    };
    let registry = if registry == "index.docker.io" {
        DEFAULT_REGISTRY.to_owned()
    } else {
        registry
    };
    validate_registry(&registry)?;
    for component in path.split('/') {
        validate_path_component(component)?;
    }
    let path = if registry == DEFAULT_REGISTRY && !path.contains('/') {
        format!("library/{path}")
    } else {
        path
    };
    Ok((registry, path))
}

fn looks_like_host(component: &str) -> bool {
    component.contains(['.', ':'])
        || component == "localhost"
        || component.chars().any(|c| c.is_ascii_uppercase())
}

fn invalid_name(component: &str) -> ImageRefError {
    ImageRefError::InvalidName {
        component: component.to_owned(),
    }
}

/// `host[:port]`: host labels of alphanumerics and `-`, separated by `.`; port all digits.
/// Bracketed IPv6 literals (`[::1]:5000`) are accepted as a whole.
fn validate_registry(registry: &str) -> Result<(), ImageRefError> {
    let (host, port) = match registry.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') => (host, Some(port)),
        _ => (registry, None),
    };
    if let Some(port) = port
        && (port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()))
    {
        return Err(invalid_name(registry));
    }
    if host.starts_with('[') && host.ends_with(']') && host.len() > 2 {
        return Ok(());
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if host.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(invalid_name(registry))
    }
}

/// A path component: lower-case alphanumerics, separated by one `.`, one or two `_`, or any
/// number of `-`; it starts and ends with an alphanumeric.
fn validate_path_component(component: &str) -> Result<(), ImageRefError> {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return Err(invalid_name(component));
    };
    if !alnum(first) || !alnum(last) {
        return Err(invalid_name(component));
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        let ok = separator == "."
            || separator == "_"
            || separator == "__"
            || separator.chars().all(|c| c == '-');
        if !ok {
            return Err(invalid_name(component));
        }
    }
    Ok(())
}

pub(crate) fn parse_tag(tag: &str) -> Result<String, ImageRefError> {
    let valid = !tag.is_empty()
        && tag.len() <= MAX_TAG_LEN
        && tag
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if valid {
        Ok(tag.to_owned())
    } else {
        Err(ImageRefError::InvalidTag {
            tag: tag.to_owned(),
        })
    }
}

fn parse_digest(digest: &str) -> Result<String, ImageRefError> {
    let invalid = || ImageRefError::InvalidDigest {
        digest: digest.to_owned(),
    };
    let (algorithm, encoded) = digest.split_once(':').ok_or_else(invalid)?;
    let algorithm_ok = !algorithm.is_empty()
        && algorithm.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '_' | '-')
        });
    let encoded_ok = if algorithm == "sha256" {
        encoded.len() == 64 && encoded.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    } else {
        encoded.len() >= 32
            && encoded
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '=' | '_' | '-'))
    };
    if algorithm_ok && encoded_ok {
        Ok(digest.to_owned())
    } else {
        Err(invalid())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn parse(s: &str) -> ImageRef {
        let image = ImageRef::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        image.check_invariants();
        image
    }

    #[test]
    fn bare_name_normalizes_to_docker_hub_library_and_latest() {
        let image = parse("nginx");
        assert_eq!(image.name(), "docker.io/library/nginx");
        assert_eq!(image.tag(), None);
        assert_eq!(image.effective_tag(), "latest");
        assert_eq!(image.to_string(), "docker.io/library/nginx");
    }

    #[test]
    fn docker_hub_spellings_are_one_name() {
        for s in [
            "nginx",
            "library/nginx",
            "docker.io/nginx",
            "docker.io/library/nginx",
            "index.docker.io/library/nginx",
        ] {
            assert_eq!(parse(s).name(), "docker.io/library/nginx", "{s}");
        }
    }

    #[test]
    fn user_repository_on_docker_hub_keeps_its_namespace() {
        assert_eq!(parse("bitnami/redis:7.2").name(), "docker.io/bitnami/redis");
    }

    #[test]
    fn registry_port_is_not_mistaken_for_a_tag() {
        let image = parse("registry.local:5000/team/app");
        assert_eq!(image.registry(), "registry.local:5000");
        assert_eq!(image.name(), "registry.local:5000/team/app");
        assert_eq!(image.tag(), None);
        let tagged = parse("registry.local:5000/team/app:v1.2.3");
        assert_eq!(tagged.name(), "registry.local:5000/team/app");
        assert_eq!(tagged.tag(), Some("v1.2.3"));
    }

    #[test]
    fn localhost_and_ipv6_are_registries() {
        assert_eq!(parse("localhost/app").registry(), "localhost");
        assert_eq!(parse("localhost:5000/app:1").registry(), "localhost:5000");
        assert_eq!(parse("[::1]:5000/app").registry(), "[::1]:5000");
    }

    #[test]
    fn digest_is_kept_alongside_tag() {
        let image = parse(&format!("nginx:1.25@{SHA}"));
        assert_eq!(image.tag(), Some("1.25"));
        assert_eq!(image.digest(), Some(SHA));
        assert_eq!(
            image.to_string(),
            format!("docker.io/library/nginx:1.25@{SHA}")
        );
        assert_eq!(parse(&format!("ghcr.io/a/b@{SHA}")).tag(), None);
    }

    #[test]
    fn malformed_references_are_rejected_with_the_failing_part() {
        assert_eq!(ImageRef::parse("  "), Err(ImageRefError::Empty));
        assert!(matches!(
            ImageRef::parse("Nginx"),
            Err(ImageRefError::InvalidName { .. })
        ));
        assert!(matches!(
            ImageRef::parse("nginx:"),
            Err(ImageRefError::InvalidTag { .. })
        ));
        assert!(matches!(
            ImageRef::parse("nginx:-x"),
            Err(ImageRefError::InvalidTag { .. })
        ));
        assert!(matches!(
            ImageRef::parse("nginx@sha256:abc"),
            Err(ImageRefError::InvalidDigest { .. })
        ));
        assert!(matches!(
            ImageRef::parse("nginx@nocolon"),
            Err(ImageRefError::InvalidDigest { .. })
        ));
        assert!(matches!(
            ImageRef::parse("a//b"),
            Err(ImageRefError::InvalidName { .. })
        ));
        assert!(matches!(
            ImageRef::parse("a/b_-c"),
            Err(ImageRefError::InvalidName { .. })
        ));
        assert!(matches!(
            ImageRef::parse("reg:port/app"),
            Err(ImageRefError::InvalidName { .. })
        ));
        assert!(matches!(
            ImageRef::parse("-bad.host/app"),
            Err(ImageRefError::InvalidName { .. })
        ));
        let long = format!("example.com/{}", "a".repeat(250));
        assert_eq!(ImageRef::parse(&long), Err(ImageRefError::NameTooLong));
        let long_tag = format!("nginx:{}", "a".repeat(129));
        assert!(matches!(
            ImageRef::parse(&long_tag),
            Err(ImageRefError::InvalidTag { .. })
        ));
    }

    #[test]
    fn separators_inside_path_components_follow_the_registry_grammar() {
        for ok in ["a.b", "a_b", "a__b", "a---b", "a-b.c_d"] {
            parse(ok);
        }
        for bad in ["a..b", "a___b", "a.-b", "_a", "a_"] {
            assert!(ImageRef::parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn surrounding_whitespace_is_ignored() {
        assert_eq!(parse(" nginx:1 ").tag(), Some("1"));
    }
}
