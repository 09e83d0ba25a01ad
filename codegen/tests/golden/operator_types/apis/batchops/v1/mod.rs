//! Types an operator writes: enums, well-known Kubernetes types, free-form JSON, bytes, list
//! types and CEL rules.
//!
//! +groupName=batchops.example.com
