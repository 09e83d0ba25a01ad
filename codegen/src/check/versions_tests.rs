use crate::testutil::load_files;

const GROUP: &str = "//! +groupName=fleet.example.com\nmod ship;\n";

fn ship(tag: &str) -> String {
    format!(
        "/// A ship.\n/// +genclient\n{tag}pub struct Ship {{\n    pub metadata: ObjectMeta,\n}}\n"
    )
}

/// The messages of loading v1 and v2 of `Ship` with these tags, as `file:line: message`.
fn errors(v1_tag: &str, v2_tag: &str) -> Vec<String> {
    let (v1, v2) = (ship(v1_tag), ship(v2_tag));
    match load_files(&[
        ("fleet/v1/mod.rs", GROUP),
        ("fleet/v1/ship.rs", &v1),
        ("fleet/v2/mod.rs", GROUP),
        ("fleet/v2/ship.rs", &v2),
    ]) {
        Ok(_) => Vec::new(),
        Err(error) => error
            .diagnostics()
            .iter()
            .map(|d| {
                format!(
                    "{}:{}: {}",
                    d.location.file.display(),
                    d.location.line,
                    d.message
                )
            })
            .collect(),
    }
}

#[test]
fn a_kind_in_two_versions_needs_a_storage_version_and_the_error_names_both_files() {
    assert_eq!(
        errors("", ""),
        [
            "apis/fleet/v1/ship.rs:3: `Ship` is served in 2 versions but none is marked as the \
          storage version (apis/fleet/v1/ship.rs:3, apis/fleet/v2/ship.rs:3)"
        ]
    );
}

#[test]
fn two_storage_versions_are_an_error_on_each() {
    let tag = "/// +kubegen:storageversion\n";
    assert_eq!(
        errors(tag, tag),
        [
            "apis/fleet/v1/ship.rs:4: `Ship` has several storage versions \
             (apis/fleet/v1/ship.rs:4, apis/fleet/v2/ship.rs:4)",
            "apis/fleet/v2/ship.rs:4: `Ship` has several storage versions \
             (apis/fleet/v1/ship.rs:4, apis/fleet/v2/ship.rs:4)",
        ]
    );
}

#[test]
fn kubebuilders_spelling_marks_the_storage_version_too() {
    assert_eq!(
        errors("", "/// +kubebuilder:storageversion\n"),
        Vec::<String>::new()
    );
    assert_eq!(
        errors("/// +kubegen:storageversion\n", ""),
        Vec::<String>::new()
    );
}
