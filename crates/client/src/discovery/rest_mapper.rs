//! Kind ↔ resource mapping from discovery: which URL serves `apps/v1 Deployment`, what kind
//! `deploy` names, whether it lives in namespaces. Mirrors apimachinery `pkg/api/meta`
//! (`RESTMapper`, `PriorityRESTMapper`, `DefaultRESTMapper`), client-go `restmapper`
//! (`NewDiscoveryRESTMapper`, `DeferredDiscoveryRESTMapper`, `shortcutExpander`).
//!
//! # Why
//! Anything handling objects of kinds unknown at compile time (a manifest applier, a garbage
//! collector, `kubectl get <anything>`) starts from a kind or a name a person typed and needs a
//! path. The answer is the server's, so it comes from discovery.
//!
//! # Matching (client-go's order)
//! - Candidates are tried per group version, groups in the server's order and, within a group,
//!   the preferred version first, then the others in the server's order (the priorities
//!   `NewDiscoveryRESTMapper` builds). The first group version with a match decides; two matches
//!   there are [`Error::AmbiguousMapping`].
//! - A kind matches exactly (`Deployment`); a resource name matches a plural or singular name,
//!   ignoring case (a server that sends no `singularName`, like 1.15 for built-ins, gets the
//!   lower-cased kind, as `DefaultRESTMapper` derives it). Only when no name matches anywhere is
//!   it tried as a short name (`deploy`), and then the first resource in discovery order that
//!   declares it wins, as with kubectl's shortcut expander.
//! - A name may be qualified: `deployments.apps`, `deployments.v1.apps`,
//!   `whitelists.police.example.com` (a group is tried before `version.group`).
//!
//! # A miss refreshes discovery, once
//! Like `DeferredDiscoveryRESTMapper`, a lookup that finds nothing re-reads discovery and tries
//! again: a CRD created since the last read is then found. Refreshes are rate-limited (at most
//! one per [`RestMapper::REFRESH_INTERVAL`]) so a stream of lookups for a kind that does not
//! exist costs the server little; past that the miss is [`Error::NoKindMatch`] or
//! [`Error::NoResourceMatch`], naming what was asked.

use std::sync::Arc;
use std::time::Duration;

use kube_core::discovery::ApiResource;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::cache::CachedDiscovery;
use super::documents::ApiResourceEntry;
use super::{ServerResources, group_version};
use crate::error::{Error, Result};

/// Where one kind is served, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestMapping {
    /// Group, version, kind and plural: what [`ResourceClient::dynamic`](crate::ResourceClient::dynamic) takes.
    pub resource: ApiResource,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Singular name (`deployment`).
    pub singular: String,
    /// Short names (`deploy`).
    pub short_names: Vec<String>,
    /// Verbs the resource serves.
    pub verbs: Vec<String>,
    /// Its subresources (`status`, `scale`), in discovery order.
    pub subresources: Vec<String>,
}

impl RestMapping {
    /// Whether the resource serves `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// One group version's top-level resources, in the order lookups try them.
struct Tier<'a> {
    group: &'a str,
    version: &'a str,
    resources: Vec<&'a ApiResourceEntry>,
    all: &'a [ApiResourceEntry],
}

/// Every group version that was read, in priority order (see the module doc).
fn tiers(discovered: &ServerResources) -> Vec<Tier<'_>> {
    let mut out = Vec::new();
    for group in &discovered.groups {
        let preferred = group.preferred_version.as_ref().map(|v| v.version.as_str());
        let mut versions: Vec<_> = group.versions.iter().collect();
        versions.sort_by_key(|v| Some(v.version.as_str()) != preferred);
        for version in versions {
            let Some(list) = discovered.resources.get(&version.group_version) else {
                continue;
            };
            out.push(Tier {
                group: &group.name,
                version: &version.version,
                resources: list
                    .resources
                    .iter()
                    .filter(|r| !r.name.contains('/'))
                    .collect(),
                all: &list.resources,
            });
        }
    }
    out
}

