//! What the glue tests share: in-memory pipes between a client and a server

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_lite::{AsyncReadExt, AsyncWriteExt};
use mcp_sansio_async_std::Server;

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

/// A raw HTTP/1.1 request on its own connection (`Connection: close`): status, headers
/// (names in lower case) and body (for an event stream, up to the first result)
pub async fn raw(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: impl Into<Vec<u8>>,
) -> (u16, HashMap<String, String>, Vec<u8>) {
    let body = body.into();
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = async_net::TcpStream::connect(authority).await.unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for (n, v) in headers {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    // Read until the head is complete and the body is whole (or has a result).
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        all.extend_from_slice(&buf[..n]);
        let mut fields = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut fields);
        if let httparse::Status::Complete(len) = response.parse(&all).unwrap() {
            let headers: HashMap<String, String> = response
                .headers
                .iter()
                .map(|h| {
                    let value = String::from_utf8(h.value.to_vec()).unwrap();
                    (h.name.to_ascii_lowercase(), value)
                })
                .collect();
            let rest = &all[len..];
            let chunked = headers
                .get("transfer-encoding")
                .is_some_and(|t| t == "chunked");
            let body = if chunked {
                dechunk(rest)
            } else {
                rest.to_vec()
            };
            let length = headers
                .get("content-length")
                .map(|l| l.parse::<usize>().unwrap());
            let done = n == 0
                || length.is_some_and(|l| body.len() >= l)
                || String::from_utf8_lossy(&body).contains("\"result\"");
            if done {
                return (response.code.unwrap(), headers, body);
            }
        }
        assert!(n > 0, "the connection closed before the response");
    }
}

/// The data of the complete chunks in `bytes`
fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    while let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&bytes[..end]).unwrap(), 16).unwrap();
        if size == 0 || bytes.len() < end + 2 + size + 2 {
            break;
        }
        data.extend_from_slice(&bytes[end + 2..end + 2 + size]);
        bytes = &bytes[end + 2 + size + 2..];
    }
    data
}
