//! How often user code (transforms, index functions, handlers) panicked inside an informer.
//!
//! client-go has no counterpart: there, a panic in a transform or an index function crashes the
//! process (`HandleCrash` re-panics), which at least makes the failure visible. A Rust informer
//! runs on tokio tasks, where an uncaught panic ends only that task: the reflector or the
//! process loop would die silently while the process stays ready. So every call into user code
//! is wrapped in `catch_unwind`, the object is skipped, and the panic is counted here, where a
//! health check or a metrics exporter can see it (this crate does not export metrics itself).

use std::{
    any::Any,
    sync::atomic::{AtomicU64, Ordering},
};

/// Caught panics of one informer's user code, as counted so far.
///
/// A non-zero count means some objects were skipped (transform, index function) or some
/// notifications not fully handled (handler): the informer kept running, but its cache or a
/// handler's view may miss something. Each panic was logged at error level with the object's key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InformerStats {
    /// Transforms that panicked; each time the object was skipped.
    pub transform_panics: u64,
    /// Index functions that panicked; each time the object was left out of that one index.
    pub index_panics: u64,
    /// Event handlers that panicked; each time the handler kept running with the next
    /// notification.
    pub handler_panics: u64,
}

impl InformerStats {
    /// Whether any user code panicked.
    pub fn any_panics(&self) -> bool {
        self.transform_panics + self.index_panics + self.handler_panics > 0
    }
}

/// The live counters behind [`InformerStats`], shared by the reflector, the indexer and the
/// processor of one informer.
#[derive(Debug, Default)]
pub(crate) struct PanicCounters {
    pub(crate) transform: AtomicU64,
    pub(crate) index: AtomicU64,
    pub(crate) handler: AtomicU64,
}

impl PanicCounters {
    /// The counts now.
    pub(crate) fn snapshot(&self) -> InformerStats {
        InformerStats {
            transform_panics: self.transform.load(Ordering::Relaxed),
            index_panics: self.index.load(Ordering::Relaxed),
            handler_panics: self.handler.load(Ordering::Relaxed),
        }
    }
}

/// The message of a caught panic payload (`panic!("...")` carries a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>")
}

#[cfg(test)]
mod tests {
    use std::panic::catch_unwind;

    use super::*;

    #[test]
    fn panic_message_reads_str_and_string_payloads() {
        let literal = catch_unwind(|| {
            panic!("plain");
        })
        .unwrap_err();
        let formatted = catch_unwind(|| {
            panic!("formatted {}", 7);
        })
        .unwrap_err();
        let other = catch_unwind(|| {
            std::panic::panic_any(7_u8);
        })
        .unwrap_err();
        assert_eq!(panic_message(literal.as_ref()), "plain");
        assert_eq!(panic_message(formatted.as_ref()), "formatted 7");
        assert_eq!(panic_message(other.as_ref()), "<non-string panic payload>");
    }
}
