//! HTTP/1.1 framing: the kernel's ([`mcp_sansio_runtime::h1`]), and a deadline on async-io's
//! timer

use std::time::Duration;

use futures_lite::FutureExt;
pub(crate) use mcp_sansio_runtime::h1::*;

/// `future`, or `None` when it takes longer than `limit`
pub(crate) async fn within<T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    async { Some(future.await) }
        .or(async {
            async_io::Timer::after(limit).await;
            None
        })
        .await
}
