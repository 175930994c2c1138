//! How our client reaches its server: through a real forward proxy (tinyproxy) to our HTTP
//! server (absolute form) and our HTTPS server (`CONNECT`), both eras, as tinyproxy's log
//! shows; a proxy that refuses `CONNECT` fails connect with its status, an unreachable one
//! naming it; the connect timeout (a TLS handshake never answered) and the request timeout
//! (a request never answered); a closed port's error is one sentence naming the URL and the
//! OS's cause, the same in every era mode

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::{ClientConfig, EraMode, Implementation, ServerConfig};

use super::echo_tool;
use super::support::tinyproxy::{Tinyproxy, free_port};
use super::support::{LEGACY, text};
use crate::binding::{
    Client, ClientOptions, ConnectError, HttpOptions, HttpServerHandle, Proxy, Server,
};
use crate::rt;

fn server() -> Server {
    let config = ServerConfig::new(Implementation::new("proxy-test-server", "1.0"));
    echo_tool(Server::builder(config)).build()
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("proxy-test-client", "1.0"));
    config.era = era;
    config
}

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

dialect_fn! {
    async fn connect(url: &str, era: EraMode, http: HttpOptions) -> Result<Client, ConnectError> {
        aw!(rt::timeout(
            Duration::from_secs(20),
            Client::connect_http(url, config(era), ClientOptions::default().http(http)),
        ))
        .expect("connects or fails in time")
    }
}

