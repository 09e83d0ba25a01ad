use serde_json::{Value, json};

fn eval(source: &str) -> Result<Value, String> {
    crate::Expression::compile(source)
        .map_err(|e| e.to_string())?
        .evaluate(&[])
}

#[test]
fn list_functions_answer_as_v1_36() {
    for (source, want) in [
        ("[1, 2, 2, 3].isSorted()", json!(true)),
        ("['b', 'a'].isSorted()", json!(false)),
        ("[].isSorted()", json!(true)),
        ("[1, 2, 3].sum()", json!(6)),
        ("[1.5, 2.5].sum()", json!(4.0)),
        ("[1u, 2u].sum()", json!(3)),
        ("[].sum()", json!(0)),
        ("[3, 1, 2].min()", json!(1)),
        ("['b', 'c', 'a'].max()", json!("c")),
        ("[1, 2, 1].indexOf(1)", json!(0)),
        ("[1, 2, 1].lastIndexOf(1)", json!(2)),
        ("['a'].indexOf('b')", json!(-1)),
        ("'abcb'.indexOf('b')", json!(1)),
        ("'abcb'.lastIndexOf('b')", json!(3)),
        ("sets.contains([1, 2, 3], [3, 1])", json!(true)),
        ("sets.contains([1, 2], [3])", json!(false)),
        ("sets.contains([], [])", json!(true)),
        ("sets.equivalent([1, 2, 2], [2, 1])", json!(true)),
        ("sets.equivalent([1, 2], [1])", json!(false)),
        ("sets.intersects([1, 2], [2, 3])", json!(true)),
        ("sets.intersects([1], [])", json!(false)),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
}

#[test]
fn list_function_errors_are_v1_36_s() {
    for (source, want) in [
        ("[].min()", "min called on empty list"),
        ("[].max()", "max called on empty list"),
        ("[9223372036854775807, 1].sum()", "integer overflow"),
        ("['a', 'b'].sum()", "no such overload"),
        ("[1, 'a'].isSorted()", "no such overload"),
        ("[{}, {}].min()", "no such overload"),
    ] {
        assert_eq!(eval(source), Err(want.to_string()), "{source}");
    }
}
