//! +groupName=scaling.example.com
mod worker_pool;
