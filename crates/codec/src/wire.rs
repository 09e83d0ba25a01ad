//! The protobuf wire format at its lowest level: varints, tags and length-delimited records read
//! from a borrowed byte slice, every bound checked. A malformed or truncated input is an error
//! saying what was wrong and at which byte, never a panic.
//!
//! Hand-written rather than prost's `encoding` helpers because the decoder (`de`) walks records
//! lazily and hands out sub-slices of the input without copying; prost's helpers work on `Buf`s.

use crate::error::{CodecError, Result};

/// One record's value as it lies on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Data<'de> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'de [u8]),
}

impl Data<'_> {
    /// The wire type's name, for errors.
    pub(crate) fn wire_name(&self) -> &'static str {
        match self {
            Data::Varint(_) => "varint",
            Data::Fixed64(_) => "64-bit",
            Data::Fixed32(_) => "32-bit",
            Data::Len(_) => "length-delimited",
        }
    }
}

/// A cursor over the records of one message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'de> {
    bytes: &'de [u8],
    pos: usize,
}

fn malformed(reason: String) -> CodecError {
    CodecError::field("", reason)
}

impl<'de> Reader<'de> {
    pub(crate) fn new(bytes: &'de [u8]) -> Reader<'de> {
        Reader { bytes, pos: 0 }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Reads a base-128 varint (at most 10 bytes).
    pub(crate) fn varint(&mut self) -> Result<u64> {
        let mut value: u64 = 0;
        for shift in 0..10 {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(malformed(format!("truncated varint at byte {}", self.pos)));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << (shift * 7);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(malformed(format!(
            "varint longer than 10 bytes ending at byte {}",
            self.pos
        )))
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'de [u8]> {
        let left = self.bytes.len() - self.pos;
        if len > left {
            return Err(malformed(format!(
                "{what} of {len} bytes at byte {} runs past the end ({left} bytes left)",
                self.pos
            )));
        }
        let slice = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(slice)
    }

    /// Reads the next record: its field number and value. `None` at the end of the message.
    pub(crate) fn record(&mut self) -> Result<Option<(u32, Data<'de>)>> {
        if self.is_empty() {
            return Ok(None);
        }
        let at = self.pos;
        let tag = self.varint()?;
        let number = u32::try_from(tag >> 3).unwrap_or(0);
        if number == 0 {
            return Err(malformed(format!("field number 0 at byte {at}")));
        }
        let data = match tag & 7 {
            0 => Data::Varint(self.varint()?),
            1 => Data::Fixed64(u64::from_le_bytes(fixed(self.take(8, "64-bit value")?))),
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                Data::Len(self.take(len, "length-delimited field")?)
            }
            5 => Data::Fixed32(u32::from_le_bytes(fixed(self.take(4, "32-bit value")?))),
            other => {
                return Err(malformed(format!(
                    "field {number} at byte {at} has unsupported wire type {other}"
                )));
            }
        };
        Ok(Some((number, data)))
    }

    /// One element of a packed run of `kind` values (varints, or 4- or 8-byte fixed values).
    pub(crate) fn packed(&mut self, kind: crate::plan::ValueKind) -> Result<Data<'de>> {
        use crate::plan::ValueKind as K;
        match kind {
            K::Fixed32 | K::Sfixed32 | K::Float => Ok(Data::Fixed32(u32::from_le_bytes(fixed(
                self.take(4, "packed 32-bit value")?,
            )))),
            K::Fixed64 | K::Sfixed64 | K::Double => Ok(Data::Fixed64(u64::from_le_bytes(fixed(
                self.take(8, "packed 64-bit value")?,
            )))),
            _ => self.varint().map(Data::Varint),
        }
    }

    /// The field number of the next record, without consuming it.
    pub(crate) fn peek_number(&self) -> Option<u32> {
        let mut copy = *self;
        let tag = copy.varint().ok()?;
        u32::try_from(tag >> 3).ok()
    }
}

fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

/// The field number of a length-delimited record's header, and how many bytes the header and the
/// body take, from the start of `bytes`; `None` when `bytes` ends inside the header. Used by the
/// streaming decoders to know how much more input a record needs before it can be decoded.
pub(crate) fn record_header(bytes: &[u8]) -> Result<Option<(u32, Header)>> {
    let mut reader = Reader::new(bytes);
    let tag = match reader.varint() {
        Ok(tag) => tag,
        Err(_) if bytes.len() < 10 => return Ok(None),
        Err(e) => return Err(e),
    };
    let number = u32::try_from(tag >> 3).unwrap_or(0);
    if number == 0 {
        return Err(malformed("field number 0".into()));
    }
    let header = match tag & 7 {
        2 => match reader.varint() {
            Ok(len) => Header::Len {
                header: reader.position(),
                body: usize::try_from(len).unwrap_or(usize::MAX),
            },
            Err(_) if bytes.len() - reader.position() < 10 => return Ok(None),
            Err(e) => return Err(e),
        },
        0 => match reader.varint() {
            Ok(_) => Header::Scalar(reader.position()),
            Err(_) if bytes.len() - reader.position() < 10 => return Ok(None),
            Err(e) => return Err(e),
        },
        1 => Header::Scalar(reader.position() + 8),
        5 => Header::Scalar(reader.position() + 4),
        other => {
            return Err(malformed(format!(
                "field {number} has unsupported wire type {other}"
            )));
        }
    };
    Ok(Some((number, header)))
}

/// The extent of one record, from [`record_header`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Header {
    /// A length-delimited record: `header` bytes of tag and length, then `body` bytes.
    Len { header: usize, body: usize },
    /// A scalar record of this many bytes in all.
    Scalar(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_length_delimited_field_names_its_size_and_what_is_left() {
        let err = Reader::new(&[0x0a, 0x05, b'a']).record().unwrap_err();
        assert_eq!(
            err.to_string(),
            ": length-delimited field of 5 bytes at byte 2 runs past the end (1 bytes left)"
        );
    }

    #[test]
    fn overlong_varint_is_an_error() {
        let err = Reader::new(&[0xff; 11]).varint().unwrap_err();
        assert!(err.to_string().contains("longer than 10 bytes"), "{err}");
    }

    #[test]
    fn group_wire_type_is_refused() {
        let err = Reader::new(&[0x0b]).record().unwrap_err();
        assert!(err.to_string().contains("unsupported wire type 3"), "{err}");
    }

    #[test]
    fn record_header_waits_for_a_split_length() {
        assert_eq!(record_header(&[0x12, 0x80]).unwrap(), None);
        assert_eq!(
            record_header(&[0x12, 0x80, 0x01]).unwrap(),
            Some((
                2,
                Header::Len {
                    header: 3,
                    body: 128
                }
            ))
        );
    }
}
