use cel::{Context, Program, Value};

use super::*;

fn counted(source: &str, limit: u64) -> Counted {
    let program = Program::compile(source).unwrap();
    let mut ctx = Context::default();
    register(&mut ctx);
    ctx.add_variable_from_value("xs", Value::from(vec![1i64, 2, 3]));
    ctx.add_variable_from_value("s", Value::from("abcdefghijklmnopqrstuvwxyz"));
    run(&instrument(program.expression()), &ctx, limit)
}

/// The rewritten rule gives what the rule gives, macros and short circuits included.
#[test]
fn counting_keeps_the_value() {
    let sources = [
        "xs.all(x, x > 0)",
        "xs.exists(x, x == 2)",
        "xs.exists_one(x, x == 2)",
        "xs.map(x, x * 2)",
        "xs.map(x, x > 1, x * 2)",
        "xs.filter(x, x > 1)",
        "xs.all(x, 1 / (x - 2) > 0) || true",
        "xs.exists(x, 1 / (x - 2) > 0)",
        "{'a': xs}.a[1] + size(xs)",
        "has({'a': 1}.a) && !has({'a': 1}.b)",
        "s.startsWith('abc') && s.matches('^[a-z]+$') && s.contains('xyz')",
        "s + s == s.substring(0) + s",
        "xs.size() > 1 ? 'many' : 'few'",
        "type(xs) == list",
    ];
    let context = Context::default();
    for source in sources {
        let program = Program::compile(source).unwrap();
        let mut plain = context.new_inner_scope();
        plain.add_variable_from_value("xs", Value::from(vec![1i64, 2, 3]));
        plain.add_variable_from_value("s", Value::from("abcdefghijklmnopqrstuvwxyz"));
        assert_eq!(
            counted(source, u64::MAX).result,
            program.execute(&plain),
            "{source}"
        );
    }
}

/// cel-go's runtime costs: a read 1, a list literal 10, a call by its operands' sizes, the
/// macro loops by their steps, `&&`, `||`, `?:` and literals nothing.
#[test]
fn costs_are_cel_gos() {
    let cost = |source: &str| counted(source, u64::MAX).cost;
    // xs 1; per item: the condition 2, the accumulator 1, x 1, `>` 1; the result 1.
    assert_eq!(cost("xs.all(x, x > 0)"), 1 + 3 * 5 + 1);
    assert_eq!(cost("[1, 2, 3].all(x, x > 0)"), 10 + 3 * 5 + 1);
    // The `[]` start 10; per item the accumulator, `[..]` 10, x, `*`, `+`; the result.
    assert_eq!(cost("xs.map(x, x * 2)"), 1 + 10 + 3 * 14 + 1);
    // The guard each time (x, `>`), the append twice, the accumulator once.
    assert_eq!(cost("xs.filter(x, x > 1)"), 1 + 10 + 3 * 2 + 2 * 13 + 1 + 1);
    assert_eq!(cost("xs.exists_one(x, x == 2)"), 1 + 3 * 2 + 2 + 2 + 2);
    // 26 characters: `matches` ceil(27 / 10) × ceil(8 / 4), `contains` ceil(2.6) × ceil(0.3).
    assert_eq!(cost("s.matches('^[a-z]+$')"), 1 + 3 * 2);
    assert_eq!(cost("s.contains('xyz')"), 1 + 3);
    // The receiver's size, though the evaluator reads the argument first.
    assert_eq!(cost("s.startsWith('a')"), 1 + 3);
    assert_eq!(cost("'abc'.matches('^[a-z]+$')"), 2);
    assert_eq!(cost("s + s == s"), 3 + 6 + 3);
    assert_eq!(cost("has({'a': 1}.a)"), 30);
}

/// Past the limit the evaluation stops, even where `||` would have absorbed the error.
#[test]
fn the_limit_stops_the_evaluation() {
    let stopped = counted("xs.all(x, x > 0) || true", 10);
    assert!(stopped.exceeded);
    assert!(stopped.cost > 10);
    let within = counted("xs.all(x, x > 0)", 17);
    assert!(!within.exceeded);
    assert_eq!(within.result, Ok(Value::Bool(true)));
}
