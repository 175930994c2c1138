//! What the glue tests share: in-memory pipes between a client and a server

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_async_std::Server;

/// The client's ends of two in-memory pipes whose other ends a spawned task serves `server`
/// on
pub fn serve(server: Server) -> (piper::Reader, piper::Writer) {
    let (to_client_r, to_client_w) = piper::pipe(64 * 1024);
    let (to_server_r, to_server_w) = piper::pipe(64 * 1024);
    smol::spawn(async move { server.serve(to_server_r, to_client_w).await }).detach();
    (to_client_r, to_server_w)
}

/// Waits (a couple of seconds at most) for `flag` to be set
pub async fn wait_for(flag: &AtomicBool) -> bool {
    for _ in 0..400 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        async_io::Timer::after(Duration::from_millis(5)).await;
    }
    false
}

/// `future`'s output, or `None` when it takes longer than `limit`
pub async fn timeout<T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    use futures_lite::FutureExt;
    async { Some(future.await) }
        .or(async {
            async_io::Timer::after(limit).await;
            None
        })
        .await
}
