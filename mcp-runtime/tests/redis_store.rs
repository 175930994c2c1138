//! The Redis task store against a real `redis-server` (Debian's package; `.ci/run` installs
//! it), started on a free 127.0.0.1 port with append-only persistence in a temporary
//! folder: writes, the terminal rule, pub/sub, and an outage (the server killed, then
//! restarted on the same port) with clear errors meanwhile and nothing stored lost

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::store::{StoreOp, StoreReply, Ticket};
use mcp_sansio_runtime::redis_store::RedisTaskStore;
use mcp_sansio_runtime::store::TaskStore;

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
    fn start(port: u16, dir: PathBuf) -> Self {
        let child = Command::new(redis_server())
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
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port, dir }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
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
    let dir = std::env::temp_dir().join(format!("mcp-redis-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let mut redis = Redis::start(port, dir.clone());
    let url = format!("redis://127.0.0.1:{port}");
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

    // Signals: delivered to a subscriber (the subscription may take a moment to start).
    let (tx, rx) = mpsc::channel::<String>();
    let tx = Mutex::new(tx);
    let _sub = store.subscribe(Arc::new(move |m: &str| {
        let _ = tx.lock().unwrap().send(m.to_owned());
    }));
    let heard = |rx: &mpsc::Receiver<String>, store: &RedisTaskStore, text: &str| {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            store.run(
                StoreOp::Publish {
                    message: text.into(),
                },
                Box::new(|_| {}),
            );
            if let Ok(m) = rx.recv_timeout(Duration::from_millis(200)) {
                assert_eq!(m, text);
                while rx.try_recv().is_ok() {}
                return;
            }
            assert!(Instant::now() < deadline, "never heard {text}");
        }
    };
    heard(&rx, &store, "hello");

    // An outage: every operation fails at once, naming the store.
    redis.kill();
    let reply = run(&store, get("t1"));
    let StoreReply::Failed(e) = reply else {
        panic!("{reply:?}")
    };
    assert!(e.0.starts_with(&url), "{e}");

    // Back on the same port: the stored record is there, and signals flow again.
    let _redis = Redis::start(port, dir.clone());
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
    heard(&rx, &store, "again");
    drop(store);
    let _ = std::fs::remove_dir_all(&redis.dir);
    let _ = redis.port;
}
