//! +groupName=cluster-provisioner.example.com
//!
//! A group whose name has a hyphen; its module is `cluster_provisioner`.
mod machine_set;
