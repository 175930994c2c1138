//! JSON-RPC 2.0 envelope
