//! The `runtime.Unknown` envelope of a protobuf body read in place, without copying: what both the
//! typed decoder (`typed`, a whole body) and the wire decoder's special messages (`de_special`, an
//! object embedded in a `RawExtension`) start from. [`Envelope`](crate::Envelope) is the owning
//! form, for callers outside the crate.

use crate::envelope::MAGIC;
use crate::error::{CodecError, Result};
use crate::plan::{self, MessagePlan};
use crate::schema::KindSchema;
use crate::wire::{Data, Reader};

/// A `runtime.Unknown` envelope read in place: its strings and `raw` borrow from the body.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BorrowedEnvelope<'de> {
    pub(crate) api_version: &'de str,
    pub(crate) kind: &'de str,
    pub(crate) raw: &'de [u8],
    pub(crate) content_encoding: &'de str,
}

fn text(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| CodecError::EnvelopeDecodeFailed(e.to_string()))
}

impl<'de> BorrowedEnvelope<'de> {
    /// Reads a whole body: the magic, then the envelope.
    pub(crate) fn parse(body: &'de [u8]) -> Result<Self> {
        let rest = body.strip_prefix(&MAGIC).ok_or(CodecError::MissingMagic)?;
        let mut envelope = BorrowedEnvelope::default();
        let mut reader = Reader::new(rest);
        let envelope_error = |e: CodecError| CodecError::EnvelopeDecodeFailed(e.to_string());
        while let Some((number, data)) = reader.record().map_err(envelope_error)? {
            match (number, data) {
                (1, Data::Len(type_meta)) => envelope.read_type_meta(type_meta)?,
                (2, Data::Len(raw)) => envelope.raw = raw,
                (3, Data::Len(encoding)) => envelope.content_encoding = text(encoding)?,
                _ => {}
            }
        }
        Ok(envelope)
    }

    /// Reads `typeMeta` (`apiVersion = 1`, `kind = 2`).
    pub(crate) fn read_type_meta(&mut self, bytes: &'de [u8]) -> Result<()> {
        let mut reader = Reader::new(bytes);
        let envelope_error = |e: CodecError| CodecError::EnvelopeDecodeFailed(e.to_string());
        while let Some((number, data)) = reader.record().map_err(envelope_error)? {
            match (number, data) {
                (1, Data::Len(api_version)) => self.api_version = text(api_version)?,
                (2, Data::Len(kind)) => self.kind = text(kind)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The plan of the message the envelope names.
    pub(crate) fn plan(&self) -> Result<&'static MessagePlan> {
        if !self.content_encoding.is_empty() {
            return Err(CodecError::UnsupportedEncoding(
                self.content_encoding.to_string(),
            ));
        }
        KindSchema::lookup(self.api_version, self.kind)
            .and_then(|schema| plan::by_name(schema.message_name()))
            .ok_or_else(|| CodecError::UnknownKind {
                api_version: self.api_version.to_string(),
                kind: self.kind.to_string(),
            })
    }
}