dialect_fn! {
    /// Connects through `http`, calls `echo` and closes
    async fn echo_through(url: &str, era: EraMode, http: HttpOptions) {
        let client = aw!(connect(url, era, http)).unwrap();
        let result = aw!(client.call_tool("echo", text("via the proxy"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("via the proxy"), "{era:?} {url}");
        aw!(client.close());
    }
}

fn failure(outcome: Result<Client, ConnectError>) -> String {
    match outcome {
        Ok(_) => panic!("connected"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn plain_http_goes_through_a_proxy_in_both_eras() {
    rt::block_on(async {
        let handle: HttpServerHandle = aw!(server().serve_http(localhost())).unwrap();
        let addr = handle.local_addr();
        let url = format!("http://{addr}/mcp");
        let proxy = Tinyproxy::start(&[]);
        for era in [EraMode::Modern, LEGACY] {
            let http = HttpOptions::default().proxy(Proxy::Url(proxy.url()));
            aw!(echo_through(&url, era, http));
        }
        aw!(handle.shutdown());
        let seen = proxy.requests();
        let expected = format!("POST {url} HTTP/1.1");
        assert!(seen.contains(&expected), "{expected} not in {seen:?}");
    });
}

#[cfg(feature = "tls")]
mod https {
    use super::*;
    use crate::binding::TlsIdentity;
    use crate::suite::support::certs::TestCa;

    fn trusting(ca: &TestCa) -> HttpOptions {
        HttpOptions::default().root_certificates_pem(ca.pem.clone())
    }

    dialect_fn! {
        async fn start_https(ca: &TestCa) -> HttpServerHandle {
            let leaf = ca.leaf(&["127.0.0.1"]);
            let identity = TlsIdentity::from_pem(leaf.chain.as_bytes(), leaf.key.as_bytes()).unwrap();
            let config = mcp_sansio::http::HttpConfig::default();
            aw!(server().serve_https_with(localhost(), config, identity)).unwrap()
        }
    }

    #[test]
    fn https_tunnels_through_a_proxy_with_connect_in_both_eras() {
        let ca = TestCa::new("proxy suite CA");
        rt::block_on(async {
            let handle = aw!(start_https(&ca));
            let addr = handle.local_addr();
            let url = format!("https://{addr}/mcp");
            let proxy = Tinyproxy::start(&[addr.port()]);
            for era in [EraMode::Modern, LEGACY] {
                let http = trusting(&ca).proxy(Proxy::Url(proxy.url()));
                aw!(echo_through(&url, era, http));
            }
            aw!(handle.shutdown());
            let seen = proxy.requests();
            let expected = format!("CONNECT {addr} HTTP/1.1");
            assert!(seen.contains(&expected), "{expected} not in {seen:?}");
        });
    }

    #[test]
    fn a_proxy_refusing_connect_fails_connect_with_its_status() {
        let ca = TestCa::new("proxy suite CA");
        rt::block_on(async {
            let handle = aw!(start_https(&ca));
            let addr = handle.local_addr();
            let url = format!("https://{addr}/mcp");
            // tinyproxy allows CONNECT to another port only: 403
            let proxy = Tinyproxy::start(&[free_port()]);
            let http = trusting(&ca).proxy(Proxy::Url(proxy.url()));
            let why = failure(aw!(connect(&url, EraMode::Auto, http)));
            aw!(handle.shutdown());
            let expected = format!(
                "the proxy {} refused CONNECT to {addr}: HTTP 403",
                proxy.url()
            );
            assert!(why.starts_with(&expected), "{why}");
        });
    }

    #[test]
    fn a_tls_handshake_never_answered_fails_within_the_connect_timeout() {
        // Accepts TCP, reads, never answers
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let held = std::thread::spawn(move || {
            let (mut tcp, _) = listener.accept().unwrap();
            let mut buf = [0u8; 1024];
            while matches!(tcp.read(&mut buf), Ok(n) if n > 0) {}
        });
        let url = format!("https://{addr}/mcp");
        let started = Instant::now();
        let why = rt::block_on(async {
            let http = HttpOptions::default().connect_timeout(Duration::from_millis(300));
            failure(aw!(connect(&url, EraMode::Modern, http)))
        });
        let took = started.elapsed();
        assert_eq!(why, format!("connecting to {url} timed out after 300 ms"));
        assert!(took < Duration::from_millis(1500), "{took:?}");
        drop(held);
    }
}

#[test]
fn an_unreachable_proxy_fails_connect_naming_it() {
    rt::block_on(async {
        let dead = free_port();
        let target = free_port();
        let url = format!("http://127.0.0.1:{target}/mcp");
        let proxy = format!("http://127.0.0.1:{dead}");
        let http = HttpOptions::default().proxy(Proxy::Url(proxy.clone()));
        let why = failure(aw!(connect(&url, EraMode::Modern, http)));
        assert_eq!(
            why,
            format!(
                "could not connect to the proxy 127.0.0.1:{dead} for {url}: \
                 Connection refused (os error 111)"
            )
        );
    });
}

#[test]
fn an_unusable_proxy_setting_is_a_bad_option() {
    rt::block_on(async {
        let http = HttpOptions::default().proxy(Proxy::Url("socks5://127.0.0.1:1".into()));
        match aw!(connect("http://127.0.0.1:9/mcp", EraMode::Modern, http)) {
            Err(ConnectError::Options(why)) => assert!(why.contains("socks5"), "{why}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
    });
}

#[test]
fn a_request_never_answered_fails_within_the_request_timeout() {
    // Reads requests, never answers
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(mut tcp) = tcp else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while matches!(tcp.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    let url = format!("http://{addr}/mcp");
    let started = Instant::now();
    let why = rt::block_on(async {
        let http = HttpOptions::default().request_timeout(Duration::from_millis(300));
        failure(aw!(connect(&url, EraMode::Modern, http)))
    });
    let took = started.elapsed();
    assert_eq!(why, format!("no response head from {url} within 300 ms"));
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn a_closed_port_fails_connect_naming_the_url_and_the_cause_in_every_era_mode() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    rt::block_on(async {
        for era in [EraMode::Modern, EraMode::Auto, LEGACY] {
            let why = failure(aw!(connect(&url, era, HttpOptions::default())));
            assert_eq!(
                why,
                format!("could not connect to {url}: Connection refused (os error 111)"),
                "{era:?}"
            );
        }
    });
}

/// A fake proxy that records each request head it reads and answers 407
fn recording_proxy() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://ada:s%3Acret@{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(mut tcp) = tcp else { return };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && matches!(tcp.read(&mut byte), Ok(1)) {
                head.push(byte[0]);
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ = tcp.write_all(
                b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (url, heads)
}

#[test]
fn the_proxy_urls_credentials_go_as_proxy_authorization() {
    let (proxy, heads) = recording_proxy();
    let target = format!("127.0.0.1:{}", free_port());
    let mut urls = vec![format!("http://{target}/mcp")];
    if cfg!(feature = "tls") {
        urls.push(format!("https://{target}/mcp"));
    }
    rt::block_on(async {
        for url in &urls {
            let http = HttpOptions::default().proxy(Proxy::Url(proxy.clone()));
            let _ = failure(aw!(connect(url, EraMode::Modern, http)));
        }
    });
    let heads = heads.lock().unwrap().clone();
    // "ada:s:cret" in base64
    let credentials = "proxy-authorization: basic YWRhOnM6Y3JldA==".to_ascii_lowercase();
    let plain = heads
        .iter()
        .find(|h| h.starts_with(&format!("POST {} HTTP/1.1\r\n", urls[0])))
        .unwrap_or_else(|| panic!("no absolute-form POST in {heads:?}"));
    assert!(plain.to_ascii_lowercase().contains(&credentials), "{plain}");
    if let Some(https) = urls.get(1) {
        let _ = https;
        let tunnel = heads
            .iter()
            .find(|h| h.starts_with(&format!("CONNECT {target} HTTP/1.1\r\n")))
            .unwrap_or_else(|| panic!("no CONNECT in {heads:?}"));
        assert!(
            tunnel.to_ascii_lowercase().contains(&credentials),
            "{tunnel}"
        );
    }
}

#[test]
fn an_unresolvable_host_fails_connect_saying_so() {
    rt::block_on(async {
        let url = "http://no-such-host.invalid/mcp";
        let http = HttpOptions::default().connect_timeout(Duration::from_secs(5));
        let why = failure(aw!(connect(url, EraMode::Modern, http)));
        assert!(
            why.starts_with("could not resolve no-such-host.invalid: ")
                || why == format!("connecting to {url} timed out after 5 s"),
            "{why}"
        );
    });
}
