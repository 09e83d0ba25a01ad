//! Services: the cluster IP and node ports kube-apiserver allocates (`pkg/registry/core/service/
//! storage/alloc.go`, `ipallocator`, `portallocator`, and `strategy.go`'s `PrepareForUpdate`),
//! so that an operator reading `spec.clusterIP` or a `nodePort` back sees one, as on a cluster.
//!
//! # As v1.36 allocates (each answer checked on v1.36.2)
//! - A `ClusterIP`, `NodePort` or `LoadBalancer` Service without `clusterIP` gets a free address
//!   of the range, in `clusterIP` and `clusterIPs`, with `ipFamilies: [IPv4]` and
//!   `ipFamilyPolicy: SingleStack`. One that names its address keeps it if it is free and in the
//!   range; otherwise 422 (`failed to allocate IP ...: provided IP is already allocated`, `the
//!   provided network does not match the current range`, `must be a valid IP address`).
//! - `clusterIP: None` (headless) allocates nothing: `IPv4` single stack with a selector, and
//!   `RequireDualStack` over both families without one, as that server answers.
//! - `NodePort` and `LoadBalancer` (unless `allocateLoadBalancerNodePorts: false`) Services get a
//!   free node port for each port without one; a named port must be free and in 30000-32767. A
//!   `ClusterIP` Service may not name a node port.
//! - An update keeps the address (`may not change once set`; left out, it is kept), and a port's
//!   node port when the request leaves it out; becoming `ExternalName` releases the address and
//!   becoming `ClusterIP` the node ports; `ExternalName` to another type allocates.
//! - What is allocated is what the stored Services hold, so a deleted Service frees its address
//!   and ports at once, as the real allocators do.
//!
//! # Differences
//! The range is fixed: `10.96.0.0/12` (kubeadm's and kind's default) where kube-apiserver takes
//! `--service-cluster-ip-range` (10.0.0.0/24 unless set); node ports are the default
//! 30000-32767. IPv4 only; no `kubernetes` Service in `default` (a real server creates one at the
//! range's first address, and it is kept free here).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use rand::Rng;
use serde_json::{Map, Value, json};

use crate::kinds::strategy::Strategy;
use crate::registry::ResourceKey;
use crate::request::scope::Scope;
use crate::status::{ApiError, Cause, cause};
use crate::storage::State;

/// The service cluster IP range: its first address and prefix length.
const RANGE: (Ipv4Addr, u32) = (Ipv4Addr::new(10, 96, 0, 0), 12);

/// The node port range, inclusive.
const NODE_PORTS: (u64, u64) = (30000, 32767);

/// The Service strategy.
pub(crate) struct Services;

impl Strategy for Services {
    fn validate(
        &self,
        state: &State,
        target: &Scope,
        name: &str,
        (object, old): (&mut Value, Option<&Value>),
    ) -> Result<(), ApiError> {
        if target.subresource.is_some() {
            return Ok(());
        }
        let namespace = target.namespace.clone().unwrap_or_default();
        let taken = Taken::of(state, (&namespace, name));
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let old_spec = old.and_then(|old| old.get("spec"));
        let mut causes = Vec::new();
        allocate_ip(spec, old_spec, &taken, &mut causes);
        allocate_node_ports(spec, old_spec, &taken, &mut causes);
        match causes.is_empty() {
            true => Ok(()),
            false => Err(ApiError::invalid("", "Service", name, causes)),
        }
    }
}

/// The addresses and node ports the other stored Services hold.
struct Taken {
    ips: BTreeSet<Ipv4Addr>,
    ports: BTreeSet<u64>,
}

impl Taken {
    /// What every stored Service but `(namespace, name)` holds.
    fn of(state: &State, (namespace, name): (&str, &str)) -> Taken {
        let mut taken = Taken {
            ips: BTreeSet::new(),
            ports: BTreeSet::new(),
        };
        for stored in state
            .store
            .all(&ResourceKey::new("", "v1", "services"), None)
        {
            let meta = &stored.value["metadata"];
            if meta["namespace"] == namespace && meta["name"] == name {
                continue;
            }
            let spec = &stored.value["spec"];
            let ips = spec["clusterIPs"].as_array().into_iter().flatten();
            taken.ips.extend(
                ips.filter_map(Value::as_str)
                    .filter_map(|ip| ip.parse::<Ipv4Addr>().ok()),
            );
            let ports = spec["ports"].as_array().into_iter().flatten();
            taken
                .ports
                .extend(ports.filter_map(|port| port["nodePort"].as_u64()));
        }
        taken
    }
}

