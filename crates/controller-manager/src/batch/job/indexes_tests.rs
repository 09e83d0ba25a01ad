use super::*;

#[test]
fn completed_indexes_are_written_as_the_api_writes_them() {
    let intervals = Intervals::default().with([7, 0, 3, 4, 5, 1, 9, 10]);
    assert_eq!(intervals.to_string(), "0,1,3-5,7,9,10");
    assert_eq!(intervals.total(), 8);
    assert!(intervals.has(4));
    assert!(!intervals.has(6));
}

#[test]
fn parsing_drops_indexes_beyond_completions_and_garbage() {
    let intervals = Intervals::parse("0-2,x,4,6-9", 8);
    assert_eq!(intervals.to_string(), "0-2,4,6,7");
    assert_eq!(Intervals::parse("", 3), Intervals::default());
}

#[test]
fn pending_indexes_skip_done_and_running_ones() {
    let done = Intervals::parse("0,2", 6);
    assert_eq!(first_pending(&done, [1, 4], 2, 6), vec![3, 5]);
    assert_eq!(first_pending(&done, [], 10, 3), vec![1]);
}

#[test]
fn generated_names_keep_the_index_and_fit_the_limit() {
    assert_eq!(generate_name("web", 3), "web-3-");
    let long = "a".repeat(70);
    let name = generate_name(&long, 12);
    assert_eq!(name.len(), 58);
    assert!(name.ends_with("a-12-"));
}

#[test]
fn a_pod_without_a_valid_index_has_none() {
    let mut pod = Pod::default();
    assert_eq!(completion_index(&pod), None);
    pod.metadata.annotations = Some([(COMPLETION_INDEX.to_owned(), "-1".to_owned())].into());
    assert_eq!(completion_index(&pod), None);
    pod.metadata.annotations = Some([(COMPLETION_INDEX.to_owned(), "4".to_owned())].into());
    assert_eq!(completion_index(&pod), Some(4));
}
