use super::*;

#[test]
fn whole_objects_ask_for_json_or_protobuf_then_json() {
    for read in [Read::Get, Read::List, Read::Watch] {
        assert_eq!(
            Representation::Object.accept(read, false),
            "application/json"
        );
    }
    assert_eq!(
        Representation::Object.accept(Read::List, true),
        "application/vnd.kubernetes.protobuf, application/json"
    );
    assert_eq!(
        Representation::Object.accept(Read::Watch, true),
        "application/vnd.kubernetes.protobuf;stream=watch, application/json"
    );
}

#[test]
fn metadata_lists_ask_for_the_list_conversion_then_v1beta1_then_whole_objects() {
    assert_eq!(
        Representation::Metadata.accept(Read::List, false),
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
         application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,\
         application/json"
    );
    assert_eq!(
        Representation::Metadata.accept(Read::List, true),
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
         application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
         application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,\
         application/json"
    );
}

#[test]
fn metadata_gets_and_watches_ask_for_the_single_object_conversion() {
    for read in [Read::Get, Read::Watch] {
        assert_eq!(
            Representation::Metadata.accept(read, false),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,\
             application/json"
        );
        assert_eq!(
            Representation::Metadata.accept(read, true),
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,\
             application/json"
        );
    }
}

#[test]
fn metadata_reads_decode_partial_object_metadata_in_protobuf_for_every_kind() {
    let proto = Representation::Metadata
        .proto_kind(WireFormat::Protobuf, "v1", "ConfigMap")
        .expect("PartialObjectMetadata has a protobuf form");
    assert_eq!(
        proto.message_name(),
        "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata"
    );
    assert!(
        Representation::Metadata
            .proto_kind(WireFormat::Json, "v1", "ConfigMap")
            .is_none()
    );
}