fn singular_of(entry: &ApiResourceEntry) -> String {
    if entry.singular_name.is_empty() {
        entry.kind.to_lowercase()
    } else {
        entry.singular_name.clone()
    }
}

fn mapping(tier: &Tier<'_>, entry: &ApiResourceEntry) -> RestMapping {
    let prefix = format!("{}/", entry.name);
    RestMapping {
        resource: ApiResource {
            group: tier.group.to_owned(),
            version: tier.version.to_owned(),
            api_version: group_version(tier.group, tier.version),
            kind: entry.kind.clone(),
            plural: entry.name.clone(),
        },
        namespaced: entry.namespaced,
        singular: singular_of(entry),
        short_names: entry.short_names.clone(),
        verbs: entry.verbs.clone(),
        subresources: tier
            .all
            .iter()
            .filter_map(|r| r.name.strip_prefix(&prefix).map(str::to_owned))
            .collect(),
    }
}

/// The single match of the first tier that has any; `Ok(None)` when none has one.
fn first_match(
    tiers: &[Tier<'_>],
    asked: &str,
    matches: impl Fn(&Tier<'_>, &ApiResourceEntry) -> bool,
) -> Result<Option<RestMapping>> {
    for tier in tiers {
        let found: Vec<&&ApiResourceEntry> =
            tier.resources.iter().filter(|r| matches(tier, r)).collect();
        match found.as_slice() {
            [] => continue,
            [one] => return Ok(Some(mapping(tier, one))),
            many => {
                let candidates = many
                    .iter()
                    .map(|r| {
                        format!(
                            "{}.{} ({})",
                            r.name,
                            group_version(tier.group, tier.version),
                            r.kind
                        )
                    })
                    .collect();
                return Err(Error::AmbiguousMapping {
                    asked: asked.to_owned(),
                    candidates,
                });
            }
        }
    }
    Ok(None)
}

/// The mapping of `kind` in `group` (in `version`, or the preferred version serving it).
pub(crate) fn find_kind(
    discovered: &ServerResources,
    group: &str,
    version: Option<&str>,
    kind: &str,
) -> Result<RestMapping> {
    let tiers = tiers(discovered);
    let asked = match version {
        Some(version) => format!("{kind} in {}", group_version(group, version)),
        None => format!("{kind} in group {group:?}"),
    };
    let found = first_match(&tiers, &asked, |tier, r| {
        tier.group == group && version.is_none_or(|v| v == tier.version) && r.kind == kind
    })?;
    found.ok_or_else(|| Error::NoKindMatch {
        group: group.to_owned(),
        version: version.map(str::to_owned),
        kind: kind.to_owned(),
    })
}

/// The ways a typed name can be read: `(name, group, version)`.
fn readings(typed: &str) -> Vec<(&str, Option<&str>, Option<&str>)> {
    let Some((name, rest)) = typed.split_once('.') else {
        return vec![(typed, None, None)];
    };
    let mut out = vec![(name, Some(rest), None)];
    if let Some((version, group)) = rest.split_once('.') {
        out.push((name, Some(group), Some(version)));
    }
    out
}

/// The mapping of a resource name as typed (`deploy`, `deployments.apps`, ...).
pub(crate) fn find_resource(discovered: &ServerResources, typed: &str) -> Result<RestMapping> {
    let tiers = tiers(discovered);
    for (name, group, version) in readings(typed) {
        let name = name.to_lowercase();
        let in_scope = |tier: &Tier<'_>| {
            group.is_none_or(|g| g == tier.group) && version.is_none_or(|v| v == tier.version)
        };
        let by_name = first_match(&tiers, typed, |tier, r| {
            in_scope(tier) && (r.name.to_lowercase() == name || singular_of(r) == name)
        })?;
        if let Some(found) = by_name {
            return Ok(found);
        }
        let short = tiers.iter().filter(|t| in_scope(t)).find_map(|tier| {
            let entry = tier
                .resources
                .iter()
                .find(|r| r.short_names.iter().any(|s| s.to_lowercase() == name))?;
            Some(mapping(tier, entry))
        });
        if let Some(found) = short {
            return Ok(found);
        }
    }
    Err(Error::NoResourceMatch {
        resource: typed.to_owned(),
    })
}

/// Maps kinds and resource names to [`RestMapping`]s through cached discovery, re-reading it on
/// a miss (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct RestMapper {
    discovery: Arc<CachedDiscovery>,
    /// When a miss last re-read discovery.
    last_refresh: Arc<Mutex<Option<Instant>>>,
}

