//! Compiles the vendored upstream `generated.proto` files (see `proto/README.md`) into one encoded
//! `FileDescriptorSet` that the crate embeds. protox is a protobuf compiler in Rust, so no `protoc`
//! is needed on the build machine.

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from("proto");
    println!("cargo:rerun-if-changed=proto");
    let mut files = Vec::new();
    collect_protos(&root, &root, &mut files);
    files.sort();
    let mut compiler = match protox::Compiler::new([&root]) {
        Ok(compiler) => compiler,
        Err(error) => panic!("protox cannot read {}: {error}", root.display()),
    };
    compiler.include_imports(true).include_source_info(false);
    if let Err(error) = compiler.open_files(&files) {
        panic!("the Kubernetes .proto files do not compile: {error}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("kubernetes.fds");
    if let Err(error) = std::fs::write(&out, compiler.encode_file_descriptor_set()) {
        panic!("cannot write {}: {error}", out.display());
    }
}

/// Every `*.proto` under `dir`, as paths relative to `root` (the import root).
fn collect_protos(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => panic!("cannot list {}: {error}", dir.display()),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_protos(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "proto")
            && let Ok(relative) = path.strip_prefix(root)
        {
            files.push(relative.to_path_buf());
        }
    }
}
