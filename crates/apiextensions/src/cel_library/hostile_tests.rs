//! Every library function, given odd strings: each answer is a value or an error, never a panic.

const INPUTS: [&str; 24] = [
    "",
    "%",
    "%%",
    "%2",
    "[",
    "]",
    "::",
    ":::",
    "/",
    "//",
    "1.2.3.4/999999999999999999999999",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
    "0.0.0.0/0",
    "é.ü:Ω/ß",
    "https://[%25]/",
    "https://é@[::1%25é]:/%é?é=%é&;",
    "18446744073709551616.0.0",
    "v",
    "0.0.0-0.a.-",
    "1.2.3+é",
    "1e99999999999999999999Ki",
    "-",
    "a-",
    "(?P<",
];

#[test]
fn odd_strings_give_values_or_errors() {
    let calls = [
        "ip(s).family()",
        "isIP(s)",
        "ip.isCanonical(s)",
        "string(cidr(s).masked())",
        "cidr(s).containsIP(s)",
        "cidr(s).containsCIDR(s)",
        "isCIDR(s)",
        "isURL(s)",
        "url(s).getHostname() + url(s).getPort() + url(s).getEscapedPath()",
        "url(s).getQuery()",
        "semver(s, true).major()",
        "isSemver(s)",
        "format.qualifiedName().validate(s)",
        "format.dns1123LabelPrefix().validate(s)",
        "format.uri().validate(s)",
        "s.findAll(s, 3)",
        "quantity(s).sign()",
    ];
    for input in INPUTS {
        let value = serde_json::Value::String(input.to_string());
        for call in calls {
            let expression = crate::Expression::compile(call).map_err(|e| e.to_string());
            if let Ok(expression) = expression {
                let _ = expression.evaluate(&[("s", &value)]);
            }
        }
    }
}
