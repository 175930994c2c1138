//! The boundary itself: status codes, the thread's last error message, the panic guard and the
//! checked reads of the caller's pointers
//!
//! Every `unsafe` block of the crate that reads a caller's pointer lives here or says why it
//! is sound where it stands.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use mcp_sansio::SendError;
use serde_json::value::RawValue;

/// The outcome of a call
///
/// Non-negative values are successes, negative values failures; after a failure
/// `mcp_last_error()` says why in words.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum mcp_status {
    /// Done
    MCP_OK = 0,
    /// Nothing to poll: no bytes, no event, no deadline
    MCP_NONE = 1,
    /// A required pointer is NULL (or a NULL pointer was given with a non-zero length)
    MCP_ERR_NULL = -1,
    /// A string is not valid UTF-8
    MCP_ERR_UTF8 = -2,
    /// Malformed JSON, or JSON of the wrong shape (an unknown config key, a result that is
    /// not an object, a tool without a name)
    MCP_ERR_JSON = -3,
    /// Not allowed now: an unknown request or input handle, a closed session, a method the
    /// era does not allow, a session not ready yet
    MCP_ERR_STATE = -4,
    /// A limit is reached: drain `poll_transmit` and `poll_event` first, then try again
    MCP_ERR_BLOCKED = -5,
    /// A bug of this library was caught at the boundary; the handle is poisoned and every
    /// later call on it returns this (free it with its `_free` function)
    MCP_ERR_PANIC = -6,
}

/// A failed call: its status and the message `mcp_last_error` gives
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: mcp_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: mcp_status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null(what: &str) -> Self {
        Self::new(mcp_status::MCP_ERR_NULL, format!("{what} is NULL"))
    }

    pub(crate) fn json(message: impl Into<String>) -> Self {
        Self::new(mcp_status::MCP_ERR_JSON, message)
    }

    pub(crate) fn state(message: impl Into<String>) -> Self {
        Self::new(mcp_status::MCP_ERR_STATE, message)
    }
}

/// A JSON text as a raw value, or `MCP_ERR_JSON`
pub(crate) fn raw_json(json: &str, what: &str) -> Result<Box<RawValue>, Failure> {
    serde_json::from_str(json).map_err(|e| Failure::json(format!("{what}: {e}")))
}

pub(crate) fn unknown_request(handle: u64) -> Failure {
    Failure::state(format!(
        "request {handle} is not open: unknown, already answered, cancelled by the peer, or \
         the session closed"
    ))
}

/// A command's refusal as a status: a full queue is `MCP_ERR_BLOCKED`
pub(crate) fn send_failure(e: SendError) -> Failure {
    match e {
        SendError::Blocked | SendError::TooManyRequests => {
            Failure::new(mcp_status::MCP_ERR_BLOCKED, e.to_string())
        }
        SendError::ParamsNotAnObject => Failure::json(e.to_string()),
        other => Failure::state(other.to_string()),
    }
}

/// What a function body returns: a status (success) or a failure
pub(crate) type Outcome = Result<mcp_status, Failure>;

thread_local! {
    /// The message of this thread's last failed call (NUL-terminated for `mcp_last_error`)
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error
pub(crate) fn set_last_error(message: &str) {
    // A message with an interior NUL is cut there rather than lost.
    let cut = message.split('\0').next().unwrap_or_default();
    let text = CString::new(cut).unwrap_or_default();
    LAST_ERROR.with(|cell| *cell.borrow_mut() = text);
}

/// This thread's last error message; the pointer lives until the thread's next failed call
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|cell| cell.borrow().as_ptr())
}

/// The message of a panic's payload
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    format!("internal error (a bug of mcp-capi, please report it): {what}")
}

/// Runs a function body that has no handle: a failure sets the last error, a panic becomes
/// `MCP_ERR_PANIC`
pub(crate) fn guard(body: impl FnOnce() -> Outcome) -> mcp_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            mcp_status::MCP_ERR_PANIC
        }
    }
}

/// Runs a function body that returns a value (a constructor): `None` on failure or panic,
/// with the last error set
pub(crate) fn guard_value<T>(body: impl FnOnce() -> Result<T, Failure>) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => Some(value),
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            None
        }
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            None
        }
    }
}

