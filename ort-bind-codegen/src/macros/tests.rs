//! Unit tests of the macro front ends.
