//! The cancellation token a handler's [`Context`](crate::Context) carries

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Set when the request a handler serves is cancelled (by the client, by `tasks/cancel`, by a
/// 2026 `input_required` answer that ends this run, or because the connection closed)
///
/// A thread cannot be aborted from outside, so a handler that works for long checks
/// [`is_cancelled`](Self::is_cancelled) or sleeps with [`sleep`](Self::sleep), which wakes up
/// at once on cancellation. Whatever a cancelled handler returns is dropped.
#[derive(Clone, Debug, Default)]
pub struct CancellationToken {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

/// A handler's wait ended because its request was cancelled
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request was cancelled")]
pub struct Cancelled;

impl From<Cancelled> for mcp_sansio::ErrorObject {
    fn from(e: Cancelled) -> Self {
        // Never seen by the client: a cancelled request's answer is dropped.
        Self::internal_error(e)
    }
}

impl CancellationToken {
    /// A token that is not cancelled yet
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels; every waiter wakes up. Idempotent.
    pub fn cancel(&self) {
        let (flag, wake) = &*self.inner;
        *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
    }

    /// Whether it was cancelled
    pub fn is_cancelled(&self) -> bool {
        *self.inner.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps for `duration`, or less if cancelled meanwhile
    ///
    /// # Errors
    /// [`Cancelled`] when the token is (or becomes) cancelled before the time is up.
    pub fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
        let deadline = Instant::now().checked_add(duration);
        let (flag, wake) = &*self.inner;
        let mut cancelled = flag.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if *cancelled {
                return Err(Cancelled);
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return Ok(());
            }
            cancelled = wake
                .wait_timeout(cancelled, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}
