//! Our client and our server over HTTPS on 127.0.0.1 with certificates made at test time:
//! both eras; a certificate that is not trusted, is for another name or has expired fails
//! connect saying why; a root that does not parse is a bad option; a connection that never
//! handshakes is closed by the header read deadline and holds its connection slot until
//! then, so is one whose head stops halfway; a client that ends its TLS session mid-stream
//! aborts its call; `SSL_CERT_FILE` is honoured (in a child process)

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use mcp_sansio::http::HttpConfig;
use mcp_sansio::{ClientConfig, EraMode, Implementation, ServerConfig};

use super::support::certs::{Leaf, TestCa};
use super::support::{LEGACY, text};
use super::{echo_tool, slow_tool, wait_for};
use crate::binding::{
    Client, ClientOptions, ConnectError, HttpOptions, HttpServerHandle, Server, TlsIdentity,
};
use crate::rt;

fn server() -> Server {
    let config = ServerConfig::new(Implementation::new("https-test-server", "1.0"));
    echo_tool(Server::builder(config)).build()
}

fn identity(leaf: &Leaf) -> TlsIdentity {
    TlsIdentity::from_pem(leaf.chain.as_bytes(), leaf.key.as_bytes()).unwrap()
}

dialect_fn! {
    async fn start(leaf: &Leaf, config: HttpConfig) -> HttpServerHandle {
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        aw!(server().serve_https_with(localhost, config, identity(leaf))).unwrap()
    }
}

fn url(handle: &HttpServerHandle) -> String {
    format!("https://{}/mcp", handle.local_addr())
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("https-test-client", "1.0"));
    config.era = era;
    config
}

/// Options that trust `ca`
fn trusting(ca: &TestCa) -> ClientOptions {
    ClientOptions::default().http(HttpOptions::default().root_certificates_pem(ca.pem.clone()))
}

dialect_fn! {
    async fn connect(url: &str, era: EraMode, options: ClientOptions) -> Result<Client, ConnectError> {
        aw!(rt::timeout(
            Duration::from_secs(10),
            Client::connect_http(url, config(era), options),
        ))
        .expect("connects or fails in time")
    }
}

dialect_fn! {
    /// The text of the error connecting to a server presenting `leaf` with `options`
    async fn refusal(leaf: &Leaf, options: ClientOptions) -> String {
        let handle = aw!(start(leaf, HttpConfig::default()));
        let outcome = aw!(connect(&url(&handle), EraMode::Modern, options));
        aw!(handle.shutdown());
        match outcome {
            Ok(_) => panic!("connected"),
            Err(e) => e.to_string(),
        }
    }
}

#[test]
fn lists_and_calls_over_https_in_both_eras() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.leaf(&["127.0.0.1", "localhost"]);
    rt::block_on(async {
        for era in [EraMode::Modern, LEGACY] {
            let handle = aw!(start(&leaf, HttpConfig::default()));
            let client = aw!(connect(&url(&handle), era, trusting(&ca))).unwrap();
            let tools = aw!(client.list_tools()).unwrap();
            let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["echo"], "{era:?}");
            let result = aw!(client.call_tool("echo", text("over https"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("over https"), "{era:?}");
            aw!(client.close());
            aw!(handle.shutdown());
        }
    });
}

#[test]
fn a_certificate_from_an_untrusted_ca_fails_connect_saying_so() {
    let ca = TestCa::new("untrusted CA");
    let leaf = ca.leaf(&["127.0.0.1"]);
    let why = rt::block_on(async { aw!(refusal(&leaf, ClientOptions::default())) });
    assert!(
        why.contains("not trusted") && why.contains("UnknownIssuer"),
        "{why}"
    );
    assert!(why.contains("127.0.0.1:"), "{why}");
}

#[test]
fn a_certificate_for_another_name_fails_connect_saying_so() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.leaf(&["other.example"]);
    let why = rt::block_on(async { aw!(refusal(&leaf, trusting(&ca))) });
    assert!(why.contains("not valid for the name"), "{why}");
    assert!(why.contains("other.example"), "{why}");
}

