//! The knobs of the HTTP rules

use std::time::Duration;

use super::origin::HostPolicy;

/// Limits and policies of an [`HttpServer`](super::HttpServer)
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// DNS-rebinding protection
    pub hosts: HostPolicy,
    /// The largest POST body accepted; larger bodies get 413 (a binding should stop reading
    /// at this size and call [`HttpServer::reject_oversize`](super::HttpServer::reject_oversize))
    pub max_body_size: usize,
    /// 2025 wire: the most sessions at once; an `initialize` beyond it gets 503
    pub max_sessions: usize,
    /// 2025 wire: a session with no open stream and no request for this long is closed
    pub idle_timeout: Duration,
    /// 2025 wire: events kept per stream for replay after `Last-Event-ID`; the oldest are
    /// dropped beyond it
    pub replay_events: usize,
    /// 2025 wire: finished POST streams kept per session for a late resumption
    pub finished_streams: usize,
    /// 2025 wire: the `retry:` delay sent with every priming event, in milliseconds
    pub retry_ms: u64,
    /// An open response that has sent nothing for this long gets an SSE comment
    /// (`: keepalive`), which clients ignore; a response still undecided between JSON and
    /// SSE opens its event stream for it, if the client accepts one. Proxies then keep the
    /// connection, and a binding that learns of a closed connection only when it writes
    /// learns it within this time (and cancels the request). `None`: never
    pub keepalive: Option<Duration>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            hosts: HostPolicy::default(),
            max_body_size: 4 * 1024 * 1024,
            max_sessions: 1024,
            idle_timeout: Duration::from_secs(30 * 60),
            replay_events: 256,
            finished_streams: 16,
            retry_ms: 1000,
            keepalive: Some(Duration::from_secs(15)),
        }
    }
}
