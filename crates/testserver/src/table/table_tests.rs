use super::*;

fn accept(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, value.parse().unwrap());
    headers
}

fn table_of(include: IncludeObject) -> TableRequest {
    TableRequest {
        version: "v1",
        include,
    }
}

fn def(group: &str, plural: &str) -> ResourceDefinition {
    ResourceDefinition {
        group: group.into(),
        version: "v1".into(),
        plural: plural.into(),
        kind: "Thing".into(),
        ..ResourceDefinition::default()
    }
}

#[test]
fn kubectl_accept_header_asks_for_a_v1_table() {
    let headers = accept(
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
    );
    let request = TableRequest::from_request(&headers, &Query::parse(None)).unwrap();
    assert_eq!(request, Some(table_of(IncludeObject::Metadata)));
    let old_kubectl = accept("application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json");
    let request = TableRequest::from_request(&old_kubectl, &Query::parse(None)).unwrap();
    assert_eq!(request.map(|r| r.version), Some("v1beta1"));
}

#[test]
fn plain_json_first_or_no_accept_means_no_table() {
    for value in [
        "application/json",
        "application/json, application/json;as=Table;v=v1;g=meta.k8s.io",
        "*/*",
        "application/json;as=Table;v=v2;g=meta.k8s.io",
    ] {
        let request = TableRequest::from_request(&accept(value), &Query::parse(None)).unwrap();
        assert_eq!(request, None, "{value}");
    }
    let none = TableRequest::from_request(&HeaderMap::new(), &Query::parse(None)).unwrap();
    assert_eq!(none, None);
}

#[test]
fn include_object_is_parsed_and_validated() {
    let headers = accept("application/json;as=Table;v=v1;g=meta.k8s.io");
    for (value, want) in [
        ("None", IncludeObject::None),
        ("Object", IncludeObject::Object),
        ("Metadata", IncludeObject::Metadata),
    ] {
        let query = Query::parse(Some(&format!("includeObject={value}")));
        let request = TableRequest::from_request(&headers, &query).unwrap();
        assert_eq!(request.map(|r| r.include), Some(want));
    }
    let err =
        TableRequest::from_request(&headers, &Query::parse(Some("includeObject=All"))).unwrap_err();
    assert_eq!((err.code, &*err.reason), (400, "BadRequest"));
    assert_eq!(
        err.message,
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );
}

#[test]
fn columns_data_parses_and_covers_every_printer() {
    for (group, plural) in [
        ("", "pods"),
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("", "services"),
        ("apps", "statefulsets"),
        ("", "nodes"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("", "namespaces"),
        ("", "secrets"),
        ("", "serviceaccounts"),
        ("apps", "deployments"),
        ("", "configmaps"),
        ("coordination.k8s.io", "leases"),
    ] {
        let kind = Kind::of(group, plural).unwrap();
        let columns = COLUMNS.printers.get(kind.columns_key()).unwrap();
        let object = json!({"metadata": {"name": "x"}});
        let cells = kind.cells(&object, jiff::Timestamp::now());
        assert_eq!(cells.len(), columns.len(), "{group}/{plural}");
    }
}

#[test]
fn metadata_rows_carry_partial_object_metadata() {
    let object = json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5"}, "data": {"k": "v"}});
    let cm = def("", "configmaps");
    let meta = Map::new();
    let table = table_of(IncludeObject::Metadata).render(&cm, &[&object], meta.clone(), true);
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
               "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5"}})
    );
    assert_eq!(table["rows"][0]["cells"][0], "a");
    assert_eq!(table["rows"][0]["cells"][1], 1);
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Data", "Age"]);
    let whole = table_of(IncludeObject::Object).render(&cm, &[&object], meta.clone(), false);
    assert_eq!(whole["rows"][0]["object"], object);
    assert_eq!(whole["columnDefinitions"], Value::Null);
    let none = table_of(IncludeObject::None).render(&cm, &[&object], meta, true);
    assert_eq!(none["rows"][0]["object"], Value::Null);
}

#[test]
fn custom_resources_print_name_then_their_columns_or_age() {
    let object = json!({"metadata": {"name": "w", "creationTimestamp": "2000-01-01T00:00:00Z"},
                        "spec": {"replicas": 2}});
    let mut things = def("example.com", "things");
    let table = table_of(IncludeObject::None).render(&things, &[&object], Map::new(), true);
    let columns = table["columnDefinitions"].as_array().unwrap();
    assert_eq!(columns[0]["name"], "Name");
    assert_eq!(columns[0]["format"], "name");
    assert_eq!(columns[1]["name"], "Age");
    assert_eq!(columns[1]["type"], "date");
    assert!(
        table["rows"][0]["cells"][1]
            .as_str()
            .unwrap()
            .ends_with('y')
    );
    things.printer_columns = vec![PrinterColumn {
        name: "Replicas".into(),
        type_: "integer".into(),
        json_path: ".spec.replicas".into(),
        priority: 1,
        ..PrinterColumn::default()
    }];
    let table = table_of(IncludeObject::None).render(&things, &[&object], Map::new(), true);
    assert_eq!(table["rows"][0]["cells"], json!(["w", 2]));
    assert_eq!(table["columnDefinitions"][1]["priority"], 1);
}

#[test]
fn crds_use_the_default_convertor() {
    let crd = def("apiextensions.k8s.io", "customresourcedefinitions");
    let object = json!({"metadata": {"name": "things.example.com",
                                     "creationTimestamp": "2024-05-01T10:00:00Z"}});
    let table = table_of(IncludeObject::None).render(&crd, &[&object], Map::new(), true);
    assert_eq!(
        table["rows"][0]["cells"],
        json!(["things.example.com", "2024-05-01T10:00:00Z"])
    );
    assert_eq!(table["columnDefinitions"][1]["name"], "Created At");
}

#[test]
fn finished_pods_get_a_completed_row_condition() {
    let pods = def("", "pods");
    let pod = json!({"metadata": {"name": "p"}, "status": {"phase": "Succeeded"}});
    let table = table_of(IncludeObject::None).render(&pods, &[&pod], Map::new(), true);
    assert_eq!(
        table["rows"][0]["conditions"],
        json!([{"type": "Completed", "status": "True", "reason": "Succeeded",
                "message": "The pod has completed successfully."}])
    );
    let running = json!({"metadata": {"name": "p"}, "status": {"phase": "Running"}});
    let table = table_of(IncludeObject::None).render(&pods, &[&running], Map::new(), true);
    assert!(table["rows"][0].get("conditions").is_none());
}
