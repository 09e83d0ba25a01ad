use super::*;
use k8s_openapi::api::core::v1::ConfigMap;

fn event(kind: &str, name: &str) -> String {
    format!(
        r#"{{"type":"{kind}","object":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","resourceVersion":"1"}}}}}}"#
    ) + "\n"
}

fn drain(decoder: &mut WatchDecoder) -> Vec<Result<WatchEvent<ConfigMap>>> {
    let mut out = Vec::new();
    while let Some(e) = decoder.next_event(false) {
        decoder.check_invariants();
        out.push(e.map(|(event, _)| event));
    }
    out
}

fn name(event: &WatchEvent<ConfigMap>) -> String {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
            o.metadata.name.clone().unwrap_or_default()
        }
        WatchEvent::Bookmark(b) => format!("bookmark@{}", b.metadata.resource_version),
        WatchEvent::Error(s) => format!("error {}", s.code),
    }
}

fn decode_all(chunks: &[&[u8]]) -> Vec<String> {
    let mut decoder = WatchDecoder::new("/w");
    let mut names = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        names.extend(
            drain(&mut decoder)
                .into_iter()
                .map(|e| e.map(|e| name(&e)).unwrap_or_else(|e| e.to_string())),
        );
    }
    if let Some(last) = decoder.finish::<ConfigMap>(false) {
        names.push(
            last.map(|(e, _)| name(&e))
                .unwrap_or_else(|e| e.to_string()),
        );
    }
    names
}

#[test]
fn several_events_in_one_chunk() {
    let body = event("ADDED", "a") + &event("MODIFIED", "b") + &event("DELETED", "c");
    assert_eq!(decode_all(&[body.as_bytes()]), ["a", "b", "c"]);
}

#[test]
fn events_split_at_every_byte_offset() {
    let body = event("ADDED", "a") + &event("MODIFIED", "b");
    for cut in 0..=body.len() {
        let (x, y) = body.as_bytes().split_at(cut);
        assert_eq!(decode_all(&[x, y]), ["a", "b"], "cut at {cut}");
    }
}

#[test]
fn large_event_over_many_chunks() {
    let big = "z".repeat(2_000_000);
    let body = format!(
        r#"{{"type":"ADDED","object":{{"metadata":{{"name":"big"}},"data":{{"v":"{big}"}}}}}}"#
    ) + "\n"
        + &event("ADDED", "next");
    let chunks: Vec<&[u8]> = body.as_bytes().chunks(8191).collect();
    assert_eq!(decode_all(&chunks), ["big", "next"]);
}

#[test]
fn bookmark_and_error_events_are_typed() {
    let body = concat!(
        r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
        "\n",
        r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old","reason":"Expired","code":410}}"#,
        "\n",
    );
    assert_eq!(decode_all(&[body.as_bytes()]), ["bookmark@99", "error 410"]);
}

#[test]
fn last_line_without_newline_and_blank_lines_are_handled() {
    let body = "\n\r\n".to_owned() + event("ADDED", "a").trim_end();
    assert_eq!(decode_all(&[body.as_bytes()]), ["a"]);
}

#[test]
fn malformed_line_error_names_line_and_excerpt() {
    let body = event("ADDED", "a") + "{\"type\":\"ADDED\",\"object\": nope}\n";
    let out = decode_all(&[body.as_bytes()]);
    assert_eq!(out[0], "a");
    assert!(
        out[1].starts_with("watch /w: malformed event on line 2:"),
        "{}",
        out[1]
    );
    assert!(
        out[1].contains("line starts: {\"type\":\"ADDED\",\"object\": nope}"),
        "{}",
        out[1]
    );
}

#[tokio::test]
async fn stream_ends_after_a_malformed_line() {
    let body = event("ADDED", "a") + "garbage\n" + &event("ADDED", "b");
    let mut stream = WatchStream::<ConfigMap>::new(Body::from_bytes(body), "/w", None);
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    assert!(matches!(
        stream.next().await,
        Some(Err(Error::WatchDecode { line: 2, .. }))
    ));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn clean_end_of_body_ends_the_stream() {
    let mut stream =
        WatchStream::<ConfigMap>::new(Body::from_bytes(event("ADDED", "a")), "/w", None);
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    assert!(stream.next().await.is_none());
    assert!(stream.next().await.is_none());
}

/// A body that never yields: a dead connection.
struct Silent;
impl http_body::Body for Silent {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;
    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<bytes::Bytes>, Self::Error>>>
    {
        std::task::Poll::Pending
    }
}

#[tokio::test(start_paused = true)]
async fn silent_connection_hits_the_idle_timeout() {
    let idle = Duration::from_secs(330);
    let mut stream = WatchStream::<ConfigMap>::new(Body::new(Silent), "/w", Some(idle));
    let started = tokio::time::Instant::now();
    let next = stream.next().await;
    assert!(
        matches!(next, Some(Err(Error::WatchIdle { after, .. })) if after == idle),
        "{next:?}"
    );
    assert_eq!(started.elapsed(), idle);
    assert!(stream.next().await.is_none());
}

/// A body that yields `chunk`, then fails like a connection reset by the peer.
struct ResetAfter(Option<bytes::Bytes>);
impl http_body::Body for ResetAfter {
    type Data = bytes::Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<bytes::Bytes>, Self::Error>>>
    {
        std::task::Poll::Ready(Some(match self.0.take() {
            Some(chunk) => Ok(http_body::Frame::data(chunk)),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "connection reset by peer",
            )),
        }))
    }
}

#[tokio::test]
async fn broken_body_is_an_interrupted_watch_not_a_failed_request() {
    // Half an event is buffered when the connection dies: it is dropped, not decoded.
    let body = event("ADDED", "a") + r#"{"type":"ADDED","obj"#;
    let mut stream = WatchStream::<ConfigMap>::new(
        Body::new(ResetAfter(Some(body.into()))),
        "/w?watch=true",
        None,
    );
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    let next = stream.next().await;
    match &next {
        Some(Err(Error::WatchInterrupted { url, message })) => {
            assert_eq!(url, "/w?watch=true");
            assert!(message.contains("connection reset by peer"), "{message}");
        }
        other => panic!("expected WatchInterrupted, got {other:?}"),
    }
    assert!(stream.next().await.is_none(), "the stream ends after it");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Arbitrary bytes in arbitrary chunks: events or an error, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), cut in any::<prop::sample::Index>()) {
            let at = cut.index(bytes.len() + 1);
            let _ = decode_all(&[&bytes[..at], &bytes[at..]]);
        }
    }
}
