use super::*;

fn taken(ips: &[&str], ports: &[u64]) -> Taken {
    Taken {
        ips: ips.iter().map(|ip| ip.parse().unwrap()).collect(),
        ports: ports.iter().copied().collect(),
    }
}

fn spec(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn messages(causes: &[Cause]) -> Vec<String> {
    causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

#[test]
fn a_new_service_gets_a_free_address_of_the_range_past_its_first() {
    let mut causes = Vec::new();
    let mut s = spec(json!({"type": "ClusterIP"}));
    allocate_ip(&mut s, None, &taken(&[], &[]), &mut causes);
    let ip: Ipv4Addr = s["clusterIP"].as_str().unwrap().parse().unwrap();
    assert!(in_range(ip) && ip != Ipv4Addr::new(10, 96, 0, 1), "{ip}");
    assert_eq!(s["clusterIPs"], json!([ip.to_string()]));
    assert_eq!(s["ipFamilies"], json!(["IPv4"]));
    assert_eq!(s["ipFamilyPolicy"], "SingleStack");
    assert!(causes.is_empty());
}

#[test]
fn named_addresses_are_checked_as_v1_36_words_it() {
    let taken = taken(&["10.96.0.50"], &[]);
    let mut causes = Vec::new();
    for wanted in ["10.96.0.50", "10.1.0.50", "banana", "10.96.0.51"] {
        let mut s = spec(json!({"clusterIP": wanted}));
        allocate_ip(&mut s, None, &taken, &mut causes);
    }
    assert_eq!(
        messages(&causes),
        [
            "spec.clusterIPs: Invalid value: [\"10.96.0.50\"]: failed to allocate IP 10.96.0.50: provided IP is already allocated",
            "spec.clusterIPs: Invalid value: [\"10.1.0.50\"]: failed to allocate IP 10.1.0.50: the provided network does not match the current range",
            "spec.clusterIPs[0]: Invalid value: \"banana\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ]
    );
}

#[test]
fn headless_services_allocate_nothing_and_without_a_selector_ask_for_both_families() {
    let mut causes = Vec::new();
    let mut with = spec(json!({"clusterIP": "None", "selector": {"a": "b"}}));
    allocate_ip(&mut with, None, &taken(&[], &[]), &mut causes);
    assert_eq!(
        (
            &with["clusterIPs"],
            &with["ipFamilies"],
            &with["ipFamilyPolicy"]
        ),
        (&json!(["None"]), &json!(["IPv4"]), &json!("SingleStack"))
    );
    let mut without = spec(json!({"clusterIP": "None"}));
    allocate_ip(&mut without, None, &taken(&[], &[]), &mut causes);
    assert_eq!(
        (&without["ipFamilies"], &without["ipFamilyPolicy"]),
        (&json!(["IPv4", "IPv6"]), &json!("RequireDualStack"))
    );
    assert!(causes.is_empty());
}

#[test]
fn an_update_keeps_the_address_and_may_not_change_it_and_external_name_releases_it() {
    let old = json!({"type": "ClusterIP", "clusterIP": "10.96.0.50", "clusterIPs": ["10.96.0.50"]});
    let mut causes = Vec::new();
    let mut left_out = spec(json!({"type": "ClusterIP"}));
    allocate_ip(&mut left_out, Some(&old), &taken(&[], &[]), &mut causes);
    assert_eq!(left_out["clusterIP"], "10.96.0.50");
    let mut changed = spec(json!({"clusterIP": "10.96.0.51", "clusterIPs": ["10.96.0.51"]}));
    allocate_ip(&mut changed, Some(&old), &taken(&[], &[]), &mut causes);
    assert_eq!(
        messages(&causes),
        ["spec.clusterIPs[0]: Invalid value: [\"10.96.0.51\"]: may not change once set"]
    );
    let mut external =
        spec(json!({"type": "ExternalName", "clusterIP": "10.96.0.50", "ipFamilies": ["IPv4"]}));
    allocate_ip(&mut external, Some(&old), &taken(&[], &[]), &mut causes);
    assert_eq!(external.get("clusterIP"), None);
    assert_eq!(external.get("ipFamilies"), None);
}

#[test]
fn node_ports_are_allocated_checked_kept_and_dropped() {
    let taken = taken(&[], &[30081]);
    let mut causes = Vec::new();
    let mut lb = spec(json!({"type": "LoadBalancer", "ports": [
        {"port": 80, "protocol": "TCP", "nodePort": 30080}, {"port": 81, "protocol": "TCP"}]}));
    allocate_node_ports(&mut lb, None, &taken, &mut causes);
    assert_eq!(lb["ports"][0]["nodePort"], 30080);
    let second = lb["ports"][1]["nodePort"].as_u64().unwrap();
    assert!((30000..=32767).contains(&second) && second != 30081 && second != 30080);

    for (kind, port) in [
        ("NodePort", 30081),
        ("NodePort", 20080),
        ("ClusterIP", 30082),
    ] {
        let mut s = spec(json!({"type": kind, "ports": [{"port": 80, "nodePort": port}]}));
        allocate_node_ports(&mut s, None, &taken, &mut causes);
    }
    assert_eq!(
        messages(&causes),
        [
            "spec.ports[0].nodePort: Invalid value: 30081: provided port is already allocated",
            "spec.ports[0].nodePort: Invalid value: 20080: provided port is not in the valid range. The range of valid ports is 30000-32767",
            "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
        ]
    );

    let old =
        json!({"type": "NodePort", "ports": [{"port": 80, "protocol": "TCP", "nodePort": 31000}]});
    let mut kept = spec(json!({"type": "NodePort", "ports": [{"port": 80, "protocol": "TCP"}]}));
    let mut none = Vec::new();
    allocate_node_ports(&mut kept, Some(&old), &taken, &mut none);
    assert_eq!(kept["ports"][0]["nodePort"], 31000);
    let mut back = spec(
        json!({"type": "ClusterIP", "ports": [{"port": 80, "protocol": "TCP", "nodePort": 31000}]}),
    );
    allocate_node_ports(&mut back, Some(&old), &taken, &mut none);
    assert_eq!(back["ports"][0].get("nodePort"), None);
    let mut off = spec(
        json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]}),
    );
    allocate_node_ports(&mut off, None, &taken, &mut none);
    assert_eq!(off["ports"][0].get("nodePort"), None);
    assert!(none.is_empty(), "{none:?}");
}
