//! The demo over HTTPS, as a person runs it: `everything-server -- --https ADDR chain.pem
//! key.pem`, then `SSL_CERT_FILE=ca.pem demo https://ADDR/mcp` walks the whole session; the
//! same demo without the CA in `SSL_CERT_FILE` fails, saying the certificate is not trusted
//!
//! Both examples are built beside this test by `cargo test`.
#![cfg(feature = "tls")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// An example binary beside this test binary
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let path = dir.join("examples").join(name);
    assert!(path.exists(), "{} is not built", path.display());
    path
}

/// Kills the server when the test ends, however it ends
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A CA's parameters, named `name`
fn ca_params(name: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
}

#[test]
fn the_demo_walks_a_session_over_https_trusting_ssl_cert_file() {
    let dir = std::env::temp_dir().join(format!("mcp-demo-https-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca =
        CertifiedIssuer::self_signed(ca_params("demo CA"), KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let (ca_file, chain, key_file) = (
        dir.join("ca.pem"),
        dir.join("chain.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&ca_file, ca.pem()).unwrap();
    std::fs::write(&chain, format!("{}{}", leaf.pem(), ca.pem())).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();

    let mut server = Command::new(example("everything-server"))
        .arg("--https")
        .arg("127.0.0.1:0")
        .arg(&chain)
        .arg(&key_file)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = server.stderr.take().unwrap();
    let server = Killed(server);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if let Some(url) = line.strip_prefix("serving MCP at ") {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the server says where it serves");
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    let demo = |ssl_cert_file: &Path| {
        Command::new(example("demo"))
            .arg(&url)
            .env("SSL_CERT_FILE", ssl_cert_file)
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap()
    };
    let trusted = demo(&ca_file);
    let out = String::from_utf8_lossy(&trusted.stdout);
    assert!(
        trusted.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    assert!(out.contains("connected to mcp-tokio-everything"), "{out}");
    assert!(out.contains("✔ done"), "{out}");

    // Another CA in SSL_CERT_FILE: the server's certificate is not trusted.
    std::fs::write(dir.join("other.pem"), {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .self_signed(&KeyPair::generate().unwrap())
            .unwrap()
            .pem()
    })
    .unwrap();
    let untrusted = demo(&dir.join("other.pem"));
    let err = String::from_utf8_lossy(&untrusted.stderr);
    assert!(!untrusted.status.success());
    assert!(err.contains("not trusted (UnknownIssuer)"), "{err}");

    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
