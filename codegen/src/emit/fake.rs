//! Not emitted yet.

use super::{EmitCtx, Files};
use crate::Error;

/// Emits nothing yet.
pub(super) fn emit(_ctx: &EmitCtx<'_>, _files: &mut Files) -> Result<(), Error> {
    Ok(())
}
