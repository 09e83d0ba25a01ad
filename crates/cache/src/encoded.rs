//! One byte-backed cache entry in one allocation: the object's bytes and what the cache reads
//! without decoding them.
//!
//! client-go's `tools/cache/thread_safe_store.go` keeps decoded Go objects, one allocation
//! graph each; this is the entry of kubegen's byte-backed store (`store_mode.rs` says why it
//! exists). An entry used to be a struct with a boxed resourceVersion, a boxed slice of labels,
//! two boxed strings per label and boxed index values: about a dozen allocations per cached
//! object, each with the allocator's own header and rounding, which at 60,000 objects cost more
//! than a tenth of the cache. Here everything sits in one `Arc<[u8]>`, laid out once and read
//! in place.
//!
//! # Layout
//! Every length is a little-endian `u32`:
//! ```text
//! flags (1 byte: bit 0 = protobuf) | start of the object's bytes (u32)
//! resourceVersion: len, bytes
//! labels: count, then per label: key len, key, value len, value   (sorted by key)
//! index values: count, then per index: name len, name, value count, then per value: len, bytes
//! the object's bytes (to the end)
//! ```

use std::sync::Arc;

/// An object kept as bytes, with its resourceVersion, labels and index values, in one block.
///
/// Cloning shares the block. Two entries are the same entry ([`same`](Self::same)) only when
/// they share it: the recently decoded objects are keyed on that.
///
/// # Invariants
/// The block was written by [`Encoded::new`] (or [`with_filed`](Self::with_filed)), so every
/// length in it is in bounds and every string is UTF-8; the readers still check, and read a
/// malformed part as empty rather than panic.
#[derive(Clone)]
pub(crate) struct Encoded {
    block: Arc<[u8]>,
}

/// Bytes before the resourceVersion: the flags and the start of the object's bytes.
const HEADER: usize = 5;
/// The flag bit of protobuf bytes.
const PROTOBUF: u8 = 1;

/// What the cache reads without decoding: the parts of an entry besides the object's bytes.
pub(crate) struct Parts<'a, L> {
    /// `metadata.resourceVersion` (empty when unset).
    pub(crate) resource_version: &'a str,
    /// `metadata.labels`, sorted by key.
    pub(crate) labels: L,
    /// The object's values in each user index (not the namespace index), by index name.
    pub(crate) filed: &'a [(String, Vec<String>)],
}

/// A string or a byte run too long for a `u32` length (over 4 GiB: never a Kubernetes object).
#[derive(Debug, thiserror::Error)]
#[error("a part of the object is over 4 GiB")]
pub(crate) struct TooLarge;

