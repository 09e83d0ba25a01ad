//! +groupName=cloudnative.example.com
//!
//! Virtual machines managed as Kubernetes objects.

mod virtual_machine;
