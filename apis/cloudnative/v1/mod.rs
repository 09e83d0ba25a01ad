//! +groupName=cloudnative.example.com
//!
//! Virtual machines managed as Kubernetes objects. `v1` renames `sshKeys` to `authorizedKeys` and
//! makes `diskBus` an enum; objects are still stored as `v1alpha1`, and the conversion webhook
//! (kubegen's generated conversions plus the examples' `vm::conversion`) translates.

mod virtual_machine;
