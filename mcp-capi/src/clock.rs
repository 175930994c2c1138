//! The caller's milliseconds and the core's `Instant`s
//!
//! The core takes time as `Instant`s; C callers have a monotonic millisecond counter of their
//! own (`clock_gettime(CLOCK_MONOTONIC)`, `GetTickCount64`, a game loop's frame time, a fake
//! clock in a test). A handle reads `Instant::now()` once, when it is created, and pairs it
//! with that call's `now_ms`; every later `now_ms` maps to `anchor + (now_ms - created_ms)`.
//! The wall clock is never read again, so the handle's time is the caller's alone.

use std::time::{Duration, Instant};

/// The longest offset from the anchor a handle represents: 100 years of milliseconds (an
/// `Instant` far past that may overflow the platform's representation)
const MAX_OFFSET_MS: u64 = 100 * 365 * 24 * 60 * 60 * 1000;

/// One handle's mapping between the caller's milliseconds and `Instant`s
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    anchor: Instant,
    created_ms: u64,
    /// The latest `now_ms` seen; an earlier one counts as this one (time never goes back)
    last_ms: u64,
}

impl Clock {
    /// Anchors the caller's `now_ms` to this instant
    pub(crate) fn new(now_ms: u64) -> Self {
        Self::anchored(Instant::now(), now_ms)
    }

    /// Anchors `now_ms` to `anchor` (tests pick the anchor)
    pub(crate) fn anchored(anchor: Instant, now_ms: u64) -> Self {
        Self {
            anchor,
            created_ms: now_ms,
            last_ms: now_ms,
        }
    }

    /// The instant of the caller's `now_ms` (monotonic: never before an earlier call's)
    pub(crate) fn at(&mut self, now_ms: u64) -> Instant {
        self.last_ms = self.last_ms.max(now_ms);
        let offset = (self.last_ms - self.created_ms).min(MAX_OFFSET_MS);
        self.anchor + Duration::from_millis(offset)
    }

    /// The caller's milliseconds of a core deadline, rounded up to a whole millisecond (a
    /// deadline never comes back earlier than it is); saturating at `u64::MAX`
    pub(crate) fn to_ms(self, instant: Instant) -> u64 {
        let since = instant.saturating_duration_since(self.anchor);
        let mut ms = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
        if !since.subsec_nanos().is_multiple_of(1_000_000) {
            ms = ms.saturating_add(1);
        }
        self.created_ms.saturating_add(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_map_both_ways_and_never_go_back() {
        let anchor = Instant::now();
        let mut clock = Clock::anchored(anchor, 5_000);
        assert_eq!(clock.at(5_000), anchor);
        assert_eq!(clock.at(6_500), anchor + Duration::from_millis(1_500));
        // Earlier than the last call: treated as the last call.
        assert_eq!(clock.at(6_000), anchor + Duration::from_millis(1_500));
        // Earlier than creation: treated as the last call too.
        assert_eq!(clock.at(0), anchor + Duration::from_millis(1_500));
        assert_eq!(clock.to_ms(anchor + Duration::from_millis(2_000)), 7_000);
        assert_eq!(
            clock.to_ms(anchor + Duration::from_micros(2_000_001)),
            7_001
        );
        // Before the anchor: the creation time.
        assert_eq!(clock.to_ms(anchor), 5_000);
        // Far in the future: capped, not overflowing.
        let far = clock.at(u64::MAX);
        assert_eq!(far, anchor + Duration::from_millis(MAX_OFFSET_MS));
        assert_eq!(clock.to_ms(far), 5_000 + MAX_OFFSET_MS);
    }
}
