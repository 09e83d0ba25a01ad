//! Fuzz target for the kubeconfig parser (`Kubeconfig::parse`) and the step after it
//! (`Config::from_kubeconfig`): structured kubeconfigs must mean exactly what they say; mangled
//! and arbitrary text must fail with an error, never a panic.

use std::path::{Path, PathBuf};

use kubegen_client::{Config, Kubeconfig, LoadOptions};
use proptest::prelude::*;

/// One context of a generated kubeconfig.
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    port: u16,
    token: String,
    namespace: Option<String>,
    ca_file: String,
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        "[a-z][a-z0-9-]{0,15}",
        1u16..,
        "[A-Za-z0-9._-]{1,40}",
        prop::option::of("[a-z][a-z0-9-]{0,15}"),
        "[a-z]{1,8}/[a-z]{1,8}\\.crt",
    )
        .prop_map(|(name, port, token, namespace, ca_file)| Entry {
            name,
            port,
            token,
            namespace,
            ca_file,
        })
}

/// Contexts with distinct names (kubeconfig names are keys).
fn entries() -> impl Strategy<Value = Vec<Entry>> {
    prop::collection::vec(entry(), 1..5).prop_map(|mut entries| {
        let mut seen = std::collections::HashSet::new();
        entries.retain(|entry| seen.insert(entry.name.clone()));
        entries
    })
}

fn yaml(entries: &[Entry], current: usize) -> String {
    let mut out = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for entry in entries {
        out.push_str(&format!(
            "- name: \"c-{0}\"\n  cluster:\n    server: \"http://127.0.0.1:{1}\"\n    certificate-authority: \"{2}\"\n",
            entry.name, entry.port, entry.ca_file
        ));
    }
    out.push_str("users:\n");
    for entry in entries {
        out.push_str(&format!(
            "- name: \"u-{0}\"\n  user:\n    token: \"{1}\"\n",
            entry.name, entry.token
        ));
    }
    out.push_str("contexts:\n");
    for entry in entries {
        out.push_str(&format!(
            "- name: \"{0}\"\n  context:\n    cluster: \"c-{0}\"\n    user: \"u-{0}\"\n",
            entry.name
        ));
        if let Some(namespace) = &entry.namespace {
            out.push_str(&format!("    namespace: \"{namespace}\"\n"));
        }
    }
    out.push_str(&format!(
        "current-context: \"{}\"\n",
        entries[current % entries.len()].name
    ));
    out
}

fn source() -> &'static Path {
    Path::new("/fuzz/home/.kube/config")
}

proptest! {
    /// A generated kubeconfig parses to exactly its contents; relative file paths are resolved
    /// against the file's directory.
    #[test]
    fn parse_reads_generated_kubeconfigs_exactly(entries in entries(), current in any::<usize>()) {
        let text = yaml(&entries, current);
        let parsed = Kubeconfig::parse(&text, source());
        prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed.err(), text);
        let Ok(parsed) = parsed else { return Ok(()) };
        prop_assert_eq!(parsed.contexts.len(), entries.len());
        let expected_current = entries[current % entries.len()].name.clone();
        prop_assert_eq!(parsed.current_context.as_deref(), Some(expected_current.as_str()));
        for entry in &entries {
            let context = parsed.context(&entry.name);
            prop_assert!(context.is_some());
            let cluster = parsed.cluster(&format!("c-{}", entry.name)).map(|c| c.cluster.clone());
            prop_assert!(cluster.is_some());
            let Some(cluster) = cluster else { continue };
            let server = format!("http://127.0.0.1:{}", entry.port);
            prop_assert_eq!(cluster.server.as_deref(), Some(server.as_str()));
            let ca = PathBuf::from("/fuzz/home/.kube").join(&entry.ca_file);
            prop_assert_eq!(cluster.certificate_authority, Some(ca));
            let user = parsed.auth_info(&format!("u-{}", entry.name)).map(|u| u.user.token.clone());
            prop_assert_eq!(user, Some(Some(entry.token.clone())));
        }
    }

    /// Choosing a context yields that context's server and namespace (`default` when unset); the
    /// CA file of the generated config does not exist, so the config step must report that file.
    #[test]
    fn from_kubeconfig_selects_the_named_context(entries in entries(), pick in any::<usize>()) {
        let mut text = yaml(&entries, 0);
        // Drop the CA files so the selected context can be built without touching the disk.
        text = text
            .lines()
            .filter(|line| !line.contains("certificate-authority"))
            .map(|line| format!("{line}\n"))
            .collect();
        let parsed = Kubeconfig::parse(&text, source());
        prop_assert!(parsed.is_ok());
        let Ok(parsed) = parsed else { return Ok(()) };
        let entry = &entries[pick % entries.len()];
        let config = Config::from_kubeconfig(&parsed, &LoadOptions::default().context(entry.name.clone()));
        prop_assert!(config.is_ok(), "{:?}", config.err());
        let Ok(config) = config else { return Ok(()) };
        let server = format!("http://127.0.0.1:{}/", entry.port);
        prop_assert_eq!(config.cluster_url().to_string(), server);
        prop_assert_eq!(config.default_namespace(), entry.namespace.as_deref().unwrap_or("default"));
    }

    /// Truncating or corrupting a valid kubeconfig anywhere gives an error or a config, never a
    /// panic, in both the parse and the config step.
    #[test]
    fn mangled_kubeconfigs_never_panic(
        entries in entries(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<char>()), 0..4),
    ) {
        let text = yaml(&entries, 0);
        let mut chars: Vec<char> = text.chars().collect();
        for (at, replacement) in flips {
            let at = at.index(chars.len());
            chars[at] = replacement;
        }
        let keep = cut.index(chars.len() + 1);
        let mangled: String = chars[..keep.min(chars.len())].iter().collect();
        if let Ok(parsed) = Kubeconfig::parse(&mangled, source()) {
            let _ = Config::from_kubeconfig(&parsed, &LoadOptions::default());
        }
    }

    /// Arbitrary text never panics the parser.
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = Kubeconfig::parse(&text, source());
    }

    /// YAML-ish text (the characters YAML structure is made of) never panics the parser.
    #[test]
    fn yaml_like_text_never_panics(text in "[a-z:\\- \n\"'\\[\\]{}|>&*!#0-9]{0,300}") {
        if let Ok(parsed) = Kubeconfig::parse(&text, source()) {
            let _ = Config::from_kubeconfig(&parsed, &LoadOptions::default());
        }
    }
}
