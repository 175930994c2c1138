//! Fitting a superset value to one protocol version before it is sent

use super::common::{CacheScope, ResultType};
use crate::{Era, ProtocolVersion};

/// Makes a value valid for one protocol version before it is sent
///
/// Call it on every message you emit, right before serializing it for a peer that speaks
/// `version`. It removes or rewrites what `version` does not define where leaving it would
/// make the message invalid, and fills what `version` requires when a sensible value exists.
/// Fields that `version` simply does not know are left alone: no MCP schema forbids extra
/// fields. The rules per type are listed in the [`schema`](super) module docs.
pub trait FitVersion {
    /// Rewrites `self` in place so that it is valid for `version`
    fn fit_to(&mut self, version: ProtocolVersion);
}

impl<T: FitVersion> FitVersion for Vec<T> {
    fn fit_to(&mut self, version: ProtocolVersion) {
        for item in self {
            item.fit_to(version);
        }
    }
}

impl<T: FitVersion> FitVersion for Option<T> {
    fn fit_to(&mut self, version: ProtocolVersion) {
        if let Some(item) = self {
            item.fit_to(version);
        }
    }
}

impl<T: FitVersion> FitVersion for Box<T> {
    fn fit_to(&mut self, version: ProtocolVersion) {
        (**self).fit_to(version);
    }
}

/// The common `Result` rule: modern results carry `resultType` (default `"complete"`), legacy
/// results carry neither `resultType` nor the caching hints.
pub(crate) fn fit_result(result_type: &mut Option<ResultType>, version: ProtocolVersion) {
    match version.era() {
        Era::Modern => {
            result_type.get_or_insert(ResultType::Complete);
        }
        Era::Legacy => *result_type = None,
    }
}

/// The `CacheableResult` rule on top of [`fit_result`]: legacy versions drop the hints;
/// modern ones keep what the caller set (the caller or the server's catalog owns them).
pub(crate) fn fit_cacheable(
    result_type: &mut Option<ResultType>,
    ttl_ms: &mut Option<u64>,
    cache_scope: &mut Option<CacheScope>,
    version: ProtocolVersion,
) {
    fit_result(result_type, version);
    if version.era() == Era::Legacy {
        *ttl_ms = None;
        *cache_scope = None;
    }
}

/// `FitVersion` for types that are the same in every version: fitting does nothing, so
/// callers can fit every message they send without knowing which ones differ
macro_rules! same_in_every_version {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::schema::FitVersion for $t {
            fn fit_to(&mut self, _version: $crate::ProtocolVersion) {}
        }
    )*};
}
pub(crate) use same_in_every_version;

same_in_every_version!(
    super::PaginatedParams,
    super::MetaParams,
    super::ClientCapabilities,
    super::ServerCapabilities,
);

impl FitVersion for super::EmptyResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        fit_result(&mut self.result_type, version);
    }
}
