//! Python times (floats, as `time.monotonic()` returns) <-> the core's `Instant`s
//!
//! Each session fixes one anchor when it is made: the float `now` it was given and an
//! `Instant` read at that moment. A later float maps to the anchor plus the difference, so
//! tests may pass any fake times (time never goes backwards: earlier floats map to the
//! anchor), and `time.monotonic()` readings map to the matching instants.

use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// The fixed anchor of one session
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    base: Instant,
    base_t: f64,
}

/// The furthest a float may lie past the anchor (a century); beyond, it is clamped
const MAX_SPAN: f64 = 100.0 * 365.0 * 86_400.0;

impl Clock {
    /// Anchors `now`; when `None`, this moment of `time.monotonic()`'s clock
    pub(crate) fn new(py: Python<'_>, now: Option<f64>) -> PyResult<Self> {
        let base = Instant::now();
        let base_t = match now.filter(|t| t.is_finite()) {
            Some(t) => t,
            None => py.import("time")?.call_method0("monotonic")?.extract()?,
        };
        Ok(Self { base, base_t })
    }

    /// The instant of a float time; `None` means now
    pub(crate) fn instant(&self, t: Option<f64>) -> Instant {
        match t {
            None => Instant::now().max(self.base),
            Some(t) if t.is_finite() && t > self.base_t => {
                self.base + Duration::from_secs_f64((t - self.base_t).min(MAX_SPAN))
            }
            Some(_) => self.base,
        }
    }

    /// The float time of an instant
    pub(crate) fn float(&self, i: Instant) -> f64 {
        self.base_t + i.saturating_duration_since(self.base).as_secs_f64()
    }
}
