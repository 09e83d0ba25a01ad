use super::*;

#[test]
fn frames_start_with_their_channel_byte() {
    assert_eq!(&data_frame(STDIN, b"ls\n")[..], b"\x00ls\n");
    assert_eq!(&data_frame(STDIN, b"")[..], b"\x00");
    assert_eq!(&close_frame(STDIN)[..], [255, 0]);
    assert_eq!(
        &resize_frame(TerminalSize {
            width: 120,
            height: 40
        })[..],
        b"\x04{\"Width\":120,\"Height\":40}"
    );
}

#[test]
fn received_frames_split_into_channel_and_data_and_empty_ones_carry_nothing() {
    let (channel, data) = split_frame(&Bytes::from_static(b"\x02oops")).unwrap();
    assert_eq!((channel, &data[..]), (STDERR, &b"oops"[..]));
    let (channel, data) = split_frame(&Bytes::from_static(b"\x01")).unwrap();
    assert_eq!((channel, data.len()), (STDOUT, 0));
    assert_eq!(split_frame(&Bytes::new()), None);
}

#[test]
fn protocol_names_round_trip_and_only_v5_closes_stdin() {
    for protocol in Protocol::OFFERED {
        assert_eq!(Protocol::from_name(protocol.name()), Some(protocol));
    }
    assert_eq!(Protocol::OFFERED[0].name(), "v5.channel.k8s.io");
    assert_eq!(Protocol::from_name("channel.k8s.io"), None);
    assert_eq!(Protocol::from_name("v4.base64.channel.k8s.io"), None);
    assert!(Protocol::V5.can_close_stdin());
    assert!(!Protocol::V4.can_close_stdin());
}

#[test]
fn an_empty_error_channel_or_success_is_exit_code_zero() {
    assert_eq!(outcome(b""), Ok(Outcome::Exited(0)));
    assert_eq!(outcome(b" \n"), Ok(Outcome::Exited(0)));
    // What the stream translator writes when the command exits 0.
    assert_eq!(
        outcome(br#"{"metadata":{},"status":"Success"}"#),
        Ok(Outcome::Exited(0))
    );
}

#[test]
fn non_zero_exit_code_is_read_from_the_exit_code_cause() {
    let status = br#"{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], message: \"\"","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#;
    assert_eq!(outcome(status), Ok(Outcome::Exited(3)));
    let max = br#"{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"Other","message":"x"},{"reason":"ExitCode","message":"255"}]}}"#;
    assert_eq!(outcome(max), Ok(Outcome::Exited(255)));
}

#[test]
fn a_failure_without_exit_code_is_a_failure_to_run() {
    let status = br#"{"metadata":{},"status":"Failure","message":"Internal error occurred: error executing command in container: exec: \"nope\": executable file not found in $PATH","reason":"InternalError","code":500}"#;
    let Ok(Outcome::Failed(status)) = outcome(status) else {
        panic!("expected a failure");
    };
    assert_eq!(status.reason, "InternalError");
    assert!(status.message.contains("executable file not found"));
}

#[test]
fn broken_error_channels_are_protocol_errors() {
    let cases: [(&[u8], &str); 5] = [
        (b"not json", "error channel protocol error: expected ident"),
        (
            br#"{"status":"Failure","reason":"NonZeroExitCode"}"#,
            "NonZeroExitCode without details",
        ),
        (
            br#"{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[]}}"#,
            "no ExitCode cause given",
        ),
        (
            br#"{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"256"}]}}"#,
            "invalid exit code value \"256\"",
        ),
        (br#"{"message":"?"}"#, "a Status without `status`"),
    ];
    for (bytes, expected) in cases {
        let err = outcome(bytes).unwrap_err();
        assert!(
            err.contains(expected),
            "{err:?} should contain {expected:?}"
        );
    }
}
