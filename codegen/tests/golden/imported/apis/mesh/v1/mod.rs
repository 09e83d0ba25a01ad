//! +groupName=mesh.example.com
//! +kubegen:imported
mod route;
