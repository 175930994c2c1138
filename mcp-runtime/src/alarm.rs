//! One timer per connection, armed lazily
//!
//! The core's next deadline moves with nearly every message: each request sets its timeout,
//! each answer clears it. Re-arming a runtime's timer that often costs a timer-wheel update
//! and, when the new deadline is the runtime's earliest, a wake-up of its event loop (an
//! `eventfd` write and another `epoll_wait`) per message. An [`Alarm`] moves the timer only
//! when the core's deadline comes *earlier* than the armed one; a later deadline (or none)
//! leaves the timer where it is: it fires early, the binding sees that nothing is due yet,
//! and arms it again at the deadline of the moment. A [`Timer`] is that on a
//! [`Runtime`]'s timer: what each async actor sleeps on.

use std::time::Instant;

use crate::runtime::Runtime;

/// When a binding's one timer must be (re)armed; see the module's docs
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Alarm {
    armed: Option<Instant>,
}

impl Alarm {
    /// The instant to arm the timer at, given the core's deadline, if the timer must move:
    /// only when the deadline is earlier than the armed instant, or nothing is armed
    pub(crate) fn rearm(&mut self, deadline: Option<Instant>) -> Option<Instant> {
        let deadline = deadline?;
        if self.armed.is_some_and(|armed| armed <= deadline) {
            return None;
        }
        self.armed = Some(deadline);
        Some(deadline)
    }

    /// The timer is armed (it may fire)
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.is_some()
    }

    /// The timer fired: nothing is armed. `true` when the core's `deadline` is due at `now`
    /// (else the timer fired early, for a deadline that moved later or went away)
    pub(crate) fn fired(&mut self, deadline: Option<Instant>, now: Instant) -> bool {
        self.armed = None;
        deadline.is_some_and(|deadline| deadline <= now)
    }
}

/// An actor's one timer on a runtime, moved only when the core's deadline comes sooner
pub(crate) struct Timer<R: Runtime> {
    timer: R::Timer,
    alarm: Alarm,
}

impl<R: Runtime> std::fmt::Debug for Timer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timer")
            .field("alarm", &self.alarm)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> Default for Timer<R> {
    fn default() -> Self {
        Self {
            timer: R::timer(),
            alarm: Alarm::default(),
        }
    }
}

impl<R: Runtime> Timer<R> {
    /// Arms the timer for the core's `deadline` if it must move; `true` when it is armed
    pub(crate) fn arm(&mut self, deadline: Option<Instant>) -> bool {
        if let Some(at) = self.alarm.rearm(deadline) {
            R::reset(&mut self.timer, at);
        }
        self.alarm.is_armed()
    }

    /// Waits for the armed timer (cancel-safe: dropping the wait keeps the timer); `true`
    /// when the core's `deadline` is due then
    #[cfg(feature = "http")]
    pub(crate) async fn wait(&mut self, deadline: Option<Instant>) -> bool {
        std::future::poll_fn(|cx| self.poll_wait(cx, deadline)).await
    }

    /// [`wait`](Self::wait) as a poll, for an actor that polls its sources itself
    pub(crate) fn poll_wait(
        &mut self,
        cx: &mut std::task::Context<'_>,
        deadline: Option<Instant>,
    ) -> std::task::Poll<bool> {
        std::pin::Pin::new(&mut self.timer)
            .poll(cx)
            .map(|_| self.alarm.fired(deadline, R::now()))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn moves_only_for_an_earlier_deadline_and_fires_early_harmlessly() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut alarm = Alarm::default();
        assert_eq!(alarm.rearm(None), None);
        assert!(!alarm.is_armed());
        assert_eq!(alarm.rearm(Some(t0 + 60 * s)), Some(t0 + 60 * s));
        // Later deadlines, and none, leave the timer armed where it is.
        assert_eq!(alarm.rearm(Some(t0 + 61 * s)), None);
        assert_eq!(alarm.rearm(None), None);
        assert!(alarm.is_armed());
        // An earlier one moves it.
        assert_eq!(alarm.rearm(Some(t0 + 5 * s)), Some(t0 + 5 * s));
        // It fires at 5 s while the deadline has moved to 61 s: nothing is due, and the next
        // round arms it at 61 s.
        assert!(!alarm.fired(Some(t0 + 61 * s), t0 + 5 * s));
        assert!(!alarm.is_armed());
        assert_eq!(alarm.rearm(Some(t0 + 61 * s)), Some(t0 + 61 * s));
        assert!(alarm.fired(Some(t0 + 61 * s), t0 + 61 * s));
        assert!(!alarm.fired(None, t0 + 62 * s));
    }
}
