//! What both ends do with their byte stream, the caller's clock and the outputs, written
//! once: each exported `mcp_server_*` / `mcp_client_*` function of this kind (`handle_*`,
//! `poll_*`) calls one of these on its handle's glue

use std::ffi::c_char;

use mcp_sansio::Session;
use mcp_sansio::session::Role;

use crate::boundary::{Outcome, mcp_status, require_out, write_out};
use crate::clock::Clock;
use crate::outputs::{Outputs, Retire};

/// The parts of one handle's glue the byte stream needs, borrowed together
pub(crate) struct Parts<'a, R: Role> {
    pub(crate) session: &'a mut Session<R>,
    pub(crate) clock: &'a mut Clock,
    pub(crate) outputs: &'a mut Outputs,
}

/// One end's glue (`Server`, `Client`): its parts, and how it turns the core's events into
/// the queue of JSON events and retires what an event handed out ends
pub(crate) trait End {
    /// The core session's role
    type Role: Role;
    /// The session, clock and outputs
    fn parts(&mut self) -> Parts<'_, Self::Role>;
    /// Pulls the core's events into the queue of JSON events
    fn pump(&mut self);
    /// Ends what handing out an event ends
    fn retire(&mut self, retire: Retire);
}

/// Feeds `data` read from the peer at `now_ms`
pub(crate) fn handle_bytes<E: End>(end: &mut E, now_ms: u64, data: &[u8]) -> Outcome {
    let p = end.parts();
    let now = p.clock.at(now_ms);
    p.session.handle_bytes(now, data);
    end.pump();
    Ok(mcp_status::MCP_OK)
}

/// The peer closed its side at `now_ms`
pub(crate) fn handle_eof<E: End>(end: &mut E, now_ms: u64) -> Outcome {
    let p = end.parts();
    let now = p.clock.at(now_ms);
    p.session.handle_eof(now);
    end.pump();
    Ok(mcp_status::MCP_OK)
}

/// Fires the timers due at `now_ms`
pub(crate) fn handle_timeout<E: End>(end: &mut E, now_ms: u64) -> Outcome {
    let p = end.parts();
    let now = p.clock.at(now_ms);
    p.session.handle_timeout(now);
    end.pump();
    Ok(mcp_status::MCP_OK)
}

/// The next deadline in the caller's milliseconds into `*deadline_ms`, or `MCP_NONE`
///
/// # Safety
/// `deadline_ms` is NULL or valid for writing one `u64`.
pub(crate) unsafe fn poll_timeout<E: End>(end: &mut E, deadline_ms: *mut u64) -> Outcome {
    require_out(deadline_ms, "deadline_ms")?;
    let p = end.parts();
    match p.session.poll_timeout() {
        Some(at) => {
            // SAFETY: the caller's contract above (not NULL: checked).
            unsafe { write_out(deadline_ms, p.clock.to_ms(at), "deadline_ms") }?;
            Ok(mcp_status::MCP_OK)
        }
        None => Ok(mcp_status::MCP_NONE),
    }
}

/// Everything queued to write, lent until the next `poll_transmit`, or `MCP_NONE`
///
/// # Safety
/// `data` is NULL or valid for writing one `*const u8`; `len` one `usize`.
pub(crate) unsafe fn poll_transmit<E: End>(
    end: &mut E,
    data: *mut *const u8,
    len: *mut usize,
) -> Outcome {
    require_out(data, "data")?;
    require_out(len, "len")?;
    let p = end.parts();
    p.outputs.reset_transmit();
    while p.session.poll_transmit(&mut p.outputs.transmit).is_some() {}
    // Draining may unblock the session (an `unblocked` event).
    end.pump();
    let bytes = &end.parts().outputs.transmit;
    let (ptr, n) = if bytes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (bytes.as_ptr(), bytes.len())
    };
    // SAFETY: the caller's contract above (not NULL: checked).
    unsafe {
        write_out(data, ptr, "data")?;
        write_out(len, n, "len")?;
    }
    Ok(if ptr.is_null() {
        mcp_status::MCP_NONE
    } else {
        mcp_status::MCP_OK
    })
}

/// The next event's JSON (NUL-terminated), lent until the next `poll_event`, or `MCP_NONE`
///
/// # Safety
/// `json` is NULL or valid for writing one `*const c_char`; `len` one `usize`.
pub(crate) unsafe fn poll_event<E: End>(
    end: &mut E,
    json: *mut *const c_char,
    len: *mut usize,
) -> Outcome {
    require_out(json, "json")?;
    require_out(len, "len")?;
    if end.parts().outputs.queued() == 0 {
        end.pump();
    }
    let (ptr, n, retire) = match end.parts().outputs.next_event() {
        Some((event, retire)) => (event.as_ptr().cast::<c_char>(), event.len(), retire),
        None => (std::ptr::null(), 0, Retire::Nothing),
    };
    end.retire(retire);
    // SAFETY: the caller's contract above (not NULL: checked).
    unsafe {
        write_out(json, ptr, "json")?;
        write_out(len, n, "len")?;
    }
    Ok(if ptr.is_null() {
        mcp_status::MCP_NONE
    } else {
        mcp_status::MCP_OK
    })
}
