//! +groupName=shop.example.com
//!
//! The shop's API.

mod order;
mod region;
