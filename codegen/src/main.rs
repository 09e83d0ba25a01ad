//! The `kubegen` binary: reads `kubegen.toml` (or flags), regenerates, or `--check`s for drift.
//!
//! Exit codes: 0 done / up to date, 1 input problems or drift (`--check`), 2 usage or I/O errors.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kubegen_codegen::{Config, Error, Runtime};

/// Generate API types, clientset, listers, informers and CRDs from annotated Rust types.
#[derive(Parser)]
#[command(name = "kubegen", version)]
struct Args {
    /// Config file; defaults to `kubegen.toml` in the current directory when it exists.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Compare with the files on disk instead of writing; exit 1 and print a diff on drift.
    #[arg(long)]
    check: bool,
    /// Input directory (`<input>/<group>/<version>/*.rs`).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Built-in kinds list (TOML).
    #[arg(long)]
    builtins: Option<PathBuf>,
    /// Parent directory of the generated crates.
    #[arg(long)]
    output: Option<PathBuf>,
    /// CRD manifest path.
    #[arg(long)]
    crd: Option<PathBuf>,
    /// Path of the same CRDs as apiextensions.k8s.io/v1beta1, for API servers older than 1.16.
    #[arg(long)]
    crd_v1beta1: Option<PathBuf>,
    /// License header file.
    #[arg(long)]
    boilerplate: Option<PathBuf>,
    /// Generated crates are named `<prefix>-api`, `<prefix>-clientset`, ...
    #[arg(long)]
    crate_prefix: Option<String>,
    /// `workspace`, `path:<dir of kubegen's crates>` or `version:<v>`.
    #[arg(long)]
    runtime: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("kubegen: {error}");
            if error.diagnostics().is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn run(args: Args) -> Result<ExitCode, Error> {
    let default_file = PathBuf::from("kubegen.toml");
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None if default_file.exists() => Config::load(&default_file)?,
        None => Config::default(),
    };
    if let Some(input) = args.input {
        config.input = input;
    }
    if let Some(builtins) = args.builtins {
        config.builtins = Some(builtins);
    }
    if let Some(output) = args.output {
        config.output = output;
    }
    if let Some(crd) = args.crd {
        config.crd = Some(crd);
    }
    if let Some(crd_v1beta1) = args.crd_v1beta1 {
        config.crd_v1beta1 = Some(crd_v1beta1);
    }
    if let Some(boilerplate) = args.boilerplate {
        config.boilerplate = Some(boilerplate);
    }
    if let Some(prefix) = args.crate_prefix {
        config.crate_prefix = prefix;
    }
    if let Some(runtime) = args.runtime {
        config.runtime = Runtime::try_from(runtime).map_err(|message| Error::BadConfig {
            path: PathBuf::from("--runtime"),
            message,
        })?;
    }
    let files = kubegen_codegen::generate(&config)?;
    if args.check {
        let changes = kubegen_codegen::check(&config, &files);
        if changes.is_empty() {
            println!("kubegen: {} generated files are up to date", files.len());
            return Ok(ExitCode::SUCCESS);
        }
        print!("{}", changes.diff);
        if let Some(note) = changes.version_note() {
            eprintln!("kubegen: {note}");
        }
        eprintln!(
            "kubegen: generated code is stale ({} changed, {} stale): run scripts/update-codegen.sh",
            changes.changed.len(),
            changes.stale.len()
        );
        return Ok(ExitCode::from(1));
    }
    let changes = kubegen_codegen::write(&config, &files)?;
    for path in &changes.changed {
        println!("wrote {}", path.display());
    }
    for path in &changes.stale {
        println!("deleted stale {}", path.display());
    }
    println!(
        "kubegen: {} files, {} written, {} deleted",
        files.len(),
        changes.changed.len(),
        changes.stale.len()
    );
    Ok(ExitCode::SUCCESS)
}
