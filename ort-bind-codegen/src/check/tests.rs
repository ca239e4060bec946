//! Unit tests of the struct checks, on the fixture models.
