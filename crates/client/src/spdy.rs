//! The part of SPDY/3.1 framing that a port-forward client needs, without I/O: opening streams,
//! sending data and half-closes, answering pings, and reading the frames a kubelet sends back.
//!
//! Mirrors `github.com/moby/spdystream/spdy` (`write.go`, `read.go`, `types.go`), the framer
//! client-go's `transport/spdy` and the kubelet use; client-go 1.31+ tunnels it through a
//! WebSocket (`tools/portforward/tunneling_connection.go`), which is how it is used here.
//!
//! # Header blocks without a compressor
//! SPDY compresses every header block with zlib in one stream per direction, primed with a
//! dictionary. A reader of a zlib stream needs the dictionary only when the stream's header says
//! one was used (`FDICT`), so this client sends its few header blocks as *stored* (uncompressed)
//! deflate blocks in a stream that declares no dictionary: valid zlib that any SPDY peer reads,
//! with no compression library. It never needs the content of the server's header blocks
//! (`SYN_REPLY` carries nothing a port-forward uses), so it skips them undecoded.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// SPDY version 3 in a control frame's first two bytes (with the control bit).
const CONTROL_VERSION: u16 = 0x8003;
const TYPE_SYN_STREAM: u16 = 1;
const TYPE_SYN_REPLY: u16 = 2;
const TYPE_RST_STREAM: u16 = 3;
const TYPE_PING: u16 = 6;
const TYPE_GOAWAY: u16 = 7;
/// The flag that ends a stream's direction (on data, `SYN_STREAM` and `SYN_REPLY` frames).
const FLAG_FIN: u8 = 0x01;
/// A zlib stream header: deflate, 32 KiB window, no dictionary, checksum valid.
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];
/// An empty, non-final stored deflate block: zlib's sync-flush marker.
const SYNC_FLUSH: [u8; 5] = [0x00, 0x00, 0x00, 0xff, 0xff];
/// Frames longer than this are refused (SPDY lengths are 24 bits; kubelets send 32 KiB chunks).
const MAX_FRAME: usize = 1 << 24;

/// A frame received from the peer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// Data on a stream; `fin` ends the peer's side of it.
    Data {
        stream_id: u32,
        fin: bool,
        data: Bytes,
    },
    /// The peer accepted a stream (its headers are skipped).
    SynReply { stream_id: u32, fin: bool },
    /// The peer opened a stream (only a test's peer reads these); headers skipped.
    SynStream { stream_id: u32, fin: bool },
    /// The peer aborted a stream.
    RstStream { stream_id: u32, status: u32 },
    /// A ping to answer with the same id.
    Ping { id: u32 },
    /// The peer is closing the connection.
    GoAway,
    /// A frame a port-forward has no use for (settings, window updates, headers).
    Ignored,
}

/// Writes the client's frames. Header blocks share one zlib stream per connection.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    /// The zlib stream header has been sent (with the first header block).
    zlib_started: bool,
}

impl Writer {
    /// `SYN_STREAM` opening `stream_id` with `headers` (names lower-case, as SPDY wants).
    pub(crate) fn syn_stream(
        &mut self,
        stream_id: u32,
        headers: &[(&str, &str)],
        fin: bool,
    ) -> Bytes {
        let block = self.header_block(headers);
        let mut frame = BytesMut::with_capacity(18 + block.len());
        control_header(
            &mut frame,
            TYPE_SYN_STREAM,
            if fin { FLAG_FIN } else { 0 },
            10 + block.len(),
        );
        frame.put_u32(stream_id & 0x7fff_ffff);
        frame.put_u32(0); // associated-to stream
        frame.put_u8(0); // priority (3 bits) and unused
        frame.put_u8(0); // slot
        frame.put_slice(&block);
        frame.freeze()
    }

