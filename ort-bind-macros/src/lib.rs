//! Procedural macros for ort-bind.
