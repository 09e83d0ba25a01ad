use serde_json::{Value, json};

fn eval(source: &str) -> Result<Value, String> {
    crate::Expression::compile(source)
        .map_err(|e| e.to_string())?
        .evaluate(&[])
}

#[test]
fn find_and_find_all_give_the_matches() {
    for (source, want) in [
        ("'abc 123 def 456'.find('[0-9]+')", json!("123")),
        ("'abc'.find('[0-9]+')", json!("")),
        ("'abc 123 def 456'.findAll('[0-9]+')", json!(["123", "456"])),
        ("'a1b2c3'.findAll('[0-9]', 2)", json!(["1", "2"])),
        ("'a1b2c3'.findAll('[0-9]', 0)", json!([])),
        ("'a1b2c3'.findAll('[0-9]', -1)", json!(["1", "2", "3"])),
        ("'abc'.findAll('x')", json!([])),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
}

#[test]
fn bad_patterns_are_errors() {
    let result = eval("'a'.find('(')");
    assert!(
        matches!(&result, Err(e) if e.starts_with("Illegal regex: ")),
        "{result:?}"
    );
    assert_eq!(eval("'a'.find(1)"), Err("no such overload".to_string()));
}
