//! Tests that need the worker's failure injection hook.
