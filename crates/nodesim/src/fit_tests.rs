use super::*;
use serde_json::{Value, json};

fn node(name: &str, extra: Value) -> Node {
    let mut node = json!({
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "spec": {},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "3"}},
    });
    merge(&mut node, extra);
    serde_json::from_value(node).unwrap()
}

fn pod(spec: Value) -> Pod {
    let mut pod = json!({"metadata": {"name": "p", "namespace": "ns"},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    merge(&mut pod["spec"], spec);
    serde_json::from_value(pod).unwrap()
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        for (k, v) in from {
            match into.get_mut(&k) {
                Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                _ => {
                    into.insert(k, v);
                }
            }
        }
    }
}

fn requests(cpu: &str, memory: &str) -> Value {
    json!({"containers": [{"name": "c", "image": "nginx",
                           "resources": {"requests": {"cpu": cpu, "memory": memory}}}]})
}

#[test]
fn pod_requests_sum_containers_with_init_containers_as_a_floor_plus_overhead() {
    let p = pod(json!({
        "containers": [
            {"name": "a", "image": "x", "resources": {"requests": {"cpu": "100m", "memory": "1Mi"}}},
            {"name": "b", "image": "x", "resources": {"limits": {"cpu": "200m"}}}],
        "initContainers": [{"name": "i", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        "overhead": {"cpu": "10m"},
    }));
    let r = Requests::of_pod(p.spec.as_ref().unwrap());
    assert_eq!(
        r,
        Requests {
            cpu: 1010,
            memory: 1024 * 1024 * 1000,
            pods: 1
        }
    );
}

#[test]
fn a_pod_fits_a_node_with_room() {
    let n = node("n", json!({}));
    let p = pod(requests("1", "1Gi"));
    let wanted = Requests::of_pod(p.spec.as_ref().unwrap());
    assert_eq!(check(&p, wanted, &n, Requests::default()), Ok(()));
}

#[test]
fn resources_short_are_each_named_in_the_plugin_order() {
    let n = node("n", json!({}));
    let p = pod(requests("1", "1Gi"));
    let wanted = Requests::of_pod(p.spec.as_ref().unwrap());
    let used = Requests {
        cpu: 1500,
        memory: 4 * 1024 * 1024 * 1024 * 1000,
        pods: 3,
    };
    assert_eq!(
        check(&p, wanted, &n, used),
        Err(Refusal::Resources(vec![
            "Too many pods",
            "Insufficient cpu",
            "Insufficient memory"
        ]))
    );
}

#[test]
fn taints_refuse_unless_tolerated() {
    let tainted = node(
        "n",
        json!({"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}),
    );
    let soft = node(
        "s",
        json!({"spec": {"taints": [{"key": "k", "effect": "PreferNoSchedule"}]}}),
    );
    let plain = pod(json!({}));
    let none = Requests::default();
    assert_eq!(check(&plain, none, &tainted, none), Err(Refusal::Taint));
    assert_eq!(
        check(&plain, none, &soft, none),
        Ok(()),
        "PreferNoSchedule does not filter"
    );
    for toleration in [
        json!({"key": "k", "operator": "Equal", "value": "v"}),
        json!({"key": "k", "value": "v", "effect": "NoSchedule"}),
        json!({"key": "k", "operator": "Exists"}),
        json!({"operator": "Exists"}),
    ] {
        let tolerant = pod(json!({"tolerations": [toleration.clone()]}));
        assert_eq!(
            check(&tolerant, none, &tainted, none),
            Ok(()),
            "{toleration}"
        );
    }
    for toleration in [
        json!({"key": "k", "value": "other"}),
        json!({"key": "k", "operator": "Exists", "effect": "NoExecute"}),
    ] {
        let intolerant = pod(json!({"tolerations": [toleration.clone()]}));
        assert_eq!(
            check(&intolerant, none, &tainted, none),
            Err(Refusal::Taint),
            "{toleration}"
        );
    }
}

#[test]
fn unschedulable_nodes_refuse_unless_the_pod_tolerates_their_taint() {
    let cordoned = node("n", json!({"spec": {"unschedulable": true}}));
    let none = Requests::default();
    assert_eq!(
        check(&pod(json!({})), none, &cordoned, none),
        Err(Refusal::Unschedulable)
    );
    let tolerant = pod(json!({"tolerations": [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}));
    assert_eq!(check(&tolerant, none, &cordoned, none), Ok(()));
}

#[test]
fn node_selector_and_required_affinity_must_match() {
    let n = node("n", json!({"metadata": {"labels": {"size": "4"}}}));
    let none = Requests::default();
    let cases = [
        (json!({"nodeSelector": {"zone": "a"}}), true),
        (json!({"nodeSelector": {"zone": "b"}}), false),
        (
            affinity(json!({"key": "zone", "operator": "In", "values": ["a", "b"]})),
            true,
        ),
        (
            affinity(json!({"key": "zone", "operator": "NotIn", "values": ["a"]})),
            false,
        ),
        (
            affinity(json!({"key": "gpu", "operator": "DoesNotExist"})),
            true,
        ),
        (affinity(json!({"key": "gpu", "operator": "Exists"})), false),
        (
            affinity(json!({"key": "size", "operator": "Gt", "values": ["3"]})),
            true,
        ),
        (
            affinity(json!({"key": "size", "operator": "Lt", "values": ["3"]})),
            false,
        ),
    ];
    for (spec, fits) in cases {
        let expected = if fits { Ok(()) } else { Err(Refusal::Selector) };
        assert_eq!(
            check(&pod(spec.clone()), none, &n, none),
            expected,
            "{spec}"
        );
    }
}

fn affinity(expression: Value) -> Value {
    json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expression]}]}}}})
}

