use super::*;

/// Frames written by the Go framer the kubelet and client-go use (`moby/spdystream/spdy`,
/// `Framer.WriteFrame`): SYN_REPLY 1 (no headers), SYN_REPLY 3 (`X: y`), DATA 3 `HELLO`, DATA 3
/// FIN, DATA 1 `refused` + FIN, PING 7, RST_STREAM 5 CANCEL, SETTINGS, WINDOW_UPDATE, GOAWAY.
const GO_FRAMES: &str = "80030002000000140000000178f9e3c6a7c26260606000000000ffff8003000200000013000000036260606004e10a105109000000ffff000000030000000548454c4c4f000000030100000000000001010000077265667573656480030006000000040000000780030003000000080000000500000005800300040000000c0000000100000007000100008003000900000008000000030000006480030007000000080000000300000000";

/// What kubectl v1.37 sent on a plain SPDY port-forward (`KUBECTL_PORT_FORWARD_WEBSOCKETS=false`,
/// `kubectl port-forward pod/web 18080:8080`, one local connection writing `hello\n`), recorded
/// after the `101`: SYN_STREAM 1 {streamtype: error, port: 8080, requestid: 0} (its header block
/// compressed with the dictionary), DATA 1 FIN, SYN_STREAM 3 {streamtype: data, ...} (compressed
/// against the first block), DATA 3 `hello\n`, DATA 3 FIN.
const KUBECTL_PORT_FORWARD: &str = "800300010000003e0000000100000000000078f9e3c6a7c202253a48f95b044eea160616060c0c0c9c4590f8ca04\
     a5634603704a2c294a4dcc851636aca9a0a800000000ffff0000000101000000800300010000001a000000030000\
     00000000826a469502954389848d04000000ffff000000030000000668656c6c6f0a0000000301000000";

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn frames_written_by_the_go_framer_are_read() {
    let mut reader = Reader::default();
    reader.push(&hex(GO_FRAMES));
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        frames.push(frame);
    }
    assert_eq!(
        frames,
        [
            Frame::SynReply {
                stream_id: 1,
                fin: false,
                headers: vec![],
            },
            Frame::SynReply {
                stream_id: 3,
                fin: false,
                headers: vec![("x".to_owned(), "y".to_owned())],
            },
            Frame::Data {
                stream_id: 3,
                fin: false,
                data: Bytes::from_static(b"HELLO")
            },
            Frame::Data {
                stream_id: 3,
                fin: true,
                data: Bytes::new()
            },
            Frame::Data {
                stream_id: 1,
                fin: true,
                data: Bytes::from_static(b"refused")
            },
            Frame::Ping { id: 7 },
            Frame::RstStream {
                stream_id: 5,
                status: 5
            },
            Frame::Ignored,
            Frame::Ignored,
            Frame::GoAway,
        ]
    );
}

#[test]
fn frames_split_anywhere_are_reassembled() {
    let bytes = hex(GO_FRAMES);
    let mut reader = Reader::default();
    let mut frames = 0;
    for byte in bytes {
        reader.push(&[byte]);
        while reader.next_frame().unwrap().is_some() {
            frames += 1;
        }
    }
    assert_eq!(frames, 10);
}

#[test]
fn a_control_frame_of_another_version_is_refused() {
    let mut reader = Reader::default();
    reader.push(&[0x80, 0x02, 0, 6, 0, 0, 0, 4, 0, 0, 0, 1]);
    assert_eq!(
        reader.next_frame().unwrap_err(),
        "SPDY: control frame of version 0x0002, want 3"
    );
    let mut reader = Reader::default();
    reader.push(&[0x80, 0x03, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1]);
    assert!(reader.next_frame().unwrap_err().contains("too short"));
}

/// The client's frames, byte for byte. Go's framer (`Framer.ReadFrame`) reads these as
/// SYN_STREAM 1 {Streamtype: error, Port: 8080, Requestid: 0}, DATA 1 FIN, SYN_STREAM 3
/// {Streamtype: data, ...}, DATA 3 `hi`, DATA 3 FIN, PING 7: checked when this was written.
#[test]
fn client_frames_are_exact() {
    let mut writer = Writer::default();
    let mut bytes = Vec::new();
    let headers = |kind| [("streamtype", kind), ("port", "8080"), ("requestid", "0")];
    bytes.extend_from_slice(&writer.syn_stream(1, &headers("error"), false));
    bytes.extend_from_slice(&data_frame(1, true, b""));
    bytes.extend_from_slice(&writer.syn_stream(3, &headers("data"), false));
    bytes.extend_from_slice(&data_frame(3, false, b"hi"));
    bytes.extend_from_slice(&data_frame(3, true, b""));
    bytes.extend_from_slice(&ping_frame(7));
    assert_eq!(
        to_hex(&bytes),
        "8003000100000053000000010000000000007801003d00c2ff000000030000000a73747265616d74797065000000\
         056572726f7200000004706f72740000000438303830000000097265717565737469640000000130000000ffff00\
         00000101000000800300010000005000000003000000000000003c00c3ff000000030000000a73747265616d7479\
         7065000000046461746100000004706f727400000004383038300000000972657175657374696400000001300000\
         00ffff000000030000000268690000000301000000800300060000000400000007"
    );
    let mut reader = Reader::default();
    reader.push(&bytes);
    assert_eq!(
        reader.next_frame().unwrap(),
        Some(Frame::SynStream {
            stream_id: 1,
            fin: false,
            headers: owned(&headers("error")),
        })
    );
    reader.next_frame().unwrap();
    let Some(Frame::SynStream { headers: data, .. }) = reader.next_frame().unwrap() else {
        panic!("the data stream's SYN_STREAM should follow");
    };
    assert_eq!(data, owned(&headers("data")));
}