impl RestMapper {
    /// The least time between two refreshes caused by misses.
    pub const REFRESH_INTERVAL: Duration = Duration::from_secs(5);

    /// A mapper over `discovery`.
    pub fn new(discovery: Arc<CachedDiscovery>) -> RestMapper {
        RestMapper {
            discovery,
            last_refresh: Arc::new(Mutex::new(None)),
        }
    }

    /// The discovery it reads.
    pub fn discovery(&self) -> &Arc<CachedDiscovery> {
        &self.discovery
    }

    /// Forgets discovery: the next lookup reads it again (client-go's `Reset`), whatever the
    /// rate limit.
    pub async fn reset(&self) {
        self.discovery.invalidate().await;
    }

    /// The mapping of `kind` in `api_version` (`apps/v1`, `v1`).
    ///
    /// # Errors
    /// [`Error::NoKindMatch`] when the server does not serve it, even after a refresh;
    /// [`Error::AmbiguousMapping`]; a discovery error.
    pub async fn mapping_for(&self, api_version: &str, kind: &str) -> Result<RestMapping> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.lookup(|d| find_kind(d, group, Some(version), kind))
            .await
    }

    /// The mapping of `kind` in `group`, in the group's preferred version serving it.
    ///
    /// # Errors
    /// As [`mapping_for`](Self::mapping_for).
    pub async fn mapping_for_group_kind(&self, group: &str, kind: &str) -> Result<RestMapping> {
        self.lookup(|d| find_kind(d, group, None, kind)).await
    }

    /// The mapping of a resource name as a person types it: plural, singular or short name,
    /// optionally qualified (`deploy`, `deployments.apps`, `deployment.v1.apps`).
    ///
    /// # Errors
    /// [`Error::NoResourceMatch`], [`Error::AmbiguousMapping`], a discovery error.
    pub async fn mapping_for_resource(&self, typed: &str) -> Result<RestMapping> {
        self.lookup(|d| find_resource(d, typed)).await
    }

    /// The mapping of every top-level resource, each group's preferred version first.
    ///
    /// # Errors
    /// A discovery error.
    pub async fn all(&self) -> Result<Vec<RestMapping>> {
        let discovered = self.discovery.resources().await?;
        let tiers = tiers(&discovered);
        Ok(tiers
            .iter()
            .flat_map(|tier| tier.resources.iter().map(|r| mapping(tier, r)))
            .collect())
    }

    async fn lookup(
        &self,
        find: impl Fn(&ServerResources) -> Result<RestMapping>,
    ) -> Result<RestMapping> {
        let discovered = self.discovery.resources().await?;
        match find(&discovered) {
            Err(e) if e.is_no_match() && self.may_refresh() => {
                self.discovery.invalidate().await;
                let discovered = self.discovery.resources().await?;
                find(&discovered)
            }
            other => other,
        }
    }

    /// Whether a miss may refresh discovery now; if so, counts this refresh.
    fn may_refresh(&self) -> bool {
        let mut last = self.last_refresh.lock();
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < Self::REFRESH_INTERVAL) {
            return false;
        }
        *last = Some(now);
        true
    }
}

#[cfg(test)]
#[path = "rest_mapper_tests.rs"]
mod tests;
