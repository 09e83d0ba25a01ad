//! Compiles the vendored upstream `.proto` files of `crates/codec/proto/` into one encoded
//! `FileDescriptorSet`, the file `kubegen-codec` embeds with `include_bytes!`
//! (`crates/codec/descriptors/kubernetes.fds`).
//!
//! # Why a tool and not a `build.rs`
//! kubegen is consumed as a git dependency, so a build script would make every user compile protox
//! and 1.3 MB of `.proto` files before the client, on every clean build. The descriptors change only
//! when the vendored schema does, so they are produced here once and committed, as the generated
//! code is; `scripts/update-codegen.sh` runs this tool and `hack/verify-codegen.sh` fails on drift.
//!
//! # Guarantees
//! The output is byte-for-byte deterministic: the files are compiled in sorted path order (imports
//! follow them in the order protox resolves them) and without source info, so it depends only on
//! the contents of the `.proto` files and the protox version pinned in `Cargo.lock`.
//!
//! ```sh
//! cargo run -p kubegen-proto-descriptors -- [<proto dir> [<output file>]]
//! ```
//! Defaults: `crates/codec/proto` and `crates/codec/descriptors/kubernetes.fds`, relative to the
//! workspace root. protox is a protobuf compiler in Rust, so no `protoc` is needed.

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The codec crate, relative to this crate's manifest directory.
const CODEC_DIR: &str = "../../crates/codec";

fn main() -> ExitCode {
    let codec = Path::new(env!("CARGO_MANIFEST_DIR")).join(CODEC_DIR);
    let mut args = std::env::args_os().skip(1);
    let proto_dir = args
        .next()
        .map_or_else(|| codec.join("proto"), PathBuf::from);
    let output = args
        .next()
        .map_or_else(|| codec.join("descriptors/kubernetes.fds"), PathBuf::from);
    if args.next().is_some() {
        eprintln!("usage: kubegen-proto-descriptors [<proto dir> [<output file>]]");
        return ExitCode::from(2);
    }
    match run(&proto_dir, &output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("kubegen-proto-descriptors: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Compiles `proto_dir` and writes the encoded set to `output`, creating its directory.
fn run(proto_dir: &Path, output: &Path) -> Result<(), String> {
    let bytes = compile(proto_dir)?;
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(output, bytes).map_err(|e| format!("cannot write {}: {e}", output.display()))
}

/// The encoded `FileDescriptorSet` of every `*.proto` under `proto_dir` (also the import root),
/// with their imports and without source info.
fn compile(proto_dir: &Path) -> Result<Vec<u8>, String> {
    let mut files = Vec::new();
    collect_protos(proto_dir, proto_dir, &mut files)?;
    if files.is_empty() {
        return Err(format!("no .proto files under {}", proto_dir.display()));
    }
    // `read_dir` order depends on the file system; sorting makes the output depend on content only.
    files.sort();
    let mut compiler = protox::Compiler::new([proto_dir])
        .map_err(|e| format!("cannot read {}: {e}", proto_dir.display()))?;
    compiler.include_imports(true).include_source_info(false);
    compiler.open_files(&files).map_err(|e| {
        format!(
            "the .proto files under {} do not compile: {e}",
            proto_dir.display()
        )
    })?;
    Ok(compiler.encode_file_descriptor_set())
}

/// Every `*.proto` under `dir`, as paths relative to `root` (the import root).
fn collect_protos(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if path.is_dir() {
            collect_protos(root, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "proto")
            && let Ok(relative) = path.strip_prefix(root)
        {
            files.push(relative.to_path_buf());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(CODEC_DIR)
    }

    #[test]
    fn compiling_twice_gives_the_same_bytes() {
        let proto = codec().join("proto");
        assert_eq!(compile(&proto), compile(&proto));
    }

    /// The same check as `hack/verify-codegen.sh`, so `cargo test` catches drift too.
    #[test]
    fn committed_descriptors_match_the_vendored_protos() {
        let committed = std::fs::read(codec().join("descriptors/kubernetes.fds")).unwrap();
        let fresh = compile(&codec().join("proto")).unwrap();
        // Not assert_eq!: a failure would print 180 kB of bytes.
        assert!(
            committed == fresh,
            "crates/codec/descriptors/kubernetes.fds is stale: run scripts/update-codegen.sh"
        );
    }

    #[test]
    fn a_directory_without_protos_is_an_error() {
        let empty = std::env::temp_dir().join(format!("proto-descriptors-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let result = compile(&empty);
        std::fs::remove_dir(&empty).unwrap();
        assert_eq!(
            result,
            Err(format!("no .proto files under {}", empty.display()))
        );
    }
}
