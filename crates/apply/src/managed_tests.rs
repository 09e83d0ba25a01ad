use serde_json::json;

use super::*;
use crate::error::Conflict;

fn entry(manager: &str, apply: bool, subresource: &str, fields: serde_json::Value) -> Entry {
    Entry {
        manager: manager.into(),
        apply,
        api_version: "apps/v1".into(),
        subresource: subresource.into(),
        time: Some("2026-01-01T00:00:00Z".into()),
        set: FieldSet::from_fields_v1(&fields).unwrap(),
    }
}

#[test]
fn managers_are_described_as_the_real_server_names_them() {
    assert_eq!(entry("m1", true, "", json!({})).describe(), "\"m1\"");
    assert_eq!(
        entry("ctrl", false, "status", json!({})).describe(),
        "\"ctrl\" with subresource \"status\" using apps/v1"
    );
    assert_eq!(
        entry("kubectl-create", false, "", json!({})).describe(),
        "\"kubectl-create\" using apps/v1"
    );
}

#[test]
fn appliers_are_one_manager_across_api_versions_updaters_are_not() {
    let mut a = entry("m", true, "", json!({}));
    let mut b = a.clone();
    b.api_version = "v1beta1".into();
    assert!(a.same_manager(&b));
    a.apply = false;
    b.apply = false;
    assert!(!a.same_manager(&b));
    let status = entry("m", false, "status", json!({}));
    assert!(!a.same_manager(&status));
}

#[test]
fn one_conflict_names_manager_and_path_in_the_message() {
    let owner = entry("kubectl-create", false, "", json!({}));
    let set = FieldSet::from_fields_v1(&json!({"f:data": {"f:a": {}}})).unwrap();
    let err = conflict_error(&[(&owner, set)]);
    assert!(err.is_conflict());
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-create\" using apps/v1: .data.a"
    );
    assert_eq!(
        err,
        Error::Conflicts(vec![Conflict {
            manager: "\"kubectl-create\" using apps/v1".into(),
            field: ".data.a".into(),
        }])
    );
}

#[test]
fn several_conflicts_are_grouped_by_manager_in_sorted_order() {
    let b = entry("b", true, "", json!({}));
    let a = entry("a", false, "", json!({}));
    let b_set = FieldSet::from_fields_v1(&json!({"f:x": {}})).unwrap();
    let a_set = FieldSet::from_fields_v1(&json!({"f:y": {}, "f:z": {}})).unwrap();
    let err = conflict_error(&[(&b, b_set), (&a, a_set)]);
    assert_eq!(
        err.to_string(),
        "Apply failed with 3 conflicts: conflicts with \"a\" using apps/v1:\n- .y\n- .z\nconflicts with \"b\":\n- .x"
    );
    let Error::Conflicts(conflicts) = err else {
        panic!("not a conflict: {err:?}");
    };
    let fields: Vec<&str> = conflicts.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, [".y", ".z", ".x"]);
}

#[test]
fn entries_sort_apply_first_then_by_time_then_manager() {
    let mut late_update = entry("a", false, "", json!({"f:a": {}}));
    late_update.time = Some("2026-01-02T00:00:00Z".into());
    let early_update = entry("z", false, "", json!({"f:b": {}}));
    let apply = entry("m", true, "", json!({"f:c": {}}));
    let encoded = encode(vec![late_update, early_update, apply]);
    let managers: Vec<&str> = encoded
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["m", "z", "a"]);
    assert_eq!(encoded[0]["operation"], "Apply");
    assert_eq!(encoded[0]["fieldsType"], "FieldsV1");
    assert_eq!(encoded[0]["fieldsV1"], json!({"f:c": {}}));
}

#[test]
fn managed_fields_reads_entries_and_rejects_unknown_operations() {
    let object = json!({"metadata": {"managedFields": [
        {"manager": "m", "operation": "Update", "apiVersion": "v1", "subresource": "status",
         "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}
    ]}});
    let entries = managed_fields(&object).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].subresource, "status");
    assert!(!entries[0].apply);
    let bad =
        json!({"metadata": {"managedFields": [{"operation": "Patch", "fieldsType": "FieldsV1"}]}});
    let err = managed_fields(&bad).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidManagedFields(
            "metadata.managedFields[0].operation: unknown value \"Patch\"".into()
        )
    );
}

#[test]
fn times_change_only_for_entries_whose_fields_changed() {
    let before = vec![
        entry("a", false, "", json!({"f:a": {}})),
        entry("b", false, "", json!({"f:b": {}})),
    ];
    let mut after = before.clone();
    after[1].set = FieldSet::from_fields_v1(&json!({"f:c": {}})).unwrap();
    after.push(entry("c", true, "", json!({"f:d": {}})));
    stamp_times(&mut after, &before, "2030-01-01T00:00:00Z");
    assert_eq!(after[0].time.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(after[1].time.as_deref(), Some("2030-01-01T00:00:00Z"));
    assert_eq!(after[2].time.as_deref(), Some("2030-01-01T00:00:00Z"));
}

#[test]
fn stripped_metadata_is_never_owned() {
    let all = FieldSet::from_fields_v1(&json!({
        "f:apiVersion": {}, "f:kind": {},
        "f:metadata": {".": {}, "f:name": {}, "f:uid": {}, "f:labels": {"f:a": {}}}
    }))
    .unwrap();
    assert_eq!(
        all.difference(&stripped()).to_fields_v1(),
        json!({"f:metadata": {"f:labels": {"f:a": {}}}})
    );
}
