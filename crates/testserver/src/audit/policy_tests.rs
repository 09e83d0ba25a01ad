use super::*;
use crate::authz::UserInfo;

fn policy(rules: &str) -> AuditPolicy {
    let text = format!("apiVersion: audit.k8s.io/v1\nkind: Policy\n{rules}");
    match AuditPolicy::from_yaml(&text) {
        Ok(policy) => policy,
        Err(e) => panic!("{e}"),
    }
}

fn refusal(body: &str) -> String {
    let text = format!("apiVersion: audit.k8s.io/v1\nkind: Policy\n{body}");
    match AuditPolicy::from_yaml(&text) {
        Ok(_) => panic!("accepted: {body}"),
        Err(e) => e.to_string(),
    }
}

fn resource(
    verb: &str,
    group: &str,
    resource: &str,
    sub: &str,
    ns: &str,
    name: &str,
) -> Attributes {
    Attributes {
        user: UserInfo::new("alice", "", &["dev", "system:authenticated"]),
        verb: verb.into(),
        namespace: ns.into(),
        group: group.into(),
        version: "v1".into(),
        resource: resource.into(),
        subresource: sub.into(),
        name: name.into(),
        path: String::new(),
    }
}

fn path(verb: &str, path: &str) -> Attributes {
    Attributes {
        user: UserInfo::new("alice", "", &["system:authenticated"]),
        verb: verb.into(),
        path: path.into(),
        ..Attributes::default()
    }
}

fn level(policy: &AuditPolicy, attributes: &Attributes) -> Level {
    policy.decide(attributes).level
}

/// The shared v1.36's reference policy (`/opt/k8s136/audit/policy.yaml`), rule by rule.
#[test]
fn the_reference_policy_picks_the_first_matching_rule() {
    let p = policy(
        r#"rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version"]
- level: None
  resources: [{group: "coordination.k8s.io", resources: ["leases"]}]
- level: None
  namespaces: ["audit-none"]
- level: Metadata
  namespaces: ["audit-meta"]
  omitStages: ["RequestReceived"]
- level: Request
  namespaces: ["audit-request"]
- level: RequestResponse
  namespaces: ["audit-rr"]
  omitManagedFields: true
- level: Metadata
"#,
    );
    let cm = |ns: &str| resource("get", "", "configmaps", "", ns, "c");
    assert_eq!(level(&p, &path("get", "/healthz/etcd")), Level::None);
    assert_eq!(level(&p, &path("get", "/version")), Level::None);
    assert_eq!(level(&p, &path("get", "/versions")), Level::Metadata);
    let lease = resource(
        "update",
        "coordination.k8s.io",
        "leases",
        "",
        "kube-node-lease",
        "n",
    );
    assert_eq!(level(&p, &lease), Level::None);
    assert_eq!(level(&p, &cm("audit-none")), Level::None);
    let meta = p.decide(&cm("audit-meta"));
    assert_eq!(
        (meta.level, meta.omit_stages, meta.omit_managed_fields),
        (Level::Metadata, vec![Stage::RequestReceived], false)
    );
    assert_eq!(level(&p, &cm("audit-request")), Level::Request);
    let rr = p.decide(&cm("audit-rr"));
    assert_eq!(
        (rr.level, rr.omit_managed_fields),
        (Level::RequestResponse, true)
    );
    assert_eq!(level(&p, &cm("default")), Level::Metadata);
}

#[test]
fn no_matching_rule_is_level_none() {
    let p = policy("rules:\n- level: Metadata\n  verbs: [create]\n");
    assert_eq!(
        level(&p, &resource("get", "", "pods", "", "d", "p")),
        Level::None
    );
    assert_eq!(
        level(&p, &resource("create", "", "pods", "", "d", "")),
        Level::Metadata
    );
}

#[test]
fn users_and_groups_must_match() {
    let p = policy(
        "rules:\n- level: Request\n  users: [bob]\n- level: RequestResponse\n  userGroups: [dev]\n- level: Metadata\n",
    );
    let mut attributes = resource("get", "", "pods", "", "d", "p");
    assert_eq!(level(&p, &attributes), Level::RequestResponse);
    attributes.user = UserInfo::new("bob", "", &[]);
    assert_eq!(level(&p, &attributes), Level::Request);
    attributes.user = UserInfo::new("carol", "", &["ops"]);
    assert_eq!(level(&p, &attributes), Level::Metadata);
}

#[test]
fn resources_match_by_group_subresource_wildcards_and_names() {
    let p = policy(
        r#"rules:
- level: None
  resources: [{group: "", resources: ["pods/log"]}]
- level: Request
  resources: [{group: "apps", resources: ["deployments/*"]}]
- level: RequestResponse
  resources: [{group: "*", resources: ["*/status"]}]
- level: Request
  resources: [{group: "", resources: ["secrets"], resourceNames: ["s1"]}]
- level: Metadata
  resources: [{group: "batch"}]
"#,
    );
    let at = |group: &str, res: &str, sub: &str, name: &str| {
        level(&p, &resource("get", group, res, sub, "d", name))
    };
    assert_eq!(at("", "pods", "log", "p"), Level::None);
    assert_eq!(at("", "pods", "", "p"), Level::None, "pods itself: no rule");
    assert_eq!(at("apps", "deployments", "scale", "d"), Level::Request);
    // `resource/*` covers the resource itself too (checker.go trims the suffix).
    assert_eq!(at("apps", "deployments", "", "d"), Level::Request);
    assert_eq!(
        at("example.com", "things", "status", "t"),
        Level::RequestResponse
    );
    assert_eq!(at("", "secrets", "", "s1"), Level::Request);
    assert_eq!(at("", "secrets", "", "s2"), Level::None);
    assert_eq!(at("batch", "jobs", "", "j"), Level::Metadata);
    // A resource rule never matches a non-resource request.
    assert_eq!(level(&p, &path("get", "/apis")), Level::None);
}

