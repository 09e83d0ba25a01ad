//! The hand-written half of the VirtualMachine's conversion between `v1alpha1` (the storage
//! version) and `v1`: the four fields kubegen's generated conversions cannot match by name and
//! type (`sshKeys` became `authorizedKeys`; `diskBus` became the `DiskBus` enum). Everything else
//! is generated (`kubegen_api::cloudnative::v1`, `into_hub`/`from_hub`) and served by
//! kubegen-runtime's `HubConversion` at `/convert` (see [`hub_conversion`]).
//!
//! Leaving out one of these methods does not compile: rustc lists the missing ones by name
//! (`v1_virtual_machine_spec_disk_bus`, ...), which is how a new field that needs a person is
//! noticed.

use kubegen_api::cloudnative::{v1, v1alpha1};
use kubegen_runtime::webhook::HubConversion;

/// The VirtualMachine's hand conversions (the `C` of `into_hub::<C>` / `from_hub::<C>`).
#[derive(Clone, Copy, Debug, Default)]
pub struct VmConversion;

impl v1::Conversion for VmConversion {
    fn v1alpha1_virtual_machine_spec_ssh_keys(
        from: &v1::VirtualMachineSpec,
    ) -> Result<Vec<String>, String> {
        Ok(from.authorized_keys.clone())
    }

    fn v1alpha1_virtual_machine_spec_disk_bus(
        from: &v1::VirtualMachineSpec,
    ) -> Result<String, String> {
        let name = match from.disk_bus {
            v1::DiskBus::Virtio => "virtio",
            v1::DiskBus::Scsi => "scsi",
            v1::DiskBus::Sata => "sata",
        };
        Ok(name.to_owned())
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
                "spec.diskBus {other:?} has no v1 value (virtio, scsi or sata)"
            )),
        }
    }
}

/// The VirtualMachine's conversions for the webhook server:
/// `manager.webhook_server().add_conversion(hub_conversion())`.
pub fn hub_conversion() -> HubConversion<v1alpha1::VirtualMachine> {
    HubConversion::new().spoke(
        v1::VirtualMachine::into_hub::<VmConversion>,
        v1::VirtualMachine::from_hub::<VmConversion>,
    )
}

#[cfg(test)]
mod tests {
    use kubegen_runtime::webhook::Convert as _;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_v1_machine_is_stored_as_v1alpha1_and_read_back_unchanged() {
        let v1 = json!({
            "apiVersion": "cloudnative.example.com/v1", "kind": "VirtualMachine",
            "metadata": {"name": "vm", "namespace": "default"},
            "spec": {"cpu": 2, "memory": "4Gi", "image": "debian:13", "diskGi": 10,
                     "authorizedKeys": ["ssh-ed25519 A"], "diskBus": "scsi"},
        });
        let conversion = hub_conversion();
        let stored = conversion
            .convert(v1.clone(), "cloudnative.example.com/v1alpha1")
            .expect("converts");
        assert_eq!(stored["spec"]["sshKeys"], json!(["ssh-ed25519 A"]));
        assert_eq!(stored["spec"]["diskBus"], "scsi");
        assert_eq!(stored["spec"].get("authorizedKeys"), None);
        let back = conversion
            .convert(stored, "cloudnative.example.com/v1")
            .expect("converts");
        assert_eq!(back, v1);
    }
}
