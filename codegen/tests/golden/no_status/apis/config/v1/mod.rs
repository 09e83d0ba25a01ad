//! +groupName=config.example.com
mod setting;