#[test]
fn namespaces_match_resource_requests_only() {
    let p = policy(
        "rules:\n- level: Request\n  namespaces: [\"\"]\n- level: Metadata\n  nonResourceURLs: [\"*\"]\n",
    );
    let node = resource("get", "", "nodes", "", "", "n");
    assert_eq!(
        level(&p, &node),
        Level::Request,
        "cluster-scoped is the empty namespace"
    );
    assert_eq!(
        level(&p, &resource("get", "", "pods", "", "d", "p")),
        Level::None
    );
    assert_eq!(level(&p, &path("get", "/metrics")), Level::Metadata);
}

#[test]
fn stages_and_managed_fields_combine_policy_and_rule() {
    let p = policy(
        "omitStages: [RequestReceived]\nomitManagedFields: true\nrules:\n- level: Metadata\n  omitStages: [ResponseStarted]\n  omitManagedFields: false\n  verbs: [get]\n- level: Request\n",
    );
    let get = p.decide(&resource("get", "", "pods", "", "d", "p"));
    assert_eq!(
        get.omit_stages,
        [Stage::RequestReceived, Stage::ResponseStarted]
    );
    assert!(!get.omit_managed_fields);
    let list = p.decide(&resource("list", "", "pods", "", "d", ""));
    assert_eq!(list.omit_stages, [Stage::RequestReceived]);
    assert!(list.omit_managed_fields);
}

#[test]
fn malformed_policies_name_the_field_as_v1_36() {
    assert_eq!(
        refusal("rules:\n- level: Full\n"),
        "audit policy <inline>: rules[0].level: Unsupported value: \"Full\": supported values: \"None\", \"Metadata\", \"Request\", \"RequestResponse\""
    );
    assert_eq!(
        refusal("rules:\n- verbs: [get]\n"),
        "audit policy <inline>: rules[0].level: Required value"
    );
    assert_eq!(
        refusal("rules:\n- level: None\n  omitStages: [Done]\n"),
        "audit policy <inline>: rules[0].omitStages[0]: Invalid value: \"Done\": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic"
    );
    assert_eq!(
        refusal("rules:\n- level: None\n  nonResourceURLs: [\"healthz\", \"/a*b\"]\n"),
        "audit policy <inline>: [rules[0].nonResourceURLs[0]: Invalid value: \"healthz\": non-resource URL rules must begin with a '/' character, rules[0].nonResourceURLs[1]: Invalid value: \"/a*b\": non-resource URL wildcards '*' must be the final character of the rule]"
    );
    assert_eq!(
        refusal("rules:\n- level: None\n  nonResourceURLs: [\"/x\"]\n  namespaces: [a]\n"),
        "audit policy <inline>: rules[0].nonResourceURLs: Invalid value: [\"/x\"]: rules cannot apply to both regular resources and non-resource URLs"
    );
    assert_eq!(
        refusal("rules:\n- level: None\n  resources: [{group: \"\", resourceNames: [a]}]\n"),
        "audit policy <inline>: rules[0].resources.resourceNames: Invalid value: [\"a\"]: using resourceNames requires at least one resource"
    );
    assert!(
        refusal("rules:\n- level: None\n  resources: [{group: Bad_Group}]\n").starts_with(
            "audit policy <inline>: rules[0].resources.group: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain"
        )
    );
    assert_eq!(
        refusal("rules: []\n"),
        "audit policy <inline>: loaded illegal policy with 0 rules"
    );
    assert_eq!(
        refusal("omitStages: [Later]\nrules:\n- level: None\n"),
        "audit policy <inline>: omitStages[0]: Invalid value: \"Later\": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic"
    );
    let wrong_kind = AuditPolicy::from_yaml(
        "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n",
    );
    assert_eq!(
        wrong_kind.map(|_| ()).map_err(|e| e.to_string()),
        Err("audit policy <inline>: unknown group version field audit.k8s.io/v1beta1, Kind=Policy in policy".into())
    );
}

#[test]
fn unknown_fields_are_ignored_as_the_lenient_decoder_does() {
    let p = policy("rules:\n- level: Metadata\n  colour: blue\n");
    assert_eq!(level(&p, &path("get", "/x")), Level::Metadata);
}

#[test]
fn a_policy_file_that_cannot_be_read_names_the_file() {
    let error = AuditPolicy::from_file(Path::new("/nonexistent/policy.yaml"))
        .map(|_| ())
        .map_err(|e| e.to_string());
    let text = error.unwrap_err();
    assert!(
        text.starts_with("audit policy /nonexistent/policy.yaml: "),
        "{text}"
    );
}
