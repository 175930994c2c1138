//! The application's headers (`ClientOptions::header`, an API key a server issued) go on
//! every request a client makes, a handle's own (`Client::with_headers`) on its requests
//! only; one the transport owns is refused before anything is sent

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use mcp_sansio::{ClientConfig, EraMode, Implementation};

use mcp_sansio::{SendError, ServerConfig};

use crate::binding::{Client, ClientError, ClientOptions, ConnectError, Server};
use crate::rt;

/// A listener that records the head of each request it gets, answers 503 and closes: the
/// heads arrive on the channel
fn recorder() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(4) {
            let Ok(mut conn) = conn else { return };
            let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
            let _ = conn.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (url, rx)
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("headers-test", "1.0"));
    config.era = era;
    config
}

#[test]
fn the_applications_headers_go_on_every_request_in_both_eras() {
    for era in [EraMode::Modern, super::support::LEGACY] {
        let (url, heads) = recorder();
        let options = ClientOptions::default()
            .header("X-API-Key", "key-123")
            .header("Authorization", "Bearer static-token");
        let connected = rt::block_on(async {
            aw!(rt::timeout(
                Duration::from_secs(10),
                Client::connect_http(&url, config(era), options),
            ))
        })
        .expect("gives up in time");
        assert!(connected.is_err(), "the recorder answers 503");
        let head = heads
            .recv_timeout(Duration::from_secs(5))
            .expect("a request came");
        let lower = head.to_ascii_lowercase();
        assert!(lower.contains("\r\nx-api-key: key-123\r\n"), "{head}");
        assert!(
            lower.contains("\r\nauthorization: bearer static-token\r\n"),
            "{head}"
        );
        assert!(lower.starts_with("post /mcp "), "{head}");
    }
}

#[test]
fn a_header_the_transport_owns_is_refused_before_connecting() {
    let (url, heads) = recorder();
    let options = ClientOptions::default().header("Mcp-Session-Id", "forged");
    let connected = rt::block_on(async {
        aw!(rt::timeout(
            Duration::from_secs(10),
            Client::connect_http(&url, config(EraMode::Modern), options),
        ))
    })
    .expect("gives up in time");
    match connected {
        Err(ConnectError::Options(why)) => assert_eq!(
            why,
            "the header `Mcp-Session-Id` is set by the MCP transport and cannot be replaced"
        ),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(
        heads.recv_timeout(Duration::from_millis(300)).is_err(),
        "nothing was sent"
    );
}

/// A relay in front of `target`: each request (head and body) is recorded on the channel,
/// then forwarded with `Connection: close`, and the response copied back
fn relay(target: std::net::SocketAddr) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let mut buf = [0u8; 8192];
                let end = loop {
                    if let Some(i) = all.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => all.extend_from_slice(&buf[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&all[..end]).into_owned();
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (n, v) = l.split_once(':')?;
                        n.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                while all.len() < end + length {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => all.extend_from_slice(&buf[..n]),
                    }
                }
                let body = String::from_utf8_lossy(&all[end..end + length]).into_owned();
                let _ = tx.send(format!("{head}{body}"));
                let mut lines: Vec<&str> = head
                    .trim_end()
                    .split("\r\n")
                    .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                    .collect();
                lines.push("Connection: close");
                let Ok(mut up) = std::net::TcpStream::connect(target) else {
                    return;
                };
                let forwarded = format!("{}\r\n\r\n", lines.join("\r\n"));
                if up.write_all(forwarded.as_bytes()).is_err()
                    || up.write_all(&all[end..end + length]).is_err()
                {
                    return;
                }
                let _ = std::io::copy(&mut up, &mut conn);
            });
        }
    });
    (url, rx)
}

/// The recorded request whose body holds `needle`
fn request_with(heads: &mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        let request = heads
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no request with {needle}"));
        if request.contains(needle) {
            return request.to_ascii_lowercase();
        }
    }
}

#[test]
fn a_handles_own_headers_go_on_its_requests_only() {
    rt::block_on(async {
        let server = super::echo_tool(Server::builder(ServerConfig::new(Implementation::new(
            "headers-server",
            "1.0",
        ))))
        .build();
        let localhost: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server.serve_http(localhost)).unwrap();
        let (url, heads) = relay(handle.local_addr());
        for era in [EraMode::Modern, super::support::LEGACY] {
            let options = ClientOptions::default().header("X-API-Key", "key-1");
            let client = aw!(Client::connect_http(&url, config(era), options)).unwrap();
            let traced = client.with_headers([("X-Trace", "trace-7")]).unwrap();
            let echoed = aw!(traced.call_tool("echo", super::support::text("traced"))).unwrap();
            assert_eq!(echoed.content[0].as_text(), Some("traced"));
            let call = request_with(&heads, "\"traced\"");
            assert!(call.contains("\r\nx-trace: trace-7\r\n"), "{call}");
            assert!(call.contains("\r\nx-api-key: key-1\r\n"), "{call}");
            aw!(client.list_tools()).unwrap();
            let list = request_with(&heads, "tools/list");
            assert!(!list.contains("x-trace"), "{list}");
            assert!(list.contains("\r\nx-api-key: key-1\r\n"), "{list}");
            assert!(
                client.with_headers([("Mcp-Session-Id", "x")]).is_err(),
                "a header the transport owns"
            );
            aw!(client.close());
        }
    });
}

#[test]
fn a_handles_own_headers_over_a_byte_stream_fail_its_requests() {
    rt::block_on(async {
        let server = super::echo_tool(Server::builder(ServerConfig::new(Implementation::new(
            "headers-server",
            "1.0",
        ))))
        .build();
        let (r, w) = super::serve(server);
        let client = aw!(Client::connect(r, w, config(EraMode::Modern))).unwrap();
        let traced = client.with_headers([("X-Trace", "t")]).unwrap();
        match aw!(traced.call_tool("echo", super::support::text("x"))) {
            Err(ClientError::Send(SendError::NotAllowed { reason, .. })) => {
                assert_eq!(reason, "request headers need an HTTP connection");
            }
            other => panic!("{other:?}"),
        }
        // The plain handle is unaffected.
        assert!(aw!(client.call_tool("echo", super::support::text("x"))).is_ok());
    });
}
