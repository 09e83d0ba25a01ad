//! +groupName=samplecrd.example.com
//!
//! The sample network CRD (after the classic sample-controller walk-through).

mod network;
