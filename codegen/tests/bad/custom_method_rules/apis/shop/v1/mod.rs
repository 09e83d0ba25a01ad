//! +groupName=shop.example.com
mod types;
