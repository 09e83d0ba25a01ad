//! SPDY/3.1 framing without I/O, for both ends of a Kubernetes stream: opening and accepting
//! streams, data and half-closes, resets, pings and `GOAWAY`, and the header blocks, compressed
//! with zlib primed by SPDY/3's dictionary. The client's exec, attach and port-forward use it,
//! and so does the simulated kubelet of `kubegen-nodesim`, which serves the same streams.
//!
//! Mirrors `github.com/moby/spdystream/spdy` (`write.go`, `read.go`, `types.go`,
//! `dictionary.go`), the framer client-go's `transport/spdy`, kube-apiserver and the kubelet use;
//! client-go 1.31+ tunnels it through a WebSocket for port-forward
//! (`tools/portforward/tunneling_connection.go`).
//!
//! # Header blocks
//! SPDY compresses every header block with zlib in one stream per direction, primed with a
//! dictionary (`spdy_dictionary.bin`, the 1,423 bytes of the SPDY/3 draft, section 2.6.10.1).
//! - **Read:** [`Reader`] inflates every header block (`SYN_STREAM`, `SYN_REPLY`, `HEADERS`) in
//!   one zlib stream, handing it the dictionary when the stream's header asks for one (`FDICT`, as
//!   Go's framer always writes), so the stream stays in step even for blocks it does not need.
//! - **Written:** [`Writer`] sends its few header blocks as *stored* (uncompressed) deflate
//!   blocks in a zlib stream that declares no dictionary: valid zlib that any SPDY peer reads
//!   (Go's reader uses the dictionary only as a window, which stored blocks never refer to).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use flate2::{Decompress, FlushDecompress, Status};

/// SPDY version 3 in a control frame's first two bytes (with the control bit).
const CONTROL_VERSION: u16 = 0x8003;
const TYPE_SYN_STREAM: u16 = 1;
const TYPE_SYN_REPLY: u16 = 2;
const TYPE_RST_STREAM: u16 = 3;
const TYPE_PING: u16 = 6;
const TYPE_GOAWAY: u16 = 7;
const TYPE_HEADERS: u16 = 8;
/// The flag that ends a stream's direction (on data, `SYN_STREAM` and `SYN_REPLY` frames).
const FLAG_FIN: u8 = 0x01;
/// A zlib stream header: deflate, 32 KiB window, no dictionary, checksum valid.
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];
/// An empty, non-final stored deflate block: zlib's sync-flush marker.
const SYNC_FLUSH: [u8; 5] = [0x00, 0x00, 0x00, 0xff, 0xff];
/// Frames longer than this are refused (SPDY lengths are 24 bits; kubelets send 32 KiB chunks).
const MAX_FRAME: usize = 1 << 24;
/// The most one header block may inflate to (Go's framer caps a block's header count instead).
const MAX_HEADER_BLOCK: usize = 1 << 20;
/// The dictionary that primes header compression (SPDY/3 draft, section 2.6.10.1).
const DICTIONARY: &[u8; 1423] = include_bytes!("spdy_dictionary.bin");

/// `RST_STREAM` status: the stream is refused (`REFUSED_STREAM`).
pub const REFUSED_STREAM: u32 = 3;
/// `RST_STREAM` status: the stream is cancelled (`CANCEL`).
pub const CANCEL: u32 = 5;

/// A header block: names lower-case as SPDY/3 requires, values as sent (several values of one
/// name joined by NUL bytes).
pub type Headers = Vec<(String, String)>;

/// The value of header `name` (lower-case) in `headers`, if present.
pub fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A frame received from the peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// Data on a stream; `fin` ends the peer's side of it.
    Data {
        /// The stream.
        stream_id: u32,
        /// The peer's side of the stream ends here.
        fin: bool,
        /// The bytes.
        data: Bytes,
    },
    /// The peer opened a stream.
    SynStream {
        /// The new stream (odd from a client, even from a server).
        stream_id: u32,
        /// The peer sends nothing on it.
        fin: bool,
        /// Its headers (`streamtype`, `port`, `requestid` in Kubernetes).
        headers: Headers,
    },
    /// The peer accepted a stream.
    SynReply {
        /// The stream.
        stream_id: u32,
        /// The peer sends nothing on it.
        fin: bool,
        /// Its headers (none in Kubernetes).
        headers: Headers,
    },
    /// The peer aborted a stream.
    RstStream {
        /// The stream.
        stream_id: u32,
        /// Why ([`REFUSED_STREAM`], [`CANCEL`], ...).
        status: u32,
    },
    /// A ping to answer with the same id (unless it answers one of ours).
    Ping {
        /// Odd from a client, even from a server.
        id: u32,
    },
    /// The peer is closing the connection.
    GoAway,
    /// A frame Kubernetes' streams have no use for (settings, window updates, headers).
    Ignored,
}