    /// The header block of `headers` as a piece of this connection's zlib stream.
    fn header_block(&mut self, headers: &[(&str, &str)]) -> Vec<u8> {
        let mut plain = Vec::new();
        plain.put_u32(headers.len() as u32);
        for (name, value) in headers {
            plain.put_u32(name.len() as u32);
            plain.put_slice(name.as_bytes());
            plain.put_u32(value.len() as u32);
            plain.put_slice(value.as_bytes());
        }
        let mut block = Vec::with_capacity(plain.len() + 7);
        if !self.zlib_started {
            block.extend_from_slice(&ZLIB_HEADER);
            self.zlib_started = true;
        }
        // Stored blocks of at most 65535 bytes, none final: the stream goes on in the next frame.
        for chunk in plain.chunks(usize::from(u16::MAX)) {
            let len = chunk.len() as u16;
            block.put_u8(0); // BFINAL = 0, BTYPE = 00 (stored), padded to the byte
            block.put_u16_le(len);
            block.put_u16_le(!len);
            block.put_slice(chunk);
        }
        // An empty stored block, as zlib's sync flush writes: it makes the reader hand over the
        // block's data without reading past this frame (Go's reader would otherwise fail at the
        // end of the frame and stay failed for the next one).
        block.extend_from_slice(&SYNC_FLUSH);
        block
    }
}

/// A data frame on `stream_id`; an empty one with `fin` half-closes the stream.
pub(crate) fn data_frame(stream_id: u32, fin: bool, data: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(8 + data.len());
    frame.put_u32(stream_id & 0x7fff_ffff);
    frame.put_u8(if fin { FLAG_FIN } else { 0 });
    put_u24(&mut frame, data.len());
    frame.put_slice(data);
    frame.freeze()
}

/// The answer to a ping.
pub(crate) fn ping_frame(id: u32) -> Bytes {
    let mut frame = BytesMut::with_capacity(12);
    control_header(&mut frame, TYPE_PING, 0, 4);
    frame.put_u32(id);
    frame.freeze()
}

fn control_header(frame: &mut BytesMut, kind: u16, flags: u8, length: usize) {
    frame.put_u16(CONTROL_VERSION);
    frame.put_u16(kind);
    frame.put_u8(flags);
    put_u24(frame, length);
}

fn put_u24(frame: &mut BytesMut, value: usize) {
    let bytes = (value as u32).to_be_bytes();
    frame.put_slice(&bytes[1..]);
}

/// Reassembles frames from the byte stream (WebSocket messages split it anywhere).
#[derive(Debug, Default)]
pub(crate) struct Reader {
    buffer: BytesMut,
}

impl Reader {
    /// Appends received bytes.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete frame, if one has arrived.
    ///
    /// # Errors
    /// A description of a frame no SPDY/3 peer sends (another version, a truncated control
    /// frame body).
    pub(crate) fn next_frame(&mut self) -> Result<Option<Frame>, String> {
        if self.buffer.len() < 8 {
            return Ok(None);
        }
        let length = (usize::from(self.buffer[5]) << 16)
            | (usize::from(self.buffer[6]) << 8)
            | usize::from(self.buffer[7]);
        if length >= MAX_FRAME || self.buffer.len() < 8 + length {
            return Ok(None);
        }
        let mut frame = self.buffer.split_to(8 + length).freeze();
        let first = frame.get_u32();
        let flags = frame.get_u8();
        frame.advance(3);
        let fin = flags & FLAG_FIN != 0;
        if first & 0x8000_0000 == 0 {
            return Ok(Some(Frame::Data {
                stream_id: first,
                fin,
                data: frame,
            }));
        }
        let version = (first >> 16) as u16;
        if version != CONTROL_VERSION {
            return Err(format!(
                "SPDY: control frame of version {:#06x}, want 3",
                version & 0x7fff
            ));
        }
        let kind = (first & 0xffff) as u16;
        let needs = match kind {
            TYPE_SYN_STREAM => 10,
            TYPE_SYN_REPLY | TYPE_PING => 4,
            TYPE_RST_STREAM | TYPE_GOAWAY => 8,
            _ => 0,
        };
        if frame.len() < needs {
            return Err(format!(
                "SPDY: control frame {kind} of {} bytes is too short",
                frame.len()
            ));
        }
        Ok(Some(match kind {
            TYPE_SYN_STREAM => Frame::SynStream {
                stream_id: frame.get_u32() & 0x7fff_ffff,
                fin,
            },
            TYPE_SYN_REPLY => Frame::SynReply {
                stream_id: frame.get_u32() & 0x7fff_ffff,
                fin,
            },
            TYPE_RST_STREAM => Frame::RstStream {
                stream_id: frame.get_u32() & 0x7fff_ffff,
                status: frame.get_u32(),
            },
            TYPE_PING => Frame::Ping {
                id: frame.get_u32(),
            },
            TYPE_GOAWAY => Frame::GoAway,
            _ => Frame::Ignored,
        }))
    }
}

#[cfg(test)]
#[path = "spdy_tests.rs"]
mod tests;