impl Encoded {
    /// An entry of `bytes` (protobuf when `protobuf`, else JSON) with `parts`.
    ///
    /// # Errors
    /// [`TooLarge`] when a part's length does not fit in a `u32`.
    pub(crate) fn new<'a, L>(
        bytes: &[u8],
        protobuf: bool,
        parts: Parts<'a, L>,
    ) -> Result<Self, TooLarge>
    where
        L: Iterator<Item = (&'a str, &'a str)> + Clone,
    {
        let strings = |s: &str| 4 + s.len();
        let size = HEADER
            + strings(parts.resource_version)
            + 4
            + parts
                .labels
                .clone()
                .map(|(k, v)| strings(k) + strings(v))
                .sum::<usize>()
            + 4
            + parts
                .filed
                .iter()
                .map(|(name, values)| {
                    strings(name) + 4 + values.iter().map(|v| strings(v)).sum::<usize>()
                })
                .sum::<usize>()
            + bytes.len();
        let mut block = Vec::with_capacity(size);
        block.push(if protobuf { PROTOBUF } else { 0 });
        put_len(&mut block, size - bytes.len())?;
        put_str(&mut block, parts.resource_version)?;
        put_len(&mut block, parts.labels.clone().count())?;
        for (key, value) in parts.labels {
            put_str(&mut block, key)?;
            put_str(&mut block, value)?;
        }
        put_len(&mut block, parts.filed.len())?;
        for (name, values) in parts.filed {
            put_str(&mut block, name)?;
            put_len(&mut block, values.len())?;
            for value in values {
                put_str(&mut block, value)?;
            }
        }
        block.extend_from_slice(bytes);
        debug_assert_eq!(block.len(), size);
        Ok(Self {
            block: Arc::from(block),
        })
    }

    /// The object's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.block.get(self.bytes_start()..).unwrap_or_default()
    }

    /// Whether [`bytes`](Self::bytes) are a protobuf message (else JSON).
    pub(crate) fn is_protobuf(&self) -> bool {
        self.block
            .first()
            .is_some_and(|flags| flags & PROTOBUF != 0)
    }

    /// `metadata.resourceVersion` (empty when unset): a relist's `Replaced` compares it with the
    /// cached one to tell a resync from an update without decoding either.
    pub(crate) fn resource_version(&self) -> &str {
        self.reader().string()
    }

    /// `metadata.labels`, sorted by key.
    pub(crate) fn labels(&self) -> impl Iterator<Item = (&str, &str)> + Clone {
        let mut reader = self.reader();
        reader.string(); // the resourceVersion
        let count = reader.len();
        (0..count).map(move |_| (reader.string(), reader.string()))
    }

    /// The object's values in the index `name` (none when it was never indexed there).
    pub(crate) fn filed(&self, name: &str) -> Vec<String> {
        self.filed_values(name)
            .map(|values| values.map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Whether the object was filed in the index `name` (it was not when the index was added
    /// after the object arrived but before it was stored).
    pub(crate) fn is_filed(&self, name: &str) -> bool {
        self.filed_values(name).is_some()
    }

    /// This entry with its values in the index `name` added.
    ///
    /// # Errors
    /// [`TooLarge`] as [`new`](Self::new).
    pub(crate) fn with_filed(&self, name: &str, values: Vec<String>) -> Result<Self, TooLarge> {
        let mut filed = self.all_filed();
        filed.push((name.to_owned(), values));
        Self::new(
            self.bytes(),
            self.is_protobuf(),
            Parts {
                resource_version: self.resource_version(),
                labels: self.labels(),
                filed: &filed,
            },
        )
    }

    /// Whether `other` is this very entry (the same block), not merely an equal one.
    pub(crate) fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.block, &other.block)
    }

    /// Bytes of the object held, for tests of the memory it saves.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.bytes().len()
    }

    /// Every index's values, by index name.
    fn all_filed(&self) -> Vec<(String, Vec<String>)> {
        let mut reader = self.filed_reader();
        let count = reader.len();
        (0..count)
            .map(|_| {
                let name = reader.string().to_owned();
                let values = reader.len();
                (
                    name,
                    (0..values).map(|_| reader.string().to_owned()).collect(),
                )
            })
            .collect()
    }

    /// The values of the index `name`, or `None` when the object was not filed there.
    fn filed_values(&self, name: &str) -> Option<impl Iterator<Item = &str>> {
        let mut reader = self.filed_reader();
        for _ in 0..reader.len() {
            let index = reader.string();
            let count = reader.len();
            if index == name {
                return Some((0..count).map(move |_| reader.string()));
            }
            for _ in 0..count {
                reader.string();
            }
        }
        None
    }

    /// A reader at the index values.
    fn filed_reader(&self) -> Reader<'_> {
        let mut reader = self.reader();
        reader.string(); // the resourceVersion
        for _ in 0..reader.len() {
            reader.string();
            reader.string();
        }
        reader
    }

    /// A reader at the resourceVersion, ending where the object's bytes start.
    fn reader(&self) -> Reader<'_> {
        let parts = self.block.get(..self.bytes_start()).unwrap_or_default();
        Reader {
            rest: parts.get(HEADER..).unwrap_or_default(),
        }
    }

    fn bytes_start(&self) -> usize {
        read_u32(self.block.get(1..HEADER).unwrap_or_default())
    }
}

/// Reads the lengths and strings of an entry's parts in order.
#[derive(Clone)]
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The next length (0 when the block ends).
    fn len(&mut self) -> usize {
        let (len, rest) = self.rest.split_at_checked(4).unwrap_or((&[], &[]));
        self.rest = rest;
        read_u32(len)
    }

    /// The next string (empty when the block ends or it is not UTF-8).
    fn string(&mut self) -> &'a str {
        let len = self.len();
        let (string, rest) = self.rest.split_at_checked(len).unwrap_or((&[], &[]));
        self.rest = rest;
        std::str::from_utf8(string).unwrap_or_default()
    }
}

/// The little-endian `u32` in `bytes` (0 unless it is four bytes).
fn read_u32(bytes: &[u8]) -> usize {
    <[u8; 4]>::try_from(bytes).map_or(0, |b| u32::from_le_bytes(b) as usize)
}

fn put_len(block: &mut Vec<u8>, len: usize) -> Result<(), TooLarge> {
    let len = u32::try_from(len).map_err(|_| TooLarge)?;
    block.extend_from_slice(&len.to_le_bytes());
    Ok(())
}

fn put_str(block: &mut Vec<u8>, s: &str) -> Result<(), TooLarge> {
    put_len(block, s.len())?;
    block.extend_from_slice(s.as_bytes());
    Ok(())
}

#[cfg(test)]
#[path = "encoded_tests.rs"]
mod tests;