/// Writes one side's frames. Header blocks share one zlib stream per connection.
#[derive(Debug, Default)]
pub struct Writer {
    /// The zlib stream header has been sent (with the first header block).
    zlib_started: bool,
}

impl Writer {
    /// `SYN_STREAM` opening `stream_id` with `headers` (names lower-case, as SPDY wants).
    pub fn syn_stream(&mut self, stream_id: u32, headers: &[(&str, &str)], fin: bool) -> Bytes {
        let block = self.header_block(headers);
        let mut frame = BytesMut::with_capacity(18 + block.len());
        control_header(&mut frame, TYPE_SYN_STREAM, fin, 10 + block.len());
        frame.put_u32(stream_id & 0x7fff_ffff);
        frame.put_u32(0); // associated-to stream
        frame.put_u8(0); // priority (3 bits) and unused
        frame.put_u8(0); // slot
        frame.put_slice(&block);
        frame.freeze()
    }

    /// `SYN_REPLY` accepting the peer's `stream_id` with `headers`.
    pub fn syn_reply(&mut self, stream_id: u32, headers: &[(&str, &str)], fin: bool) -> Bytes {
        let block = self.header_block(headers);
        let mut frame = BytesMut::with_capacity(12 + block.len());
        control_header(&mut frame, TYPE_SYN_REPLY, fin, 4 + block.len());
        frame.put_u32(stream_id & 0x7fff_ffff);
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
pub fn data_frame(stream_id: u32, fin: bool, data: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(8 + data.len());
    frame.put_u32(stream_id & 0x7fff_ffff);
    frame.put_u8(if fin { FLAG_FIN } else { 0 });
    put_u24(&mut frame, data.len());
    frame.put_slice(data);
    frame.freeze()
}

/// A ping, or the answer to one (the same id).
pub fn ping_frame(id: u32) -> Bytes {
    let mut frame = BytesMut::with_capacity(12);
    control_header(&mut frame, TYPE_PING, false, 4);
    frame.put_u32(id);
    frame.freeze()
}

/// `RST_STREAM` aborting `stream_id` with `status`.
pub fn rst_stream_frame(stream_id: u32, status: u32) -> Bytes {
    let mut frame = BytesMut::with_capacity(16);
    control_header(&mut frame, TYPE_RST_STREAM, false, 8);
    frame.put_u32(stream_id & 0x7fff_ffff);
    frame.put_u32(status);
    frame.freeze()
}

/// `GOAWAY` after the peer's stream `last_stream_id`, status OK: no new streams.
pub fn goaway_frame(last_stream_id: u32) -> Bytes {
    let mut frame = BytesMut::with_capacity(16);
    control_header(&mut frame, TYPE_GOAWAY, false, 8);
    frame.put_u32(last_stream_id & 0x7fff_ffff);
    frame.put_u32(0);
    frame.freeze()
}

fn control_header(frame: &mut BytesMut, kind: u16, fin: bool, length: usize) {
    frame.put_u16(CONTROL_VERSION);
    frame.put_u16(kind);
    frame.put_u8(if fin { FLAG_FIN } else { 0 });
    put_u24(frame, length);
}

fn put_u24(frame: &mut BytesMut, value: usize) {
    let bytes = (value as u32).to_be_bytes();
    frame.put_slice(&bytes[1..]);
}

/// Reassembles frames from the byte stream (WebSocket messages split it anywhere) and inflates
/// their header blocks.
pub struct Reader {
    buffer: BytesMut,
    /// The peer's header zlib stream, shared by all its header blocks.
    inflater: Decompress,
}

impl Default for Reader {
    fn default() -> Reader {
        Reader {
            buffer: BytesMut::new(),
            inflater: Decompress::new(true),
        }
    }
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl Reader {
    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete frame, if one has arrived.
    ///
    /// # Errors
    /// A description of a frame no SPDY/3 peer sends (another version, a truncated control
    /// frame body, a header block that does not inflate or parse).
    pub fn next_frame(&mut self) -> Result<Option<Frame>, String> {
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
            TYPE_SYN_REPLY | TYPE_PING | TYPE_HEADERS => 4,
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
            TYPE_SYN_STREAM => {
                let stream_id = frame.get_u32() & 0x7fff_ffff;
                frame.advance(6); // associated-to stream, priority, slot
                let headers = self.headers(&frame, stream_id)?;
                Frame::SynStream {
                    stream_id,
                    fin,
                    headers,
                }
            }
            TYPE_SYN_REPLY => {
                let stream_id = frame.get_u32() & 0x7fff_ffff;
                let headers = self.headers(&frame, stream_id)?;
                Frame::SynReply {
                    stream_id,
                    fin,
                    headers,
                }
            }
            TYPE_HEADERS => {
                // Inflated only to keep the zlib stream in step: no Kubernetes stream sends them.
                let stream_id = frame.get_u32() & 0x7fff_ffff;
                self.headers(&frame, stream_id)?;
                Frame::Ignored
            }
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

    /// Inflates and parses the header block of a frame on `stream_id`.
    fn headers(&mut self, block: &[u8], stream_id: u32) -> Result<Headers, String> {
        let plain = self
            .inflate(block)
            .map_err(|e| format!("SPDY: the header block of stream {stream_id}: {e}"))?;
        parse_headers(&plain)
            .ok_or_else(|| format!("SPDY: the header block of stream {stream_id} is malformed"))
    }

    /// `block`, the next piece of the peer's header zlib stream, inflated.
    fn inflate(&mut self, block: &[u8]) -> Result<Vec<u8>, String> {
        let mut plain = Vec::with_capacity(block.len() * 4 + 64);
        let mut input = block;
        loop {
            if plain.len() == plain.capacity() {
                if plain.len() >= MAX_HEADER_BLOCK {
                    return Err(format!("inflates to more than {MAX_HEADER_BLOCK} bytes"));
                }
                plain.reserve(plain.len());
            }
            let before = self.inflater.total_in();
            let result = self
                .inflater
                .decompress_vec(input, &mut plain, FlushDecompress::Sync);
            let consumed = usize::try_from(self.inflater.total_in() - before).unwrap_or(0);
            input = input.get(consumed..).unwrap_or_default();
            match result {
                Ok(Status::StreamEnd | Status::BufError) => return Ok(plain),
                Ok(Status::Ok) if input.is_empty() && plain.len() < plain.capacity() => {
                    return Ok(plain);
                }
                Ok(Status::Ok) => {}
                Err(e) if e.needs_dictionary().is_some() => {
                    self.inflater
                        .set_dictionary(DICTIONARY)
                        .map_err(|e| format!("zlib dictionary: {e}"))?;
                }
                Err(e) => return Err(format!("zlib: {e}")),
            }
        }
    }
}

/// A header block's name/value pairs: a count, then each name and value with its length, all
/// lengths 32-bit big-endian. `None` when the block is cut short.
fn parse_headers(mut block: &[u8]) -> Option<Headers> {
    fn string(block: &mut &[u8]) -> Option<String> {
        if block.len() < 4 {
            return None;
        }
        let len = usize::try_from(block.get_u32()).ok()?;
        let bytes = block.get(..len)?;
        let text = String::from_utf8_lossy(bytes).into_owned();
        block.advance(len);
        Some(text)
    }
    if block.len() < 4 {
        return None;
    }
    let count = block.get_u32();
    let mut headers = Vec::new();
    for _ in 0..count {
        let name = string(&mut block)?.to_ascii_lowercase();
        let value = string(&mut block)?;
        headers.push((name, value));
    }
    Some(headers)
}

#[cfg(test)]
#[path = "spdy_tests.rs"]
mod tests;
