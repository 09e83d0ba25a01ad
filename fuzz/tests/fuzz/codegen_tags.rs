//! Fuzz target for codegen's tag parser, driven through the whole public pipeline
//! (`kubegen_codegen::generate`: parse -> check -> emit -> format) on a generated `apis/` tree.
//!
//! The promise under test: any tag line gives generated code or diagnostics that name the file and
//! a line that exists, never a panic and never an internal error (generated code that does not
//! parse); and an unknown tag is reported on exactly its own line.

use std::path::Path;

use kubegen_codegen::{Config, generate};
use proptest::prelude::*;

const VERBS: &[&str] = &[
    "create",
    "update",
    "updateStatus",
    "delete",
    "deleteCollection",
    "get",
    "list",
    "watch",
    "patch",
    "bogus",
    "",
];

fn verbs() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VERBS), 0..4).prop_map(|verbs| verbs.join(","))
}

/// A value: usually plausible, sometimes hostile.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9]{0,10}",
        1 => "[a-zA-Z0-9 ,;:=.\\-_/\"'`#{}()<>*]{0,16}",
        1 => any::<String>().prop_map(|s| s.replace(['\n', '\r'], " ")),
    ]
}

fn type_tag() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("+genclient:nonNamespaced".to_owned()),
        Just("+genclient:noStatus".to_owned()),
        Just("+genclient:noVerbs".to_owned()),
        Just("+genclient:readonly".to_owned()),
        verbs().prop_map(|v| format!("+genclient:onlyVerbs={v}")),
        verbs().prop_map(|v| format!("+genclient:skipVerbs={v}")),
        value().prop_map(|v| format!("+genclient:method={v}")),
        value().prop_map(|v| format!("+kubegen:plural={v}")),
        value().prop_map(|v| format!("+kubegen:singular={v}")),
        value().prop_map(|v| format!("+kubegen:shortNames={v}")),
        value().prop_map(|v| format!("+kubegen:categories={v}")),
        (value(), value())
            .prop_map(|(n, p)| format!("+kubegen:printcolumn:name={n},type=string,JSONPath={p}")),
        value().prop_map(|v| format!("+kubegen:printcolumn:{v}")),
        value().prop_map(|v| format!("+genclient={v}")),
        value().prop_map(|v| format!("+{v}")),
    ]
}

fn field_tag() -> impl Strategy<Value = String> {
    let rule = prop::sample::select(
        &[
            "Minimum",
            "Maximum",
            "ExclusiveMinimum",
            "ExclusiveMaximum",
            "Pattern",
            "Enum",
            "MinLength",
            "MaxLength",
            "MinItems",
            "MaxItems",
            "UniqueItems",
            "Format",
            "minimum",
            "bogus",
        ][..],
    );
    prop_oneof![
        (rule, value()).prop_map(|(r, v)| format!("+kubegen:validation:{r}={v}")),
        value().prop_map(|v| format!("+kubegen:default={v}")),
        Just("+kubegen:required".to_owned()),
        Just("+kubegen:optional".to_owned()),
        value().prop_map(|v| format!("+kubegen:{v}")),
    ]
}

/// Writes a one-kind `apis/` tree and its `kubegen.toml` into `dir`; returns the config.
fn tree(dir: &Path, group: &str, type_tags: &[String], field_tags: &[String]) -> Config {
    let package = dir.join("apis/fuzz/v1");
    let write = |path: &Path, text: String| {
        if let Err(error) = std::fs::write(path, text) {
            panic!("writing {}: {error}", path.display());
        }
    };
    if let Err(error) = std::fs::create_dir_all(&package) {
        panic!("creating {}: {error}", package.display());
    }
    write(
        &dir.join("kubegen.toml"),
        "input = \"apis\"\noutput = \"out\"\ncrd = \"crd.yaml\"\ncrate_prefix = \"fz\"\nruntime = \"workspace\"\nboilerplate = \"boilerplate.txt\"\n".to_owned(),
    );
    write(&dir.join("boilerplate.txt"), "// Fuzzed.\n".to_owned());
    write(
        &package.join("mod.rs"),
        format!("//! +groupName={group}\n//!\n//! Fuzzed.\n\nmod thing;\n"),
    );
    write(&package.join("thing.rs"), thing(type_tags, field_tags));
    match Config::load(&dir.join("kubegen.toml")) {
        Ok(config) => config,
        Err(error) => panic!("config: {error}"),
    }
}

