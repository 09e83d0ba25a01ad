//! Room on the stack for CEL.
//!
//! The `cel` crate parses and evaluates by recursion, and so do this crate's type checker, cost
//! estimator and cost counter. In a debug build (where users run the test server) one level of
//! that recursion takes kilobytes of stack, and an ordinary rule goes deep: Gateway API's
//! experimental `targetRefs` rule (two nested comprehensions over 23 `&&`/`||` operators, each
//! node wrapped by the cost counter) needed more than the 2 MiB a tokio worker thread has, and
//! writing such an object to the test server aborted the whole process with a stack overflow.
//!
//! So every entry into that recursion goes through [`with_room`]: when less than [`ROOM`] is
//! left on the current stack, the work runs on a fresh [`STACK`]-sized one allocated for it
//! (the `stacker` crate, which rustc uses for its own deep recursion; the new stack is mapped,
//! not touched, so the unused part costs no memory). Nested entries find the room already there,
//! so the entry points that run many rules (compiling a schema's rules, validating an object
//! against them) take the room once for all of them: mapping a stack for each of an object's
//! rules would cost a system call pair per rule.

/// The stack the deepest rule is given, with headroom: the Gateway API rule above uses about
/// 2 MiB in a debug build.
pub(crate) const ROOM: usize = 8 << 20;

/// The size of a stack allocated for CEL.
pub(crate) const STACK: usize = 32 << 20;

/// Runs `work` with at least [`ROOM`] of stack left.
pub(crate) fn with_room<R>(work: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(ROOM, STACK, work)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_with_the_room_it_asked_for() {
        // A 1 MiB thread: without a grown stack, ROOM could never be left.
        let remaining = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| with_room(stacker::remaining_stack))
            .unwrap()
            .join()
            .unwrap();
        assert!(remaining.is_some_and(|left| left >= ROOM), "{remaining:?}");
    }
}
