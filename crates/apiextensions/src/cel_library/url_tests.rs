use serde_json::{Value, json};

fn eval(source: &str) -> Result<Value, String> {
    crate::Expression::compile(source)
        .map_err(|e| e.to_string())?
        .evaluate(&[])
}

#[test]
fn url_parts_are_read_as_go_reads_them() {
    for (source, want) in [
        (
            "isURL('https://example.com:80/path?query=val#frag')",
            json!(true),
        ),
        ("isURL('/absolute-path')", json!(true)),
        ("isURL('mailto:a@b.c')", json!(true)),
        ("isURL('relative/path')", json!(false)),
        ("isURL('https://a b/')", json!(false)),
        ("isURL('')", json!(false)),
        ("url('HTTPS://Example.com/').getScheme()", json!("https")),
        (
            "url('https://Example.com:8080/').getHost()",
            json!("Example.com:8080"),
        ),
        (
            "url('https://example.com:8080/').getHostname()",
            json!("example.com"),
        ),
        ("url('https://example.com:8080/').getPort()", json!("8080")),
        ("url('https://example.com/').getPort()", json!("")),
        ("url('https://[::1]:80/').getHostname()", json!("::1")),
        ("url('https://[::1]/').getHost()", json!("[::1]")),
        (
            "url('https://user:pw@example.com/').getHost()",
            json!("example.com"),
        ),
        ("url('/').getHost()", json!("")),
        (
            "url('https://example.com/a%20b/../c').getEscapedPath()",
            json!("/a%20b/../c"),
        ),
        (
            "url('https://example.com/a b').getEscapedPath()",
            json!("/a%20b"),
        ),
        ("url('https://example.com').getEscapedPath()", json!("")),
        ("url('mailto:a@b.c').getEscapedPath()", json!("")),
        (
            "url('https://example.com/?a=1&a=2&b=x+y&c&bad;=1&d=%zz').getQuery()",
            json!({"a": ["1", "2"], "b": ["x y"], "c": [""]}),
        ),
        ("url('https://example.com/').getQuery()", json!({})),
        ("url('https://a.b/') == url('https://a.b/')", json!(true)),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
}

#[test]
fn bad_urls_are_errors_worded_as_v1_36() {
    let head = "URL parse error during conversion from string: ";
    for (source, want) in [
        ("url('')", format!(r#"{head}parse "": empty url"#)),
        (
            "url('example.com')",
            format!(r#"{head}parse "example.com": invalid URI for request"#),
        ),
        (
            "url(':x')",
            format!(r#"{head}parse ":x": missing protocol scheme"#),
        ),
        (
            "url('https://a:b/')",
            format!(r#"{head}parse "https://a:b/": invalid port ":b" after host"#),
        ),
        (
            "url('https://[::1/')",
            format!(r#"{head}parse "https://[::1/": missing ']' in host"#),
        ),
        (
            "url('https://a b/')",
            format!(r#"{head}parse "https://a b/": invalid character " " in host name"#),
        ),
        (
            "url('https://a/%zz')",
            format!(r#"{head}parse "https://a/%zz": invalid URL escape "%zz""#),
        ),
        (
            "url('https://a/%')",
            format!(r#"{head}parse "https://a/%": invalid URL escape "%""#),
        ),
        (
            "url('https://a\\tb/')",
            format!(r#"{head}parse "https://a\tb/": net/url: invalid control character in URL"#),
        ),
        ("ip('1.2.3.4').getHost()", "no such overload".to_string()),
    ] {
        assert_eq!(eval(source), Err(want), "{source}");
    }
}