#[test]
fn an_expired_certificate_fails_connect_saying_so() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.expired_leaf(&["127.0.0.1"]);
    let why = rt::block_on(async { aw!(refusal(&leaf, trusting(&ca))) });
    assert!(why.contains("expired"), "{why}");
}

#[test]
fn a_root_certificate_that_does_not_parse_is_a_bad_option() {
    let options = ClientOptions::default()
        .http(HttpOptions::default().root_certificates_pem(b"not a certificate".to_vec()));
    // Nothing listens there: the options are refused before connecting.
    let outcome =
        rt::block_on(async { aw!(connect("https://127.0.0.1:9/mcp", EraMode::Modern, options)) });
    match outcome {
        Err(ConnectError::Options(why)) => assert!(why.contains("root certificate 1"), "{why}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// How long after connecting the server closes a connection that sends nothing (`None`: it
/// still had not after 5 s)
fn closed_after(addr: SocketAddr) -> Option<Duration> {
    let started = Instant::now();
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 64];
    loop {
        match tcp.read(&mut buf) {
            Ok(0) => return Some(started.elapsed()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Some(started.elapsed());
            }
            Err(_) => return None,
        }
    }
}

fn short_header_timeout(max_connections: usize) -> HttpConfig {
    let mut config = HttpConfig::default();
    config.header_read_timeout = Duration::from_millis(400);
    config.max_connections = max_connections;
    config
}

#[test]
fn a_connection_that_never_handshakes_is_closed_by_the_header_timeout() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.leaf(&["127.0.0.1"]);
    rt::block_on(async {
        let handle = aw!(start(&leaf, short_header_timeout(8)));
        let addr = handle.local_addr();
        let closed = aw!(rt::unblock(move || closed_after(addr)));
        let closed = closed.expect("the server closed the silent connection");
        assert!(closed >= Duration::from_millis(300), "{closed:?}");
        assert!(closed < Duration::from_secs(3), "{closed:?}");
        aw!(handle.shutdown());
    });
}

#[test]
fn a_connection_that_never_handshakes_holds_its_slot_until_the_header_timeout() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.leaf(&["127.0.0.1"]);
    rt::block_on(async {
        let handle = aw!(start(&leaf, short_header_timeout(1)));
        let addr = handle.local_addr();
        // The only slot, taken by a client that never says anything
        let silent = TcpStream::connect(addr).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        let client = aw!(connect(&url(&handle), EraMode::Modern, trusting(&ca))).unwrap();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
        let result = aw!(client.call_tool("echo", text("after the wait"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("after the wait"));
        drop(silent);
        aw!(client.close());
        aw!(handle.shutdown());
    });
}

#[test]
fn a_head_that_stops_halfway_over_tls_is_cut_off_by_the_header_timeout() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.leaf(&["127.0.0.1"]);
    rt::block_on(async {
        let handle = aw!(start(&leaf, short_header_timeout(8)));
        let addr = handle.local_addr();
        let pem = ca.pem.clone();
        let (ended, got) = aw!(rt::unblock(move || {
            use std::io::Write;
            let mut tls = super::support::certs::tls_connect(addr, &pem).unwrap();
            tls.sock
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let started = Instant::now();
            tls.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                .unwrap();
            tls.flush().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 256];
            loop {
                match tls.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        panic!("still open after 5 s")
                    }
                    // The server closed without a TLS close_notify
                    Err(_) => break,
                }
            }
            (started.elapsed(), got)
        }));
        assert!(ended < Duration::from_secs(3), "{ended:?}");
        let got = String::from_utf8_lossy(&got);
        // A 408 where the binding can still write one (hyper owns tokio's TLS writes)
        assert!(got.is_empty() || got.starts_with("HTTP/1.1 408"), "{got}");
        aw!(handle.shutdown());
    });
}