fn text<'a>(spec: &'a Map<String, Value>, key: &str) -> &'a str {
    spec.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The cluster IP part: keep, check or allocate `clusterIP`/`clusterIPs` and their families.
fn allocate_ip(
    spec: &mut Map<String, Value>,
    old: Option<&Value>,
    taken: &Taken,
    causes: &mut Vec<Cause>,
) {
    if text(spec, "type") == "ExternalName" {
        for key in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            spec.remove(key);
        }
        return;
    }
    let old_ip = old
        .and_then(|old| old["clusterIP"].as_str())
        .filter(|ip| !ip.is_empty());
    let wanted = match (
        spec.get("clusterIPs").and_then(Value::as_array),
        text(spec, "clusterIP"),
    ) {
        (Some(ips), _) if !ips.is_empty() => ips[0].as_str().unwrap_or_default().to_owned(),
        (_, ip) => ip.to_owned(),
    };
    let ip = match (old_ip, wanted.as_str()) {
        (Some(old_ip), "") => old_ip.to_owned(),
        (Some(old_ip), wanted) if wanted != old_ip => {
            let message = format!("Invalid value: [\"{wanted}\"]: may not change once set");
            causes.push(cause("FieldValueInvalid", "spec.clusterIPs[0]", message));
            return;
        }
        (Some(old_ip), _) => old_ip.to_owned(),
        (None, "None") => "None".to_owned(),
        (None, "") => match free_ip(taken) {
            Some(ip) => ip.to_string(),
            None => {
                let message = "Internal error: failed to allocate a serviceIP: range is full";
                causes.push(cause("FieldValueInvalid", "spec.clusterIPs", message));
                return;
            }
        },
        (None, wanted) => match check_ip(wanted, taken) {
            Ok(()) => wanted.to_owned(),
            Err(problem) => {
                causes.push(problem);
                return;
            }
        },
    };
    spec.insert("clusterIP".into(), json!(ip));
    spec.insert("clusterIPs".into(), json!([ip]));
    let dual = ip == "None"
        && spec
            .get("selector")
            .is_none_or(|s| s.as_object().is_none_or(Map::is_empty));
    let (families, policy) = match dual {
        true => (json!(["IPv4", "IPv6"]), "RequireDualStack"),
        false => (json!(["IPv4"]), "SingleStack"),
    };
    if !spec.contains_key("ipFamilies") {
        spec.insert("ipFamilies".into(), families);
    }
    if !spec.contains_key("ipFamilyPolicy") {
        spec.insert("ipFamilyPolicy".into(), json!(policy));
    }
}

