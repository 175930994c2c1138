//! `mcp_version` and `mcp_last_error`: the functions without a handle

use std::ffi::c_char;

use crate::boundary::{last_error_ptr, static_cstr};

/// The library's version, e.g. `"0.1.0"`: a static NUL-terminated string (never freed,
/// valid for the life of the process).
#[unsafe(no_mangle)]
pub extern "C" fn mcp_version() -> *const c_char {
    const VERSION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(v) => v,
        Err(_) => c"unknown",
    };
    static_cstr(VERSION)
}

/// The message of this thread's last failed call (a status below 0, or a NULL from a `_new`
/// function), NUL-terminated UTF-8; `""` when no call failed yet on this thread.
///
/// Owned by the library: do not free it. It stays valid until this thread's next call of an
/// `mcp_*` function other than `mcp_last_error` and `mcp_version`; copy it to keep it.
/// Successful calls do not clear it.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_last_error() -> *const c_char {
    // Reading a thread-local cannot fail short of the thread being torn down.
    std::panic::catch_unwind(last_error_ptr).unwrap_or(c"".as_ptr())
}
