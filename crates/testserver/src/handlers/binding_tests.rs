use super::*;

fn request(binding: Value) -> Result<BindingRequest, ApiError> {
    let Value::Object(binding) = binding else {
        panic!("not an object")
    };
    BindingRequest::read((Some("ns"), Some("p")), &binding)
}

fn pod() -> Value {
    json!({"metadata": {"name": "p", "uid": "u1"}, "spec": {}, "status": {"phase": "Pending"}})
}

#[test]
fn a_binding_is_read_and_checked_against_the_url() {
    let read = request(json!({"metadata": {"name": "p", "annotations": {"a": "1"}},
                              "target": {"name": "n"}}))
    .unwrap();
    assert_eq!(read.node, "n");
    assert_eq!(
        read.annotations,
        json!({"a": "1"}).as_object().cloned().unwrap()
    );
    let renamed = request(json!({"metadata": {"name": "q"}, "target": {"name": "n"}}));
    assert_eq!(renamed.unwrap_err().code, 400);
    let unnamed = request(json!({"target": {"name": "n"}}));
    assert_eq!(unnamed.unwrap_err().code, 400);
    let no_target = request(json!({"metadata": {"name": "p"}}));
    assert_eq!(no_target.unwrap_err().code, 500);
    let pod_kind =
        request(json!({"kind": "Pod", "metadata": {"name": "p"}, "target": {"name": "n"}}));
    assert_eq!(
        pod_kind.unwrap_err().message,
        "Pod in version \"v1\" cannot be handled as a Binding: converting (v1.Pod) to (core.Binding): unknown conversion"
    );
}

#[test]
fn binding_sets_the_node_merges_metadata_and_marks_the_pod_scheduled() {
    let read = request(
        json!({"metadata": {"name": "p", "annotations": {"a": "1"}, "labels": {"l": "2"}},
                              "target": {"name": "n"}}),
    )
    .unwrap();
    let next = bound(&pod(), &read, 7).unwrap();
    assert_eq!(next["spec"]["nodeName"], "n");
    assert_eq!(next["metadata"]["annotations"], json!({"a": "1"}));
    assert_eq!(next["metadata"]["labels"], json!({"l": "2"}));
    assert_eq!(next["status"]["conditions"][0]["type"], "PodScheduled");
    assert_eq!(next["status"]["conditions"][0]["status"], "True");
}

#[test]
fn binding_without_labels_leaves_labels_absent_but_adds_annotations() {
    let read = request(json!({"metadata": {"name": "p"}, "target": {"name": "n"}})).unwrap();
    let next = bound(&pod(), &read, 7).unwrap();
    assert_eq!(next["metadata"].get("labels"), None);
    assert_eq!(next["metadata"]["annotations"], json!({}));
}

#[test]
fn binding_is_refused_for_assigned_deleting_gated_or_mismatched_pods() {
    let read = request(json!({"metadata": {"name": "p"}, "target": {"name": "n"}})).unwrap();
    let mut assigned = pod();
    assigned["spec"]["nodeName"] = json!("m");
    let e = bound(&assigned, &read, 7).unwrap_err();
    assert_eq!((e.code, e.details.kind.as_str()), (409, "pods/binding"));
    assert!(
        e.message
            .ends_with("pod p is already assigned to node \"m\"")
    );
    let mut deleting = pod();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let e = bound(&deleting, &read, 7).unwrap_err();
    assert!(
        e.message
            .ends_with("pod p is being deleted, cannot be assigned to a host")
    );
    let mut gated = pod();
    gated["spec"]["schedulingGates"] = json!([{"name": "g"}]);
    let e = bound(&gated, &read, 7).unwrap_err();
    assert!(
        e.message
            .ends_with("pod p has non-empty .spec.schedulingGates")
    );
    let stale = request(json!({"metadata": {"name": "p", "resourceVersion": "6"},
                               "target": {"name": "n"}}))
    .unwrap();
    assert_eq!(bound(&pod(), &stale, 7).unwrap_err().details.kind, "pods");
    let other =
        request(json!({"metadata": {"name": "p", "uid": "u2"}, "target": {"name": "n"}})).unwrap();
    let e = bound(&pod(), &other, 7).unwrap_err();
    assert!(
        e.message
            .ends_with("Precondition failed: UID in precondition: u2, UID in object meta: u1")
    );
}

#[test]
fn a_failed_scheduled_condition_is_replaced_by_a_true_one() {
    let mut status = json!({"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    set_scheduled(&mut status);
    let condition = &status["conditions"][0];
    assert_eq!(condition["status"], "True");
    assert_eq!(condition.get("reason"), None);
    assert_ne!(condition["lastTransitionTime"], "2026-01-01T00:00:00Z");
    let before = status.clone();
    set_scheduled(&mut status);
    assert_eq!(status, before);
}
