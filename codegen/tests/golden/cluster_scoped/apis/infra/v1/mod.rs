//! +groupName=infra.example.com
mod rack;
