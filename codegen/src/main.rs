//! The `kubegen` binary: reads `kubegen.toml` (or flags), regenerates, or `--check`s for drift;
//! `kubegen init` scaffolds a new operator repository (see `init.rs`).
//!
//! Exit codes: 0 done / up to date, 1 input problems or drift (`--check`), 2 usage or I/O errors.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, Parser, Subcommand};
use kubegen_codegen::{Config, Error, GitReference, GitSource, InitOptions, Runtime};

/// Generate API types, clientset, listers, informers and CRDs from annotated Rust types.
#[derive(Parser)]
#[command(name = "kubegen", version, args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
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
    /// `workspace`, `path:<dir of kubegen's crates>` or `version:<v>` (a git runtime is a table:
    /// `runtime = { git = "<url>", tag = "..." }` in kubegen.toml).
    #[arg(long)]
    runtime: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Scaffold a new operator repository (API type, operator crate, tests, deploy/, Dockerfile)
    /// into an empty directory; then run `kubegen` and `cargo test` there.
    Init(Init),
    /// Turn CustomResourceDefinition manifests (files, directories, `-` for stdin) into
    /// annotated types under the input directory (`apis/<group>/<version>/`); then run `kubegen`.
    Import(Import),
}

#[derive(ClapArgs)]
#[command(disable_version_flag = true)]
struct Import {
    /// CRD manifests: YAML or JSON files (multi-document YAML too), directories, `-` for stdin.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Config file; defaults to `kubegen.toml` in the current directory when it exists.
    #[arg(long)]
    config: Option<PathBuf>,
}

#[derive(ClapArgs)]
#[command(disable_version_flag = true)]
#[command(group(clap::ArgGroup::new("runtime").required(true).args(["runtime_git", "runtime_path"])))]
struct Init {
    /// The new repository: an empty or missing directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// API group of the kind, e.g. `greetings.example.com`.
    #[arg(long)]
    group: String,
    /// API version of the kind, e.g. `v1`.
    #[arg(long)]
    version: String,
    /// The kind, e.g. `Greeting`.
    #[arg(long)]
    kind: String,
    /// The kind is namespaced (the default).
    #[arg(long, conflicts_with = "cluster_scoped")]
    namespaced: bool,
    /// The kind is cluster-scoped.
    #[arg(long)]
    cluster_scoped: bool,
    /// Operator name (crate, binary, Deployment, lease); default: the directory's name.
    #[arg(long)]
    name: Option<String>,
    /// Git URL of kubegen's repository for the runtime crates: the one `kubegen` was installed
    /// from (this or --runtime-path is required).
    #[arg(long, value_name = "URL", conflicts_with = "runtime_path")]
    runtime_git: Option<String>,
    /// With --runtime-git: the commit.
    #[arg(long, requires = "runtime_git", conflicts_with_all = ["tag", "branch"])]
    rev: Option<String>,
    /// With --runtime-git: the tag.
    #[arg(long, requires = "runtime_git", conflicts_with = "branch")]
    tag: Option<String>,
    /// With --runtime-git: the branch.
    #[arg(long, requires = "runtime_git")]
    branch: Option<String>,
    /// A local clone's `crates/` directory for the runtime crates (written relative).
    #[arg(long, value_name = "DIR")]
    runtime_path: Option<PathBuf>,
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    let result = match args.command.take() {
        Some(Command::Init(init)) => run_init(init),
        Some(Command::Import(import)) => run_import(import),
        None => run(args),
    };
    match result {
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

fn run_init(init: Init) -> Result<ExitCode, Error> {
    let reference = match (init.rev, init.tag, init.branch) {
        (Some(rev), _, _) => Some(GitReference::Rev(rev)),
        (_, Some(tag), _) => Some(GitReference::Tag(tag)),
        (_, _, Some(branch)) => Some(GitReference::Branch(branch)),
        _ => None,
    };
    let runtime = match (init.runtime_git, init.runtime_path) {
        (Some(url), _) => Runtime::Git(GitSource { url, reference }),
        (None, Some(dir)) => Runtime::Path(dir),
        // clap's `runtime` group already requires one of the two.
        (None, None) => {
            return Err(Error::InitOption {
                option: "runtime",
                value: String::new(),
                message: "give --runtime-git <url> (the repository kubegen was installed from) \
                          or --runtime-path <dir>"
                    .to_owned(),
            });
        }
    };
    let options = InitOptions {
        dir: init.dir,
        name: init.name,
        group: init.group,
        version: init.version,
        kind: init.kind,
        cluster_scoped: init.cluster_scoped,
        runtime,
    };
    let scaffold = kubegen_codegen::init(&options)?;
    for path in &scaffold.files {
        println!("wrote {}", options.dir.join(path).display());
    }
    println!(
        "kubegen: scaffolded {} in {}. Next:\n  cd {}\n  kubegen       # generates generated/ and \
         deploy/crds.yaml from apis/\n  cargo test    # runs the operator on an API server inside \
         the test",
        scaffold.name,
        options.dir.display(),
        options.dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Imports, writes the packages, then loads the whole input like `kubegen` does, so a package
/// the generator would refuse is reported now.
fn run_import(import: Import) -> Result<ExitCode, Error> {
    let default_file = PathBuf::from("kubegen.toml");
    let config = match &import.config {
        Some(path) => Config::load(path)?,
        None if default_file.exists() => Config::load(&default_file)?,
        None => Config::default(),
    };
    let imported = kubegen_codegen::import(&config, &import.inputs)?;
    for warning in &imported.warnings {
        eprintln!("kubegen import: warning: {warning}");
    }
    for (path, text) in &imported.files {
        let full = config.root.join(path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&full, text).map_err(|source| Error::Write {
            path: full.clone(),
            source,
        })?;
        println!("wrote {}", path.display());
    }
    kubegen_codegen::load_model(&config)?;
    println!(
        "kubegen import: {} files written; run `kubegen` to generate the crates and CRDs",
        imported.files.len()
    );
    Ok(ExitCode::SUCCESS)
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
    for warning in kubegen_codegen::warnings(&config)? {
        eprintln!("kubegen: warning: {warning}");
    }
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
