//! The everything-servers' command line, shared by the Rust bindings' copies (mcp-sansio-async-std's
//! and mcp-sansio-blocking's include this file): flags in any order
//!
//! - `--conformance`: the official conformance suite's fixtures;
//! - `--http ADDR` (default `127.0.0.1:3000`) or `--https ADDR CHAIN.pem KEY.pem`; neither: stdio;
//! - `--node NAME`: this process's name behind a load balancer, put before every 2025-wire
//!   session id (`NAME.<hex>`, [`HttpConfig::node`]) so a proxy routes each session to it
//!   (`deploy/nginx/mcp.conf`, `scripts/scale-out`);
//! - `--state-key HEX`: the 32-byte key (64 hex digits) that seals 2026 `requestState`
//!   ([`ServerConfig::state_key`](mcp_sansio::ServerConfig::state_key)), which every process
//!   behind one endpoint must share; without it each process draws its own;
//! - `--store URL`: share tasks and changes with the other processes through Redis
//!   (`redis://HOST:PORT`; the example must be built with the `redis` feature; `memory`: an
//!   in-process store, the same code path without Redis, for one process), as process
//!   `--node` (or a random name), with `--lease MS` (default 10000): a task whose process
//!   died reads `failed` once its lease ends;
//! - `--jwt-secret SECRET` (with `--http` or `--https` on a fixed port; the example must be
//!   built with the `auth` feature): every request needs an HS256 JWT signed with `SECRET`,
//!   for the resource `http://ADDR/mcp` (`aud`) from the authorization server
//!   `http://127.0.0.1:<PORT+1>` (`iss`), with any scopes (`admin_echo` needs `mcp:admin`),
//!   as the `jwt-protected-server` example checks them (`jwt_rules`);
//! - `--otlp http://HOST:PORT` (the example must be built with the `otlp` feature): export
//!   every span over OTLP/HTTP (protobuf) to `http://HOST:PORT/v1/traces` (`telemetry.rs`).

use std::net::SocketAddr;

use mcp_sansio::http::{HttpConfig, NodeTag};

/// What to serve on (the certificate files are read only with the `tls` feature)
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) enum Transport {
    Stdio,
    Http(SocketAddr),
    Https {
        addr: SocketAddr,
        chain: String,
        key: String,
    },
}

/// The parsed command line
pub(crate) struct Args {
    pub(crate) fixtures: bool,
    pub(crate) transport: Transport,
    pub(crate) node: Option<NodeTag>,
    pub(crate) state_key: Option<[u8; 32]>,
    pub(crate) store: Option<String>,
    pub(crate) lease_ms: u64,
    /// `--jwt-secret`: the HS256 key every request's bearer token must be signed with
    pub(crate) jwt_secret: Option<String>,
    /// `--otlp`: the OTLP/HTTP collector the spans go to
    pub(crate) otlp: Option<String>,
}

impl Args {
    /// The HTTP config these flags ask for (the defaults, with `--node`)
    pub(crate) fn http_config(&self) -> HttpConfig {
        let mut config = HttpConfig::default();
        config.node.clone_from(&self.node);
        config
    }

    /// The task store `--store` names, with this process's sharing settings; a store this
    /// build cannot open prints why and exits with 2
    pub(crate) fn store(
        &self,
        name: &str,
    ) -> Option<(
        std::sync::Arc<dyn mcp_sansio_runtime::store::TaskStore>,
        mcp_sansio::store::SharedTasks,
    )> {
        let url = self.store.as_ref()?;
        let node = self.node.as_ref().map_or_else(
            || {
                use std::hash::{BuildHasher, RandomState};
                format!("{:08x}", RandomState::new().hash_one(0u8) as u32)
            },
            |n| n.as_str().to_owned(),
        );
        let shared = mcp_sansio::store::SharedTasks::new(node)
            .lease(std::time::Duration::from_millis(self.lease_ms));
        if url == "memory" {
            // One process only: the store path without Redis (benchmarks)
            return Some((mcp_sansio_runtime::store::MemoryTaskStore::new(), shared));
        }
        #[cfg(feature = "redis")]
        match mcp_sansio_runtime::redis_store::RedisTaskStore::open(url) {
            Ok(store) => Some((store, shared)),
            Err(e) => {
                eprintln!("{name}: --store: {e}");
                std::process::exit(2);
            }
        }
        #[cfg(not(feature = "redis"))]
        {
            let _ = shared;
            eprintln!(
                "{name}: --store {url} needs the `redis` feature (cargo build --features redis)"
            );
            std::process::exit(2);
        }
    }
}

/// The usage line of the example called `name`
pub(crate) fn usage(name: &str) -> String {
    format!(
        "usage: {name} [--conformance] [--http 127.0.0.1:PORT | --https 127.0.0.1:PORT CHAIN.pem KEY.pem] \
         [--node NAME] [--state-key 64-HEX-DIGITS] [--store redis://HOST:PORT [--lease MS]] \
         [--jwt-secret SECRET] [--otlp http://HOST:PORT]"
    )
}

