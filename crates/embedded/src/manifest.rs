//! The manifests an embedded server is set up with, as text: compiled into the operator's binary
//! (`include_str!`), so that an installed binary's `--embedded` runs from any directory, or read
//! from a checkout's files when a developer points it at them.

use std::borrow::Cow;
use std::path::PathBuf;

use kubegen_runtime::manifests;

use crate::error::Error;

/// One multi-document YAML manifest and the name its errors give it (its file, for one read
/// from disk).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The name errors give it.
    pub source: Cow<'static, str>,
    /// Its text.
    pub yaml: Cow<'static, str>,
}

impl Manifest {
    /// A manifest compiled into the binary:
    /// `Manifest::compiled_in("deploy/crd.yaml", include_str!("../deploy/crd.yaml"))`.
    pub const fn compiled_in(source: &'static str, yaml: &'static str) -> Manifest {
        Manifest {
            source: Cow::Borrowed(source),
            yaml: Cow::Borrowed(yaml),
        }
    }

    /// The manifests of `paths`: files, or directories whose `*.yaml`/`*.yml` files are read in
    /// name order.
    ///
    /// # Errors
    /// [`Error::ManifestUnreadable`] naming the first file that cannot be read.
    pub fn read(paths: &[PathBuf]) -> Result<Vec<Manifest>, Error> {
        let files = manifests::read_yaml_files(paths)
            .map_err(|source| Error::ManifestUnreadable { source })?;
        Ok(files
            .into_iter()
            .map(|(file, text)| Manifest {
                source: Cow::Owned(file.display().to_string()),
                yaml: Cow::Owned(text),
            })
            .collect())
    }
}
