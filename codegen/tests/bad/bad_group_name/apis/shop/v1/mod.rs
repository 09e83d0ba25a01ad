//! +groupName=shop.k8s.io
mod types;