fn owned(headers: &[(&str, &str)]) -> Headers {
    headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

/// The server's frames read back: a reply with headers, a reset, a going-away.
#[test]
fn server_frames_read_back() {
    let mut writer = Writer::default();
    let mut reader = Reader::default();
    reader.push(&writer.syn_reply(1, &[], false));
    reader.push(&writer.syn_reply(3, &[("X-Why", "because")], true));
    reader.push(&rst_stream_frame(5, REFUSED_STREAM));
    reader.push(&goaway_frame(5));
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        frames.push(frame);
    }
    assert_eq!(
        frames,
        [
            Frame::SynReply {
                stream_id: 1,
                fin: false,
                headers: vec![]
            },
            Frame::SynReply {
                stream_id: 3,
                fin: true,
                headers: owned(&[("x-why", "because")])
            },
            Frame::RstStream {
                stream_id: 5,
                status: REFUSED_STREAM
            },
            Frame::GoAway,
        ]
    );
}

#[test]
fn a_header_block_that_does_not_inflate_is_refused() {
    let mut reader = Reader::default();
    // A SYN_REPLY whose block is no zlib stream (bad header checksum).
    reader.push(&[0x80, 0x03, 0, 2, 0, 0, 0, 6, 0, 0, 0, 1, 0x78, 0x00]);
    let err = reader.next_frame().unwrap_err();
    assert!(err.contains("header block of stream 1"), "{err}");
    // A block that inflates but is cut short: a count of 2 and one name only.
    let mut writer = Writer::default();
    let mut frame = writer.syn_reply(1, &[("a", "b")], false).to_vec();
    let mut reader = Reader::default();
    // Claim two headers: the count's last byte sits after the zlib header and stored-block header.
    frame[12 + 2 + 5 + 3] = 2;
    reader.push(&frame);
    assert!(reader.next_frame().unwrap_err().contains("malformed"));
}

#[test]
fn the_dictionary_is_spdy3s() {
    // The id Go's framer writes after FDICT (`78f9 e3c6a7c2` in GO_FRAMES) is its Adler-32.
    assert_eq!(DICTIONARY.len(), 1423);
    let (mut a, mut b) = (1u32, 0u32);
    for byte in DICTIONARY {
        a = (a + u32::from(*byte)) % 65521;
        b = (b + a) % 65521;
    }
    assert_eq!((b << 16) | a, 0xe3c6_a7c2);
}

#[test]
fn a_kubectl_port_forward_is_read_with_its_compressed_headers() {
    let mut reader = Reader::default();
    reader.push(&hex(KUBECTL_PORT_FORWARD));
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        frames.push(frame);
    }
    let headers = |kind| owned(&[("streamtype", kind), ("port", "8080"), ("requestid", "0")]);
    let sorted = |frame: &Frame| match frame {
        Frame::SynStream { headers, .. } => {
            let mut headers = headers.clone();
            headers.sort();
            headers
        }
        _ => vec![],
    };
    let mut expected_error = headers("error");
    expected_error.sort();
    let mut expected_data = headers("data");
    expected_data.sort();
    assert_eq!(sorted(&frames[0]), expected_error);
    assert_eq!(sorted(&frames[2]), expected_data);
    assert!(matches!(
        frames[0],
        Frame::SynStream {
            stream_id: 1,
            fin: false,
            ..
        }
    ));
    assert!(matches!(
        frames[2],
        Frame::SynStream {
            stream_id: 3,
            fin: false,
            ..
        }
    ));
    assert_eq!(
        frames[1..]
            .iter()
            .filter(|f| !matches!(f, Frame::SynStream { .. }))
            .collect::<Vec<_>>(),
        [
            &Frame::Data {
                stream_id: 1,
                fin: true,
                data: Bytes::new()
            },
            &Frame::Data {
                stream_id: 3,
                fin: false,
                data: Bytes::from_static(b"hello\n")
            },
            &Frame::Data {
                stream_id: 3,
                fin: true,
                data: Bytes::new()
            },
        ]
    );
}
