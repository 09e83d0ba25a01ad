use serde_json::{Value, json};

fn eval(source: &str) -> Result<Value, String> {
    crate::Expression::compile(source)
        .map_err(|e| e.to_string())?
        .evaluate(&[])
}

#[test]
fn ip_functions_answer_as_netip() {
    for (source, want) in [
        ("isIP('1.2.3.4')", json!(true)),
        ("isIP('fe80::1')", json!(true)),
        ("isIP('01.2.3.4')", json!(false)),
        ("isIP('::ffff:1.2.3.4')", json!(false)),
        ("isIP('fe80::1%eth0')", json!(false)),
        ("isIP('')", json!(false)),
        ("ip.isCanonical('2001:db8::1')", json!(true)),
        ("ip.isCanonical('2001:DB8::1')", json!(false)),
        ("ip.isCanonical('2001:db8:0:0:0:0:0:1')", json!(false)),
        ("ip('10.0.0.1').family()", json!(4)),
        ("ip('::1').family()", json!(6)),
        ("ip('0.0.0.0').isUnspecified()", json!(true)),
        ("ip('127.0.0.2').isLoopback()", json!(true)),
        ("ip('224.0.0.9').isLinkLocalMulticast()", json!(true)),
        ("ip('ff02::1').isLinkLocalMulticast()", json!(true)),
        ("ip('ff05::1').isLinkLocalMulticast()", json!(false)),
        ("ip('169.254.1.1').isLinkLocalUnicast()", json!(true)),
        ("ip('fe80::1').isLinkLocalUnicast()", json!(true)),
        ("ip('10.0.0.1').isGlobalUnicast()", json!(true)),
        ("ip('255.255.255.255').isGlobalUnicast()", json!(false)),
        ("ip('fd00::1').isGlobalUnicast()", json!(true)),
        ("ip('ff00::1').isGlobalUnicast()", json!(false)),
        ("string(ip('2001:0db8::0001'))", json!("2001:db8::1")),
        ("string(ip('::1.2.3.4'))", json!("::102:304")),
        ("string(ip('1:0:0:2::'))", json!("1:0:0:2::")),
        ("string(ip('0:0:1::1'))", json!("0:0:1::1")),
        ("string(ip('1:0:0:1:0:0:0:1'))", json!("1:0:0:1::1")),
        ("ip.isCanonical('::')", json!(true)),
        ("ip('1.2.3.4') == ip('1.2.3.4')", json!(true)),
        ("ip('1.2.3.4') == ip('1.2.3.5')", json!(false)),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
}

#[test]
fn bad_ips_are_errors_worded_as_v1_36() {
    for (source, want) in [
        (
            "ip('1.2.3')",
            r#"IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short"#,
        ),
        (
            "ip('1.2.3.04')",
            r#"IP Address "1.2.3.04" parse error during conversion from string: ParseAddr("1.2.3.04"): IPv4 field has octet with leading zero"#,
        ),
        (
            "ip('1.2.3.256')",
            r#"IP Address "1.2.3.256" parse error during conversion from string: ParseAddr("1.2.3.256"): IPv4 field has value >255"#,
        ),
        (
            "ip('1..2.3')",
            r#"IP Address "1..2.3" parse error during conversion from string: ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")"#,
        ),
        (
            "ip('foo')",
            r#"IP Address "foo" parse error during conversion from string: ParseAddr("foo"): unable to parse IP"#,
        ),
        (
            "ip('::g')",
            r#"IP Address "::g" parse error during conversion from string: ParseAddr("::g"): each colon-separated field must have at least one digit (at "g")"#,
        ),
        (
            "ip('1:2:3:4:5:6:7:8:9')",
            r#"IP Address "1:2:3:4:5:6:7:8:9" parse error during conversion from string: ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#,
        ),
        (
            "ip('1::2::3')",
            r#"IP Address "1::2::3" parse error during conversion from string: ParseAddr("1::2::3"): multiple :: in address (at ":3")"#,
        ),
        (
            "ip('1:2:3:4:5:6:7::8')",
            r#"IP Address "1:2:3:4:5:6:7::8" parse error during conversion from string: ParseAddr("1:2:3:4:5:6:7::8"): the :: must expand to at least one field of zeros"#,
        ),
        (
            "ip('12345::')",
            r#"IP Address "12345::" parse error during conversion from string: ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#,
        ),
        (
            "ip('1:2')",
            r#"IP Address "1:2" parse error during conversion from string: ParseAddr("1:2"): address string too short"#,
        ),
        (
            "ip('1:2:3:4:5:6:7:8:')",
            r#"IP Address "1:2:3:4:5:6:7:8:" parse error during conversion from string: ParseAddr("1:2:3:4:5:6:7:8:"): colon must be followed by more characters (at ":")"#,
        ),
        (
            "ip('1:1.2.3.4')",
            r#"IP Address "1:1.2.3.4" parse error during conversion from string: ParseAddr("1:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")"#,
        ),
        (
            "ip('::1.2.3')",
            r#"IP Address "::1.2.3" parse error during conversion from string: ParseAddr("::1.2.3"): IPv4 address too short"#,
        ),
        (
            "ip('fe80::1%')",
            r#"IP Address "fe80::1%" parse error during conversion from string: ParseAddr("fe80::1%"): zone must be a non-empty string"#,
        ),
        (
            "ip('fe80::1%eth0')",
            r#"IP address "fe80::1%eth0" with zone value is not allowed"#,
        ),
        (
            "ip('::ffff:1.2.3.4')",
            r#"IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed"#,
        ),
        ("cidr('1.2.3.0/24').family()", "no such overload"),
        ("ip(1)", "no such overload"),
    ] {
        assert_eq!(eval(source), Err(want.to_string()), "{source}");
    }
}

#[test]
fn cidr_functions_answer_as_netip() {
    for (source, want) in [
        ("isCIDR('10.0.0.0/8')", json!(true)),
        ("isCIDR('10.0.0.0/33')", json!(false)),
        ("isCIDR('10.0.0.0/08')", json!(false)),
        ("isCIDR('10.0.0.0')", json!(false)),
        ("cidr('10.1.2.3/8').prefixLength()", json!(8)),
        ("string(cidr('10.1.2.3/8'))", json!("10.1.2.3/8")),
        ("string(cidr('10.1.2.3/8').masked())", json!("10.0.0.0/8")),
        ("string(cidr('2001:db8::1/32').ip())", json!("2001:db8::1")),
        ("cidr('10.0.0.0/8').containsIP('10.9.9.9')", json!(true)),
        (
            "cidr('10.0.0.0/8').containsIP(ip('11.0.0.0'))",
            json!(false),
        ),
        ("cidr('::/0').containsIP('1.2.3.4')", json!(false)),
        (
            "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
            json!(true),
        ),
        (
            "cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
            json!(false),
        ),
        (
            "cidr('10.0.0.0/8').containsCIDR(cidr('10.0.0.0/8'))",
            json!(true),
        ),
        (
            "cidr('0.0.0.0/0').containsIP('255.255.255.255')",
            json!(true),
        ),
        ("cidr('::/0').containsCIDR('2001:db8::/128')", json!(true)),
    ] {
        assert_eq!(eval(source), Ok(want), "{source}");
    }
}

#[test]
fn bad_cidrs_are_errors_worded_as_v1_36() {
    let head = "network address parse error during conversion from string: ";
    for (source, want) in [
        (
            "cidr('10.0.0.0')",
            format!(r#"{head}{head}netip.ParsePrefix("10.0.0.0"): no '/'"#),
        ),
        (
            "cidr('10.0.0.0/33')",
            format!(r#"{head}{head}netip.ParsePrefix("10.0.0.0/33"): prefix length out of range"#),
        ),
        (
            "cidr('10.0.0.0/+8')",
            format!(r#"{head}{head}netip.ParsePrefix("10.0.0.0/+8"): bad bits after slash: "+8""#),
        ),
        (
            "cidr('::ffff:1.2.3.4/96')",
            format!(r#"{head}IPv4-mapped IPv6 address "::ffff:1.2.3.4/96" is not allowed"#),
        ),
        (
            "cidr('fe80::1%eth0/64')",
            format!(
                r#"{head}{head}netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix"#
            ),
        ),
        (
            "cidr('10.0.0.0/99999999999999999999999')",
            format!(
                r#"{head}{head}netip.ParsePrefix("10.0.0.0/99999999999999999999999"): bad bits after slash: "99999999999999999999999""#
            ),
        ),
    ] {
        assert_eq!(eval(source), Err(want), "{source}");
    }
}
