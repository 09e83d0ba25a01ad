//! +groupName=zoo.example.com
mod animals;
