//! +groupName=police.example.com
//!
//! The image police: which container images a namespace allows.

mod white_list;
