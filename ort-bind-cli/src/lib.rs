//! The library half of the `ort-bind` command line: tensor data files.
//!
//! The binary (`ort-bind`, in `main.rs`) is a thin front end over `ort-bind-codegen` and
//! `ort-bind-runtime`; what it reads and writes besides models is here, in [`data`], so
//! that test harnesses can read the same files.

pub mod data;
