//! The cancellation token a handler's [`Context`](crate::Context) carries

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Set when the request a handler serves is cancelled (by the client, by `tasks/cancel`, by a
/// 2026 `input_required` answer that ends this run, or because the connection closed)
///
/// A thread cannot be aborted from outside, so a handler that works for long checks
/// [`is_cancelled`](Self::is_cancelled) or sleeps with [`sleep`](Self::sleep), which wakes up
/// at once on cancellation. Whatever a cancelled handler returns is dropped.
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<(Mutex<State>, Condvar)>,
}

impl std::fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// What runs once, on cancellation (the worker pool lends the seat of a cancelled handler);
/// shared, so the pool's seat is its own hook (no allocation of a hook per job)
pub(crate) trait OnCancel: Send + Sync {
    /// The token was cancelled
    fn cancelled(&self);
}

type Hook = Arc<dyn OnCancel>;

#[derive(Default)]
struct State {
    cancelled: bool,
    on_cancel: Option<Hook>,
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
        let (state, wake) = &*self.inner;
        let hook = {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            state.cancelled = true;
            state.on_cancel.take()
        };
        wake.notify_all();
        if let Some(hook) = hook {
            hook.cancelled();
        }
    }

    /// Whether it was cancelled
    pub fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `hook` on cancellation (at once, when already cancelled), replacing a hook set
    /// before; `false` when it ran at once
    pub(crate) fn on_cancel(&self, hook: Hook) -> bool {
        let mut state = self.lock();
        if state.cancelled {
            drop(state);
            hook.cancelled();
            return false;
        }
        state.on_cancel = Some(hook);
        true
    }

    /// Forgets the hook set by [`on_cancel`](Self::on_cancel), if it has not run
    pub(crate) fn clear_on_cancel(&self) {
        self.lock().on_cancel = None;
    }

    /// Sleeps for `duration`, or less if cancelled meanwhile
    ///
    /// # Errors
    /// [`Cancelled`] when the token is (or becomes) cancelled before the time is up.
    pub fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
        let deadline = Instant::now().checked_add(duration);
        let (state, wake) = &*self.inner;
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.cancelled {
                return Err(Cancelled);
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return Ok(());
            }
            state = wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}
