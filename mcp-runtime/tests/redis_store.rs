//! The Redis task store against a real `redis-server` (Debian's package; `.ci/run` installs
//! it), started on a free 127.0.0.1 port with append-only persistence in a temporary
//! folder: writes, the terminal rule, signals, and an outage (the server killed, then
//! restarted on the same port) with clear errors meanwhile and nothing stored lost; no
//! signal lost to a reader that was still connecting or had lost its connection

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::store::{StoreOp, StoreReply, Ticket};
use mcp_sansio_runtime::redis_store::RedisTaskStore;
use mcp_sansio_runtime::store::{Subscription, TaskStore};

struct Redis {
    child: Child,
    port: u16,
    dir: PathBuf,
}

fn redis_server() -> PathBuf {
    for p in [
        "/usr/bin/redis-server",
        "/usr/sbin/redis-server",
        "/usr/local/bin/redis-server",
    ] {
        if std::path::Path::new(p).exists() {
            return p.into();
        }
    }
    panic!("redis-server is not installed (Debian's redis-server package; .ci/run installs it)")
}

impl Redis {
    /// A Redis on `port` keeping its data in `dir`; `None` when another server has the port
    /// (the tests run side by side, and one restarts its Redis on the port it had: a port
    /// another test was given meanwhile would answer for it otherwise)
    fn start(port: u16, dir: PathBuf) -> Option<Self> {
        let mut child = Command::new(redis_server())
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().ok().flatten().is_some() {
                return None; // it could not bind the port
            }
            if serves_from(port, &dir) {
                return Some(Self { child, port, dir });
            }
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A Redis on a free port, in a new folder of its own (removed when it drops)
    fn fresh(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("mcp-redis-store-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        (0..5)
            .find_map(|_| Self::start(free_port(), dir.clone()))
            .expect("a Redis of this test's own on a free port")
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether the Redis answering on `port` is the one keeping its data in `dir` (`CONFIG GET
/// dir` names the folder)
fn serves_from(port: u16, dir: &std::path::Path) -> bool {
    use std::io::{Read, Write};
    let Ok(mut conn) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    if conn
        .write_all(b"*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$3\r\ndir\r\n")
        .is_err()
    {
        return false;
    }
    let mut reply = [0u8; 4096];
    let n = conn.read(&mut reply).unwrap_or(0);
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    !name.is_empty() && String::from_utf8_lossy(&reply[..n]).contains(name)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(store: &RedisTaskStore, op: StoreOp) -> StoreReply {
    let (tx, rx) = mpsc::channel();
    store.run(op, Box::new(move |r| tx.send(r).unwrap()));
    rx.recv_timeout(Duration::from_secs(10)).expect("a reply")
}

fn put(task: &str, record: &str, terminal: bool) -> StoreOp {
    StoreOp::Put {
        ticket: Ticket::from_raw(1),
        task: task.into(),
        record: record.into(),
        terminal,
        expires_at_ms: now_ms() + 60_000,
    }
}

fn get(task: &str) -> StoreOp {
    StoreOp::Get {
        ticket: Ticket::from_raw(2),
        task: task.into(),
    }
}

fn publish(store: &RedisTaskStore, text: &str) {
    store.run(
        StoreOp::Publish {
            message: text.into(),
        },
        Box::new(|_| {}),
    );
}

/// Every signal `store` delivers, from now on
fn listen(store: &RedisTaskStore) -> (mpsc::Receiver<String>, Subscription) {
    let (tx, rx) = mpsc::channel::<String>();
    let tx = Mutex::new(tx);
    let sub = store.subscribe(Arc::new(move |m: &str| {
        let _ = tx.lock().unwrap().send(m.to_owned());
    }));
    (rx, sub)
}

/// `text` is the next signal (within 10 s), and no other follows at once
fn hears(rx: &mpsc::Receiver<String>, text: &str) {
    let got = rx.recv_timeout(Duration::from_secs(10));
    assert_eq!(got.as_deref(), Ok(text), "the next signal");
    assert!(
        rx.recv_timeout(Duration::from_millis(100)).is_err(),
        "{text} came once"
    );
}

/// Sends `command` (inline) to the Redis at `port` and returns its first reply line
fn redis_command(port: u16, command: &str) -> String {
    use std::io::{BufRead, Write};
    let mut con = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    con.write_all(format!("{command}\r\n").as_bytes()).unwrap();
    let mut line = String::new();
    std::io::BufReader::new(con).read_line(&mut line).unwrap();
    line
}

fn now_ms() -> u64 {
    u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[test]
fn records_signals_and_an_outage_against_a_real_redis() {
    let mut redis = Redis::fresh("outage");
    let url = redis.url();
    let prefix = format!("test{}", std::process::id());
    let store = RedisTaskStore::with_prefix(&url, &prefix).unwrap();
    assert_eq!(store.describe(), url);

    // Records: written, kept once terminal, read back.
    assert_eq!(run(&store, put("t1", "working", false)), StoreReply::Stored);
    assert_eq!(
        run(&store, put("t1", "completed", true)),
        StoreReply::Stored
    );
    assert_eq!(
        run(&store, put("t1", "working again", false)),
        StoreReply::Kept("completed".into())
    );
    assert_eq!(
        run(&store, get("t1")),
        StoreReply::Found(Some("completed".into()))
    );
    assert_eq!(run(&store, get("nope")), StoreReply::Found(None));

    // Signals: delivered to a subscriber, each once, published once.
    let (rx, _sub) = listen(&store);
    publish(&store, "hello");
    hears(&rx, "hello");

    // An outage: every operation fails at once, naming the store.
    redis.kill();
    let reply = run(&store, get("t1"));
    let StoreReply::Failed(e) = reply else {
        panic!("{reply:?}")
    };
    assert!(e.0.starts_with(&url), "{e}");

    // Back on the same port: the stored record is there, and signals flow again.
    let _redis = Redis::start(redis.port, redis.dir.clone()).expect("Redis back on its port");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match run(&store, get("t1")) {
            StoreReply::Found(found) => {
                assert_eq!(found.as_deref(), Some("completed"), "nothing lost");
                break;
            }
            other => assert!(Instant::now() < deadline, "{other:?}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    publish(&store, "again");
    hears(&rx, "again");
    drop(store);
}

/// A new process (a new store) hears what is published from the moment it opened: its reader
/// need not have connected yet
#[test]
fn a_store_hears_what_is_published_as_it_opens() {
    let redis = Redis::fresh("open");
    let url = redis.url();
    let publisher = RedisTaskStore::with_prefix(&url, "open").unwrap();
    assert_eq!(run(&publisher, get("warm")), StoreReply::Found(None));
    for round in 0..10 {
        let store = RedisTaskStore::with_prefix(&url, "open").unwrap();
        let (rx, _sub) = listen(&store);
        let text = format!("round {round}");
        publish(&publisher, &text);
        // The earlier rounds' signals may come first: the reader starts a little before
        // its store opened (REPLAY).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(m) if m == text => break,
                Ok(m) => assert!(m.starts_with("round "), "{m}"),
                Err(e) => panic!("round {round}: the new store never heard {text}: {e}"),
            }
        }
    }
}

/// Redis drops every connection (as a restart or a proxy would): the next operation runs on a
/// new connection rather than failing, and a signal published before the reader reconnected
/// still reaches it
#[test]
fn no_signal_or_operation_is_lost_when_redis_drops_the_connections() {
    let redis = Redis::fresh("drop");
    let url = redis.url();
    let (a, b) = (
        RedisTaskStore::with_prefix(&url, "drop").unwrap(),
        RedisTaskStore::with_prefix(&url, "drop").unwrap(),
    );
    let (rx, _sub) = listen(&b);
    publish(&a, "before");
    hears(&rx, "before");
    assert_eq!(run(&a, put("t1", "working", false)), StoreReply::Stored);

    for round in 0..5 {
        // Every client of both kinds: the stream reader is a normal one, a pub/sub reader
        // (the store before) was the other kind.
        for kind in ["normal", "pubsub"] {
            let killed = redis_command(redis.port, &format!("CLIENT KILL TYPE {kind} SKIPME yes"));
            assert!(killed.starts_with(':'), "{killed}");
        }
        let text = format!("dropped {round}");
        publish(&a, &text);
        hears(&rx, &text);
        assert_eq!(
            run(&b, get("t1")),
            StoreReply::Found(Some("working".into())),
            "round {round}: a dropped connection is not an outage"
        );
    }
}
