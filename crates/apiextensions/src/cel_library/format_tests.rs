use serde_json::{Value, json};

fn eval(source: &str) -> Result<Value, String> {
    crate::Expression::compile(source)
        .map_err(|e| e.to_string())?
        .evaluate(&[])
}

const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[test]
fn valid_strings_give_no_errors() {
    for (format, value) in [
        ("dns1123Label", "my-name"),
        ("dns1123Subdomain", "example.com"),
        ("dns1035Label", "abc-123"),
        ("qualifiedName", "example.com/MyName"),
        ("dns1123LabelPrefix", "my-name-"),
        ("dns1123SubdomainPrefix", "example.com-"),
        ("dns1035LabelPrefix", "a-"),
        ("labelValue", ""),
        ("labelValue", "my_value.1"),
        ("uri", "https://example.com/x"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
        ("byte", "aGVsbG8="),
        ("date", "2021-01-01"),
        ("datetime", "2021-01-01T00:00:00Z"),
    ] {
        let source = format!("format.{format}().validate('{value}').hasValue()");
        assert_eq!(eval(&source), Ok(json!(false)), "{source}");
    }
}

#[test]
fn invalid_strings_give_apimachinery_messages() {
    let long = "a".repeat(64);
    for (format, value, want) in [
        ("dns1123Label", "My_Name", json!([LABEL])),
        ("dns1123Label", "a.b", json!(["must not contain dots"])),
        (
            "dns1123Label",
            long.as_str(),
            json!(["must be no more than 63 characters"]),
        ),
        ("dns1123LabelPrefix", "-", json!([LABEL])),
        (
            "dns1035Label",
            "1abc",
            json!([
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]),
        ),
        (
            "qualifiedName",
            "/x",
            json!(["prefix part must be non-empty"]),
        ),
        (
            "qualifiedName",
            "a/b/c",
            json!([
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ]),
        ),
        (
            "labelValue",
            "-x",
            json!([
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]),
        ),
        ("uri", "x", json!([r#"parse "x": invalid URI for request"#])),
        ("uuid", "x", json!(["does not match the UUID format"])),
        ("byte", "!", json!(["invalid base64"])),
        ("date", "2021-13-01", json!(["invalid date"])),
        ("datetime", "yesterday", json!(["invalid datetime"])),
    ] {
        let source = format!("format.{format}().validate('{value}').value()");
        assert_eq!(eval(&source), Ok(want), "{source}");
    }
}

#[test]
fn named_formats_are_optional() {
    for (source, want) in [
        ("format.named('dns1123Label').hasValue()", json!(true)),
        ("format.named('nope').hasValue()", json!(false)),
        (
            "format.named('labelValue').value().validate('ok').hasValue()",
            json!(false),
        ),
        (
            "format.dns1123Label() == format.named('dns1123Label').value()",
            json!(true),
        ),
        ("format.dns1123Label() == format.labelValue()", json!(false)),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
    assert_eq!(
        eval("ip('1.2.3.4').validate('x')"),
        Err("no such overload".to_string())
    );
}