/// `std::env::args()` parsed; a bad command line prints why and the usage, and exits with 2
pub(crate) fn parse(name: &str) -> Args {
    match parse_from(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(why) => {
            eprintln!("{name}: {why}\n{}", usage(name));
            std::process::exit(2);
        }
    }
}

fn parse_from(argv: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut argv = argv.into_iter().peekable();
    let mut args = Args {
        fixtures: false,
        transport: Transport::Stdio,
        node: None,
        state_key: None,
        store: None,
        lease_ms: 10_000,
        jwt_secret: None,
        otlp: None,
    };
    let addr = |value: Option<String>, flag: &str, example: &str| -> Result<SocketAddr, String> {
        let value = value.ok_or_else(|| format!("{flag} takes an address such as {example}"))?;
        value
            .parse()
            .map_err(|_| format!("{flag} takes an address such as {example}, not {value:?}"))
    };
    while let Some(flag) = argv.next() {
        match flag.as_str() {
            "--conformance" => args.fixtures = true,
            "--http" => {
                // The address may be left out (then 127.0.0.1:3000), as before
                let value = argv.next_if(|v| !v.starts_with("--"));
                let addr = match value {
                    None => SocketAddr::from(([127, 0, 0, 1], 3000)),
                    value => addr(value, "--http", "127.0.0.1:3000")?,
                };
                args.transport = Transport::Http(addr);
            }
            "--https" => {
                let need = "--https takes an address such as 127.0.0.1:3443, then the \
                            certificate chain and the private key files (PEM)";
                let addr = addr(argv.next(), "--https", "127.0.0.1:3443")?;
                let chain = argv.next().ok_or(need)?;
                let key = argv.next().ok_or(need)?;
                args.transport = Transport::Https { addr, chain, key };
            }
            "--node" => {
                let name = argv.next().ok_or("--node takes a name such as a")?;
                args.node = Some(NodeTag::new(&name).map_err(|e| format!("--node: {e}"))?);
            }
            "--state-key" => {
                let hex = argv.next().ok_or("--state-key takes 64 hex digits")?;
                args.state_key = Some(parse_key(&hex).ok_or_else(|| {
                    format!("--state-key takes 64 hex digits (32 bytes), not {hex:?}")
                })?);
            }
            "--store" => {
                args.store = Some(
                    argv.next()
                        .ok_or("--store takes a URL such as redis://127.0.0.1:6379")?,
                );
            }
            "--lease" => {
                let ms = argv
                    .next()
                    .ok_or("--lease takes milliseconds such as 10000")?;
                args.lease_ms = ms
                    .parse()
                    .map_err(|_| format!("--lease takes milliseconds such as 10000, not {ms:?}"))?;
            }
            "--jwt-secret" => {
                let secret = argv
                    .next()
                    .ok_or("--jwt-secret takes the tokens' HS256 key")?;
                args.jwt_secret = Some(secret);
            }
            "--otlp" => {
                let url = argv
                    .next()
                    .ok_or("--otlp takes a collector's URL such as http://127.0.0.1:4318")?;
                args.otlp = Some(url);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.jwt_secret.is_some() {
        if cfg!(not(feature = "auth")) {
            return Err(
                "--jwt-secret needs the `auth` feature (cargo build --features auth)".into(),
            );
        }
        match &args.transport {
            Transport::Stdio => return Err("--jwt-secret needs --http or --https".into()),
            Transport::Http(addr) | Transport::Https { addr, .. } if addr.port() == 0 => {
                return Err(
                    "--jwt-secret needs a fixed port: the tokens' audience names it".into(),
                );
            }
            _ => {}
        }
    }
    Ok(args)
}

/// With `--jwt-secret`, how the server at `addr` (`scheme` `http` or `https`) checks tokens:
/// the resource `SCHEME://ADDR/mcp` (their `aud`) trusting the authorization server
/// `http://127.0.0.1:<PORT+1>` (their `iss`, as in the `jwt-protected-server` example), no
/// scope required of every request (a tool may require some); HS256 with the secret, no
/// leeway. `None` without the flag.
#[cfg(feature = "auth")]
pub(crate) fn jwt_rules(
    secret: Option<&str>,
    scheme: &str,
    addr: SocketAddr,
) -> Option<(
    mcp_sansio::http::protected::ResourceServer,
    jsonwebtoken::DecodingKey,
    jsonwebtoken::Validation,
)> {
    let secret = secret?;
    let resource = format!("{scheme}://{addr}/mcp");
    let issuer = format!("http://127.0.0.1:{}", addr.port().wrapping_add(1));
    let rules = mcp_sansio::http::protected::ResourceServer::new(&resource, &issuer)
        .expect("an http(s) URL");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.set_audience(&[resource]);
    validation.set_issuer(&[issuer]);
    validation.leeway = 0;
    validation.validate_nbf = true;
    let key = jsonwebtoken::DecodingKey::from_secret(secret.as_bytes()).expect("an HS256 key");
    Some((rules, key, validation))
}

/// 64 hex digits as 32 bytes
fn parse_key(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut key = [0u8; 32];
    for (byte, pair) in key.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(key)
}
