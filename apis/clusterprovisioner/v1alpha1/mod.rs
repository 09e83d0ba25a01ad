//! +groupName=clusterprovisioner.example.com
//!
//! Clusters provisioned by a cluster provisioner, and the kubeconfigs to reach them.

mod cluster;
mod kubeconfig;
