//! +groupName=Shop
mod types;
