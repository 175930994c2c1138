//! The application's headers (`ClientOptions::header`, an API key a server issued) go on
//! every request a client makes; one the transport owns is refused before connecting

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use mcp_sansio::{ClientConfig, EraMode, Implementation};

use crate::binding::{Client, ClientOptions, ConnectError};
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
