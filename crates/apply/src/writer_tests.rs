use super::*;

#[test]
fn updates_are_named_by_field_manager_then_agent_then_unknown() {
    let mut writer = Writer {
        field_manager: Some("m".into()),
        agent: "curl".into(),
        force: false,
    };
    assert_eq!(writer.manager(), "m");
    writer.field_manager = None;
    assert_eq!(writer.manager(), "curl");
    assert_eq!(Writer::default().manager(), "unknown");
}

#[test]
fn an_apply_needs_a_field_manager_and_only_an_apply_may_force() {
    assert_eq!(
        Writer::default().applier(),
        Err(Error::FieldManagerRequired)
    );
    let agent_only = Writer {
        agent: "kubectl".into(),
        ..Writer::default()
    };
    assert_eq!(agent_only.applier(), Err(Error::FieldManagerRequired));
    let forced = Writer {
        field_manager: Some("m".into()),
        force: true,
        ..Writer::default()
    };
    assert_eq!(forced.applier(), Ok("m"));
    assert_eq!(forced.check_no_force(), Err(Error::ForceOutsideApply));
    assert_eq!(Writer::default().check_no_force(), Ok(()));
}
