use serde_json::{Value, json};

fn eval(source: &str) -> Result<Value, String> {
    crate::Expression::compile(source)
        .map_err(|e| e.to_string())?
        .evaluate(&[])
}

#[test]
fn versions_compare_as_blang_semver() {
    for (source, want) in [
        ("isSemver('1.2.3')", json!(true)),
        ("isSemver('1.2.3-rc.1+build.5')", json!(true)),
        ("isSemver('v1.2.3')", json!(false)),
        ("isSemver('v1.2.3', true)", json!(true)),
        ("isSemver('1.2', true)", json!(true)),
        ("isSemver('1.2-rc', true)", json!(false)),
        ("isSemver('01.2.3')", json!(false)),
        ("semver('v01.002', true).minor()", json!(2)),
        ("semver('1.2.3').major()", json!(1)),
        ("semver('1.2.3').patch()", json!(3)),
        ("semver('18446744073709551615.0.0').major()", json!(-1)),
        (
            "semver('1.2.3').isGreaterThan(semver('1.2.2'))",
            json!(true),
        ),
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", json!(true)),
        (
            "semver('1.0.0').isGreaterThan(semver('1.0.0-rc.1'))",
            json!(true),
        ),
        (
            "semver('1.0.0-rc.2').compareTo(semver('1.0.0-rc.10'))",
            json!(-1),
        ),
        (
            "semver('1.0.0-2').compareTo(semver('1.0.0-alpha'))",
            json!(-1),
        ),
        ("semver('1.0.0-a.b').compareTo(semver('1.0.0-a'))", json!(1)),
        ("semver('1.0.0+a').compareTo(semver('1.0.0+b'))", json!(0)),
        ("semver('1.0.0+a') == semver('1.0.0+b')", json!(true)),
        ("semver('1.0.0') == semver('1.0.1')", json!(false)),
        ("quantity('2Gi').compareTo(quantity('1Gi'))", json!(1)),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
}

#[test]
fn bad_versions_are_errors_worded_as_v1_36() {
    for (source, want) in [
        ("semver('')", "Version string empty"),
        ("semver('1.2')", "No Major.Minor.Patch elements found"),
        (
            "semver('v1.2.3')",
            r#"Invalid character(s) found in major number "v1""#,
        ),
        (
            "semver('1.02.3')",
            r#"Minor number must not contain leading zeroes "02""#,
        ),
        (
            "semver('1.2.x')",
            r#"Invalid character(s) found in patch number "x""#,
        ),
        ("semver('1.2.3-')", "Prerelease is empty"),
        (
            "semver('1.2.3-01')",
            r#"Numeric PreRelease version must not contain leading zeroes "01""#,
        ),
        (
            "semver('1.2.3-a_b')",
            r#"Invalid character(s) found in prerelease "a_b""#,
        ),
        ("semver('1.2.3+')", "Build meta data is empty"),
        (
            "semver('1..3')",
            r#"strconv.ParseUint: parsing "": invalid syntax"#,
        ),
        (
            "semver('99999999999999999999.0.0')",
            r#"strconv.ParseUint: parsing "99999999999999999999": value out of range"#,
        ),
        (
            "semver('1.2-rc', true)",
            "short version cannot contain PreRelease/Build meta data",
        ),
        (
            "semver('1.2.3').isGreaterThan(quantity('1'))",
            "no such overload",
        ),
        ("semver(1)", "no such overload"),
    ] {
        assert_eq!(eval(source), Err(want.to_string()), "{source}");
    }
}
