//! +groupName=audit.example.com
mod record;