/// The kind's source. Line 4 holds the first type tag; field tags follow the field doc line.
fn thing(type_tags: &[String], field_tags: &[String]) -> String {
    let mut out = String::from("/// A fuzzed kind.\n///\n/// +genclient\n");
    for tag in type_tags {
        out.push_str(&format!("/// {tag}\n"));
    }
    out.push_str("pub struct Thing {\n    pub metadata: ObjectMeta,\n    /// The spec.\n    pub spec: ThingSpec,\n}\n\n");
    out.push_str("/// The spec.\npub struct ThingSpec {\n    /// A size.\n");
    for tag in field_tags {
        out.push_str(&format!("    /// {tag}\n"));
    }
    out.push_str("    pub size: Option<i32>,\n}\n");
    out
}

/// Runs the pipeline; on failure every diagnostic must point at a line of an input file.
fn run_checked(dir: &Path, config: &Config) -> Result<(), TestCaseError> {
    match generate(config) {
        Ok(_) => Ok(()),
        Err(error) => {
            let diagnostics = error.diagnostics();
            prop_assert!(
                !diagnostics.is_empty(),
                "error without diagnostics: {error}"
            );
            for diagnostic in diagnostics {
                let file = dir.join(&diagnostic.location.file);
                let lines = std::fs::read_to_string(&file).map(|text| text.lines().count());
                prop_assert!(
                    lines.is_ok(),
                    "diagnostic names a missing file: {diagnostic}"
                );
                let lines = lines.unwrap_or(0);
                prop_assert!(
                    (1..=lines).contains(&diagnostic.location.line),
                    "diagnostic line out of range ({lines} lines): {diagnostic}"
                );
            }
            Ok(())
        }
    }
}

fn temp() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("tempdir: {error}"),
    }
}

proptest! {
    /// Any combination of type and field tags yields code or well-placed diagnostics, no panic.
    #[test]
    fn any_tags_give_code_or_located_diagnostics(
        type_tags in prop::collection::vec(type_tag(), 0..4),
        field_tags in prop::collection::vec(field_tag(), 0..3),
        group in prop_oneof![Just("fuzz.example.com".to_owned()), value()],
    ) {
        let dir = temp();
        let config = tree(dir.path(), &group, &type_tags, &field_tags);
        run_checked(dir.path(), &config)?;
    }

    /// An unknown type tag is reported on exactly its own line.
    #[test]
    fn unknown_tag_is_reported_on_its_line(
        before in prop::collection::vec(Just("+genclient:noStatus".to_owned()), 0..2),
        unknown in "\\+zz[a-zA-Z:]{0,12}",
    ) {
        let dir = temp();
        let mut tags = before.clone();
        tags.push(unknown.clone());
        let config = tree(dir.path(), "fuzz.example.com", &tags, &[]);
        let result = generate(&config);
        prop_assert!(result.is_err());
        let Err(error) = result else { return Ok(()) };
        let line = 4 + before.len();
        let located = error.diagnostics().iter().any(|d| {
            d.location.line == line && d.location.file.ends_with("thing.rs") && d.message.contains(&unknown)
        });
        prop_assert!(located, "no diagnostic at thing.rs:{line} for {unknown}: {error}");
    }
}

/// Fuzz finding (2026-11-22): a plural starting with a digit panicked in `names::ident`; it is now
/// a DNS-1035 diagnostic from the checker.
#[test]
fn plural_starting_with_a_digit_is_a_diagnostic() {
    let dir = temp();
    let config = tree(
        dir.path(),
        "fuzz.example.com",
        &["+kubegen:plural=0".to_owned()],
        &[],
    );
    let outcome = std::panic::catch_unwind(|| generate(&config).map(|_| ()));
    assert!(outcome.is_ok(), "codegen panicked");
    if let Ok(Err(error)) = outcome {
        assert!(!error.diagnostics().is_empty(), "{error}");
    }
}
