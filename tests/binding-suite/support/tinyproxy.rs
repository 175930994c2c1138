//! A real forward proxy for the proxy tests: tinyproxy (Debian's `tinyproxy-bin`) on a free
//! 127.0.0.1 port, in the foreground with a config and a log of its own, killed on drop

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A free port on 127.0.0.1 (nothing listens on it once this returns)
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// tinyproxy running; dropping it kills it
pub(crate) struct Tinyproxy {
    child: Child,
    pub(crate) port: u16,
    dir: PathBuf,
}

impl Tinyproxy {
    /// Starts tinyproxy allowing `CONNECT` to `connect_ports` only (every port when empty);
    /// panics saying to install Debian's tinyproxy-bin when it is missing
    pub(crate) fn start(connect_ports: &[u16]) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let port = free_port();
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("mcp-tinyproxy-{}-{n}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("tinyproxy.log");
        let mut conf = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nMaxClients 16\nAllow 127.0.0.1\n\
             LogFile \"{}\"\nLogLevel Info\nDisableViaHeader Yes\n",
            log.display()
        );
        for p in connect_ports {
            conf.push_str(&format!("ConnectPort {p}\n"));
        }
        let conf_path = dir.join("tinyproxy.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = match Command::new("tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => panic!(
                "tinyproxy does not start ({e}): the proxy tests need it; install Debian's tinyproxy-bin"
            ),
        };
        let mut proxy = Self { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = proxy.child.try_wait() {
                panic!("tinyproxy exited ({status}): {}", proxy.log());
            }
            assert!(
                Instant::now() < deadline,
                "tinyproxy did not listen within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        proxy
    }

    /// `http://127.0.0.1:PORT`
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its log so far
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("tinyproxy.log")).unwrap_or_default()
    }

    /// The request lines it logged (`CONNECT host:port HTTP/1.1`, `POST http://.. HTTP/1.1`)
    pub(crate) fn requests(&self) -> Vec<String> {
        let marker = "): ";
        self.log()
            .lines()
            .filter(|l| l.contains("Request (file descriptor"))
            .filter_map(|l| l.split_once(marker).map(|(_, r)| r.trim().to_owned()))
            .collect()
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
