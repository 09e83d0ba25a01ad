//! Benchmark: time a full regeneration of this repository (parse, check, emit, format and the
//! `--check` comparison with the files on disk; no cargo build). Target: under 200 ms.
//!
//! ```text
//! cargo run --release -p kubegen-codegen --example regenerate
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

fn main() -> Result<(), kubegen_codegen::Error> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let config = kubegen_codegen::Config::load(&root.join("kubegen.toml"))?;
    let mut samples: Vec<Duration> = Vec::new();
    let mut file_count = 0;
    for _ in 0..20 {
        let start = Instant::now();
        let files = kubegen_codegen::generate(&config)?;
        let changes = kubegen_codegen::check(&config, &files);
        samples.push(start.elapsed());
        file_count = files.len();
        if !changes.is_empty() {
            eprintln!(
                "note: the tree is not up to date ({} files differ)",
                changes.changed.len()
            );
        }
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "full regeneration of {file_count} files: min {:.1} ms, median {:.1} ms, max {:.1} ms (20 runs)",
        ms(samples[0]),
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1])
    );
    Ok(())
}
