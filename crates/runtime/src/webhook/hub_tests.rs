use kubegen_api::cloudnative::{v1, v1alpha1};
use serde_json::json;

use super::*;

/// The hand-written halves for the seed VirtualMachine: keys are renamed, the bus is a string in
/// v1alpha1 and an enum in v1.
struct Hands;

impl v1::Conversion for Hands {
    fn v1alpha1_virtual_machine_spec_ssh_keys(
        from: &v1::VirtualMachineSpec,
    ) -> Result<Vec<String>, String> {
        Ok(from.authorized_keys.clone())
    }
    fn v1alpha1_virtual_machine_spec_disk_bus(
        from: &v1::VirtualMachineSpec,
    ) -> Result<String, String> {
        Ok(match from.disk_bus {
            v1::DiskBus::Virtio => "virtio",
            v1::DiskBus::Scsi => "scsi",
            v1::DiskBus::Sata => "sata",
        }
        .to_owned())
    }
    fn v1_virtual_machine_spec_authorized_keys(
        from: &v1alpha1::VirtualMachineSpec,
    ) -> Result<Vec<String>, String> {
        Ok(from.ssh_keys.clone())
    }
    fn v1_virtual_machine_spec_disk_bus(
        from: &v1alpha1::VirtualMachineSpec,
    ) -> Result<v1::DiskBus, String> {
        match from.disk_bus.as_str() {
            "virtio" => Ok(v1::DiskBus::Virtio),
            "scsi" => Ok(v1::DiskBus::Scsi),
            "sata" => Ok(v1::DiskBus::Sata),
            other => Err(format!(
                "spec.diskBus {other:?} is not virtio, scsi or sata"
            )),
        }
    }
}

fn conversion() -> HubConversion<v1alpha1::VirtualMachine> {
    HubConversion::new().spoke(
        v1::VirtualMachine::into_hub::<Hands>,
        v1::VirtualMachine::from_hub::<Hands>,
    )
}

fn metadata() -> Value {
    json!({
        "name": "vm-1", "namespace": "default", "uid": "0d7a2bb0-3c8e-4d4e-9a59-5d8c3a2b8f10",
        "resourceVersion": "4711", "generation": 2, "creationTimestamp": "2026-11-26T10:00:00Z",
        "labels": {"app": "vm"},
    })
}

fn v1alpha1_object(bus: &str) -> Value {
    json!({
        "apiVersion": "cloudnative.example.com/v1alpha1", "kind": "VirtualMachine",
        "metadata": metadata(),
        "spec": {"cpu": 2, "memory": "4Gi", "image": "debian:13", "sshKeys": ["ssh-ed25519 A"],
                 "diskBus": bus, "diskGi": 10},
        "status": {"phase": "Running", "observedGeneration": 2},
    })
}

fn v1_object(bus: &str) -> Value {
    json!({
        "apiVersion": "cloudnative.example.com/v1", "kind": "VirtualMachine",
        "metadata": metadata(),
        "spec": {"cpu": 2, "memory": "4Gi", "image": "debian:13", "authorizedKeys": ["ssh-ed25519 A"],
                 "diskBus": bus, "diskGi": 10},
        "status": {"phase": "Running", "observedGeneration": 2},
    })
}

#[test]
fn a_spoke_object_goes_through_the_hub_to_the_storage_version_and_back() {
    let conversion = conversion();
    let stored = conversion
        .convert(v1_object("scsi"), "cloudnative.example.com/v1alpha1")
        .expect("converts");
    assert_eq!(stored, v1alpha1_object("scsi"));
    let served = conversion
        .convert(stored, "cloudnative.example.com/v1")
        .expect("converts");
    assert_eq!(served, v1_object("scsi"));
}

#[test]
fn a_hand_conversion_error_is_the_answer() {
    let error = conversion()
        .convert(v1alpha1_object("ide"), "cloudnative.example.com/v1")
        .expect_err("ide is no DiskBus");
    assert_eq!(error, "spec.diskBus \"ide\" is not virtio, scsi or sata");
}

#[test]
fn an_unregistered_version_and_an_undecodable_object_are_named() {
    let error = conversion()
        .convert(v1alpha1_object("virtio"), "cloudnative.example.com/v2")
        .expect_err("no v2");
    assert_eq!(
        error,
        "VirtualMachine has no conversion registered for version \"cloudnative.example.com/v2\" \
         (hub cloudnative.example.com/v1alpha1)"
    );
    let mut broken = v1_object("virtio");
    broken["spec"]["cpu"] = json!("two");
    let error = conversion()
        .convert(broken, "cloudnative.example.com/v1alpha1")
        .expect_err("cpu is no integer");
    assert!(
        error.starts_with("the object is not a valid cloudnative.example.com/v1 VirtualMachine: "),
        "{error}"
    );
}