/// A handle's state behind the caller's pointer: the session glue, or poisoned by a panic
pub(crate) struct Guarded<T> {
    poisoned: bool,
    inner: T,
}

impl<T> Guarded<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self {
            poisoned: false,
            inner,
        }
    }

    /// Runs `body` on the inner state: a panic poisons the handle
    pub(crate) fn run(&mut self, body: impl FnOnce(&mut T) -> Outcome) -> mcp_status {
        if self.poisoned {
            set_last_error("the handle is poisoned: an earlier call panicked; free it");
            return mcp_status::MCP_ERR_PANIC;
        }
        let inner = &mut self.inner;
        match catch_unwind(AssertUnwindSafe(|| body(inner))) {
            Ok(Ok(status)) => status,
            Ok(Err(failure)) => {
                set_last_error(&failure.message);
                failure.status
            }
            Err(payload) => {
                self.poisoned = true;
                set_last_error(&panic_message(payload.as_ref()));
                mcp_status::MCP_ERR_PANIC
            }
        }
    }

    /// Reads the inner state (a getter): `None` when poisoned or when `body` panics (which
    /// poisons nothing: a getter changes no state)
    pub(crate) fn read<R>(&self, body: impl FnOnce(&T) -> R) -> Option<R> {
        if self.poisoned {
            set_last_error("the handle is poisoned: an earlier call panicked; free it");
            return None;
        }
        let inner = &self.inner;
        match catch_unwind(AssertUnwindSafe(|| body(inner))) {
            Ok(value) => Some(value),
            Err(payload) => {
                set_last_error(&panic_message(payload.as_ref()));
                None
            }
        }
    }
}

/// The caller's handle pointer as a mutable reference, or `MCP_ERR_NULL`
///
/// # Safety
/// `ptr` is NULL or a live handle from its `_new` function, not freed, not in use by another
/// call at the same time (the header's contract).
pub(crate) unsafe fn handle_mut<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller's contract above; NULL is checked by `as_mut`.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::null(what))
}

/// The caller's handle pointer as a shared reference, or `None` for NULL
///
/// # Safety
/// As [`handle_mut`].
pub(crate) unsafe fn handle_ref<'a, T>(ptr: *const T) -> Option<&'a T> {
    // SAFETY: the caller's contract above; NULL is checked by `as_ref`.
    unsafe { ptr.as_ref() }
}

/// `len` bytes at `data`; NULL is allowed with `len == 0` (an empty slice)
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes that stay unchanged during the call.
pub(crate) unsafe fn bytes<'a>(
    data: *const u8,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Failure> {
    if data.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(Failure::new(
                mcp_status::MCP_ERR_NULL,
                format!("{what} is NULL with a length of {len}"),
            ))
        };
    }
    if len > isize::MAX as usize {
        return Err(Failure::new(
            mcp_status::MCP_ERR_NULL,
            format!("{what}: the length {len} is larger than any object"),
        ));
    }
    // SAFETY: non-NULL, `len` fits an object, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// `len` bytes of UTF-8 at `data` as a string; NULL with `len == 0` is ""
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn text<'a>(
    data: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a str, Failure> {
    // SAFETY: forwarded to the caller of this function.
    let raw = unsafe { bytes(data.cast(), len, what) }?;
    std::str::from_utf8(raw).map_err(|e| {
        Failure::new(
            mcp_status::MCP_ERR_UTF8,
            format!("{what} is not valid UTF-8: {e}"),
        )
    })
}

/// Like [`text`], but a NULL pointer (with any length) means "absent"
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn optional_text<'a>(
    data: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, Failure> {
    if data.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded to the caller of this function.
    unsafe { text(data, len, what) }.map(Some)
}

/// Writes `value` through an output pointer, or `MCP_ERR_NULL`
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL and, by the caller's contract, valid for a write of `T`.
    unsafe { out.write(value) };
    Ok(())
}

/// Checks that an output pointer is not NULL before any work is done
pub(crate) fn require_out<T>(out: *mut T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        Err(Failure::null(what))
    } else {
        Ok(())
    }
}

/// A static NUL-terminated string's pointer
pub(crate) fn static_cstr(s: &'static CStr) -> *const c_char {
    s.as_ptr()
}