#[test]
fn a_tls_client_that_ends_its_session_mid_stream_aborts_its_call() {
    let ca = TestCa::new("binding suite CA");
    let leaf = ca.leaf(&["127.0.0.1"]);
    let aborted = Arc::new(AtomicBool::new(false));
    let config = ServerConfig::new(Implementation::new("https-test-server", "1.0"));
    let server = slow_tool(echo_tool(Server::builder(config)), Arc::clone(&aborted)).build();
    rt::block_on(async {
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle =
            aw!(server.serve_https_with(localhost, HttpConfig::default(), identity(&leaf)))
                .unwrap();
        let addr = handle.local_addr();
        let pem = ca.pem.clone();
        // A 2026 `slow` call whose event stream opens with its first progress; then the
        // client ends its TLS session (`close_notify`) with the socket still open.
        let tls = aw!(rt::unblock(move || {
            use std::io::Write;
            let mut tls = super::support::certs::tls_connect(addr, &pem).unwrap();
            tls.sock
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let (headers, body) = super::support::shares::modern_call(1, "slow", true);
            let mut head = format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            tls.write_all(head.as_bytes()).unwrap();
            tls.write_all(&body).unwrap();
            tls.flush().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !String::from_utf8_lossy(&got).contains("notifications/progress") {
                let n = tls.read(&mut buf).expect("the event stream opens");
                assert!(n > 0, "{}", String::from_utf8_lossy(&got));
                got.extend_from_slice(&buf[..n]);
            }
            tls.conn.send_close_notify();
            tls.flush().unwrap();
            tls
        }));
        assert!(aw!(wait_for(&aborted)), "the handler was aborted");
        drop(tls);
        aw!(handle.shutdown());
    });
}

/// The child's end of the `SSL_CERT_FILE` test: connects to `MCP_TLS_CHILD_URL` trusting
/// only the platform's roots (which `SSL_CERT_FILE` names); run by the test below
#[test]
#[ignore = "run as a child process by ssl_cert_file_is_honoured"]
fn ssl_cert_file_child() {
    let Ok(url) = std::env::var("MCP_TLS_CHILD_URL") else {
        return;
    };
    let outcome = rt::block_on(async {
        aw!(connect(&url, EraMode::Modern, ClientOptions::default())).map(|_| ())
    });
    if let Err(e) = outcome {
        panic!("the child could not connect: {e}");
    }
}

/// Runs [`ssl_cert_file_child`] in a child process with `SSL_CERT_FILE=ca_file`; whether
/// it connected
fn child_connects(url: &str, ca_file: &std::path::Path) -> bool {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["ssl_cert_file_child", "--ignored", "--test-threads=1", "-q"])
        .env("MCP_TLS_CHILD_URL", url)
        .env("SSL_CERT_FILE", ca_file)
        .env_remove("SSL_CERT_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    status.success()
}

#[test]
fn ssl_cert_file_is_honoured() {
    let ca = TestCa::new("SSL_CERT_FILE CA");
    let leaf = ca.leaf(&["127.0.0.1"]);
    let dir = std::env::temp_dir().join(format!("mcp-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trusted = dir.join(format!("ca-{}.pem", line!()));
    std::fs::write(&trusted, &ca.pem).unwrap();
    let other = dir.join(format!("other-{}.pem", line!()));
    std::fs::write(&other, TestCa::new("another CA").pem).unwrap();
    rt::block_on(async {
        let handle = aw!(start(&leaf, HttpConfig::default()));
        let url = url(&handle);
        let (with_ca, without) = aw!(rt::unblock(move || (
            child_connects(&url, &trusted),
            child_connects(&url, &other)
        )));
        assert!(with_ca, "the child trusts the CA SSL_CERT_FILE names");
        assert!(!without, "the child trusts nothing else");
        aw!(handle.shutdown());
    });
    let _ = std::fs::remove_dir_all(&dir);
}
