use bytes::Bytes;
use http::header;
use serde_json::{Map, json};

use super::*;
use crate::object::partial_object_metadata;

fn accept(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, value.parse().unwrap());
    headers
}

fn def(group: &str, kind: &str) -> ResourceDefinition {
    ResourceDefinition {
        group: group.into(),
        version: "v1".into(),
        plural: "things".into(),
        kind: kind.into(),
        ..ResourceDefinition::default()
    }
}

fn conversion(value: &str, verb: Verb) -> Result<Option<Conversion>, ApiError> {
    Conversion::from_request(
        &accept(value),
        &Query::parse(None),
        &def("", "ConfigMap"),
        verb,
    )
}

const LIST_V1: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const OBJECT_V1BETA1: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json";

#[test]
fn metadata_ranges_choose_the_metadata_conversion_in_their_version() {
    assert_eq!(
        conversion(LIST_V1, Verb::List).unwrap(),
        Some(Conversion::Metadata("v1"))
    );
    for verb in [Verb::Get, Verb::Watch] {
        assert_eq!(
            conversion(OBJECT_V1BETA1, verb).unwrap(),
            Some(Conversion::Metadata("v1beta1")),
            "{verb}"
        );
    }
}

#[test]
fn plain_json_first_means_no_conversion_even_with_metadata_ranges_after_it() {
    let value = "application/json,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    assert_eq!(conversion(value, Verb::List).unwrap(), None);
}

#[test]
fn the_single_form_on_a_list_and_the_list_form_on_a_get_are_not_acceptable() {
    let single = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let error = conversion(single, Verb::List).unwrap_err();
    assert_eq!((error.code, &*error.reason), (406, "NotAcceptable"));
    assert_eq!(
        error.message,
        "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
    );
    let error = conversion(LIST_V1, Verb::Get).unwrap_err();
    assert_eq!(
        error.message,
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
    );
}

#[test]
fn go_types_name_the_group_package_for_built_ins_and_unstructured_otherwise() {
    let deployment = ResourceDefinition {
        plural: "deployments".into(),
        ..def("apps", "Deployment")
    };
    assert_eq!(go_type(&deployment, false), "*apps.Deployment");
    assert_eq!(
        go_type(&def("example.com", "Widget"), true),
        "*unstructured.UnstructuredList"
    );
}

#[test]
fn partial_object_metadata_keeps_the_whole_metadata_and_drops_the_rest() {
    let object = json!({
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "a", "labels": {"x": "y"}, "resourceVersion": "7"},
        "data": {"k": "v"},
    });
    assert_eq!(
        partial_object_metadata(&object, "v1"),
        json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": {"name": "a", "labels": {"x": "y"}, "resourceVersion": "7"},
        })
    );
}

#[tokio::test]
async fn partial_lists_are_partial_object_metadata_lists_with_the_list_metadata() {
    use http_body_util::BodyExt;
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), "9".into());
    let kind = ("meta.k8s.io/v1beta1", "PartialObjectMetadata");
    let response = crate::encode::list_response(
        crate::request::negotiation::WireFormat::Json,
        kind,
        metadata,
        vec![],
        crate::encode::ItemTypes::Written,
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        body,
        Bytes::from_static(
            b"{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/v1beta1\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[]}"
        )
    );
}
