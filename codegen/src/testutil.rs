//! Test helper: runs parse and check over one package written as text, so the unit tests of
//! the checker and the emitters read as "this input gives that output".

use crate::config::Config;
use crate::model::Model;

/// Loads `apis/demo/v1/types.rs` = `types` (group `demo.example.com`).
pub(crate) fn load(types: &str) -> Result<(Config, Model), crate::Error> {
    let dir = tempfile::tempdir().expect("temp dir");
    let package = dir.path().join("apis/demo/v1");
    std::fs::create_dir_all(&package).expect("mkdir");
    std::fs::write(package.join("mod.rs"), "//! +groupName=demo.example.com\n").expect("write");
    std::fs::write(package.join("types.rs"), types).expect("write");
    let config = Config {
        root: dir.path().to_path_buf(),
        builtins: None,
        boilerplate: None,
        ..Config::default()
    };
    let model = crate::load_model(&config)?;
    Ok((config, model))
}

/// The diagnostics of `types` as `line: message` strings (the file is always `types.rs`).
pub(crate) fn errors(types: &str) -> Vec<String> {
    match load(types) {
        Ok(_) => Vec::new(),
        Err(error) => error
            .diagnostics()
            .iter()
            .map(|d| format!("{}: {}", d.location.line, d.message))
            .collect(),
    }
}

/// Loads several packages: `files` are `(path under apis/, text)`.
pub(crate) fn load_files(files: &[(&str, &str)]) -> Result<(Config, Model), crate::Error> {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let full = dir.path().join("apis").join(path);
        std::fs::create_dir_all(full.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    let config = Config {
        root: dir.path().to_path_buf(),
        builtins: None,
        boilerplate: None,
        ..Config::default()
    };
    let model = crate::load_model(&config)?;
    Ok((config, model))
}