#[test]
fn the_least_loaded_fitting_node_is_chosen_then_by_name() {
    let (a, b, c) = (
        node("a", json!({})),
        node("b", json!({})),
        node("c", json!({})),
    );
    let p = pod(requests("500m", "1Gi"));
    let busy = Requests {
        cpu: 1000,
        memory: 0,
        pods: 1,
    };
    let nodes = [
        candidate(&a, busy),
        candidate(&b, Requests::default()),
        candidate(&c, Requests::default()),
    ];
    assert_eq!(choose(&p, &nodes), Ok("b".to_string()));
}

#[test]
fn a_search_stops_once_enough_nodes_fit_and_says_how_many_it_looked_at() {
    let (a, b, c, d) = (
        node(
            "a",
            json!({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}),
        ),
        node("b", json!({})),
        node("c", json!({})),
        node("d", json!({})),
    );
    let p = pod(requests("100m", "1Mi"));
    let busy = Requests {
        cpu: 1000,
        memory: 0,
        pods: 1,
    };
    // b is busier than c, and d is idle but after the two that are enough.
    let nodes = [
        candidate(&a, Requests::default()),
        candidate(&b, busy),
        candidate(&c, Requests::default()),
        candidate(&d, Requests::default()),
    ];
    let (chosen, processed) = choose_among(&p, nodes.iter().copied(), 2);
    assert_eq!((chosen, processed), (Ok("c".to_string()), 3));
    let (chosen, processed) = choose_among(&p, nodes.iter().copied(), 1);
    assert_eq!((chosen, processed), (Ok("b".to_string()), 2));
    // Nothing fits: every Node is looked at and refused.
    let (chosen, processed) = choose_among(&p, nodes[..1].iter().copied(), 2);
    assert_eq!(processed, 1);
    assert!(chosen.is_err());
}

#[test]
fn the_fit_error_reads_as_the_scheduler_writes_it() {
    let (a, b, c) = (
        node("a", json!({})),
        node("b", json!({"metadata": {"labels": {"zone": "b"}}})),
        node(
            "c",
            json!({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}),
        ),
    );
    let p = pod(json!({"nodeSelector": {"zone": "a"},
                       "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]}));
    let nodes = [
        candidate(&a, Requests::default()),
        candidate(&b, Requests::default()),
        candidate(&c, Requests::default()),
    ];
    let error = choose(&p, &nodes).unwrap_err();
    assert_eq!(
        error.message(),
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, \
         1 node(s) had untolerated taint(s). preemption: 0/3 nodes are available: \
         1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        choose(&p, &[]).unwrap_err().message(),
        "no nodes available to schedule pods"
    );
}

fn candidate(node: &Node, used: Requests) -> Candidate<'_> {
    Candidate {
        node,
        used,
        free: Requests::allocatable(node),
    }
}

#[test]
fn a_daemon_pods_match_fields_term_binds_it_to_the_named_node_only() {
    // The daemonset controller pins each Pod with `matchFields: metadata.name In [<node>]`.
    let p = pod(
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}}),
    );
    let (a, b, c) = (
        node("a", json!({})),
        node("b", json!({})),
        node("c", json!({})),
    );
    let nodes = [
        candidate(&a, Requests::default()),
        candidate(&b, Requests::default()),
        candidate(&c, Requests::default()),
    ];
    assert_eq!(choose(&p, &nodes), Ok("b".to_string()));
    assert_eq!(choose(&p, &nodes[..1]).map_err(|e| e.message()), Err(
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.".to_string()));
}