/// The 422 cause for an address a create names, if it cannot have it.
fn check_ip(wanted: &str, taken: &Taken) -> Result<(), Cause> {
    let Ok(ip) = wanted.parse::<Ipv4Addr>() else {
        let message = format!(
            "Invalid value: \"{wanted}\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        );
        return Err(cause("FieldValueInvalid", "spec.clusterIPs[0]", message));
    };
    let failed = |why: &str| {
        let message =
            format!("Invalid value: [\"{wanted}\"]: failed to allocate IP {wanted}: {why}");
        Err(cause("FieldValueInvalid", "spec.clusterIPs", message))
    };
    if !in_range(ip) {
        return failed("the provided network does not match the current range");
    }
    if taken.ips.contains(&ip) {
        return failed("provided IP is already allocated");
    }
    Ok(())
}

/// Whether `ip` is an address of the range (its network and broadcast addresses aside).
fn in_range(ip: Ipv4Addr) -> bool {
    let (base, prefix) = RANGE;
    let (base, size) = (u32::from(base), 1u32 << (32 - prefix));
    let ip = u32::from(ip);
    ip > base && ip < base + size - 1
}

/// A free address at random, past the range's first (which a real server gives the
/// `kubernetes` Service); `None` when the range is full.
fn free_ip(taken: &Taken) -> Option<Ipv4Addr> {
    let (base, prefix) = RANGE;
    let (base, size) = (u32::from(base), 1u32 << (32 - prefix));
    let (first, last) = (base + 2, base + size - 2);
    let mut rng = rand::rng();
    for _ in 0..64 {
        let ip = Ipv4Addr::from(rng.random_range(first..=last));
        if !taken.ips.contains(&ip) {
            return Some(ip);
        }
    }
    (first..=last)
        .map(Ipv4Addr::from)
        .find(|ip| !taken.ips.contains(ip))
}

/// The node port part: check, keep or allocate each port's `nodePort`, or drop them.
fn allocate_node_ports(
    spec: &mut Map<String, Value>,
    old: Option<&Value>,
    taken: &Taken,
    causes: &mut Vec<Cause>,
) {
    let kind = text(spec, "type").to_owned();
    let wants = kind == "NodePort"
        || (kind == "LoadBalancer"
            && spec.get("allocateLoadBalancerNodePorts") != Some(&Value::Bool(false)));
    let old_ports: Vec<&Value> = old
        .and_then(|old| old["ports"].as_array())
        .map(|ports| ports.iter().collect())
        .unwrap_or_default();
    let was_cluster_ip = old.is_some_and(|old| old["type"] == "ClusterIP");
    let mut mine = BTreeSet::new();
    let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) else {
        return;
    };
    for (index, port) in ports.iter_mut().enumerate() {
        let Some(port) = port.as_object_mut() else {
            continue;
        };
        let field = format!("spec.ports[{index}].nodePort");
        let given = port
            .get("nodePort")
            .and_then(Value::as_u64)
            .filter(|p| *p != 0);
        if !wants {
            match (given, kind.as_str(), was_cluster_ip) {
                // Becoming ClusterIP (or ExternalName) drops the ports it held.
                (Some(_), "ClusterIP", false) | (Some(_), "ExternalName", _) if old.is_some() => {
                    port.remove("nodePort");
                }
                (Some(_), "ClusterIP", _) => causes.push(cause(
                    "FieldValueForbidden",
                    &field,
                    "Forbidden: may not be used when `type` is 'ClusterIP'",
                )),
                _ => {}
            }
            continue;
        }
        let kept = || {
            old_ports
                .iter()
                .find(|old| old["port"] == port["port"] && old["protocol"] == port["protocol"])
                .and_then(|old| old["nodePort"].as_u64())
        };
        let number = match given.or_else(kept) {
            Some(number) if !(NODE_PORTS.0..=NODE_PORTS.1).contains(&number) => {
                let message = format!(
                    "Invalid value: {number}: provided port is not in the valid range. The range of valid ports is {}-{}",
                    NODE_PORTS.0, NODE_PORTS.1
                );
                causes.push(cause("FieldValueInvalid", &field, message));
                continue;
            }
            Some(number) if taken.ports.contains(&number) => {
                let message =
                    format!("Invalid value: {number}: provided port is already allocated");
                causes.push(cause("FieldValueInvalid", &field, message));
                continue;
            }
            Some(number) => number,
            None => match free_port(taken, &mine) {
                Some(number) => number,
                None => {
                    let message = "Internal error: failed to allocate a nodePort: range is full";
                    causes.push(cause("FieldValueInvalid", &field, message));
                    continue;
                }
            },
        };
        mine.insert(number);
        port.insert("nodePort".into(), json!(number));
    }
}

/// A free node port at random, neither taken nor already given to this Service.
fn free_port(taken: &Taken, mine: &BTreeSet<u64>) -> Option<u64> {
    let free = |port: &u64| !taken.ports.contains(port) && !mine.contains(port);
    let mut rng = rand::rng();
    for _ in 0..64 {
        let port = rng.random_range(NODE_PORTS.0..=NODE_PORTS.1);
        if free(&port) {
            return Some(port);
        }
    }
    (NODE_PORTS.0..=NODE_PORTS.1).find(free)
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
