//! Shared tasks in Redis: the [`TaskStore`] of several server processes
//!
//! Built on the `redis` crate's synchronous client, on two threads of its own, so it serves
//! every binding (tokio, async-std/smol, threads) the same way: one thread runs the sessions'
//! operations in order on one connection, the other holds the subscription. Both reconnect
//! by themselves: while Redis cannot be reached, every `Put` and `Get` fails at once with
//! the reason (the affected requests fail with it), and the next operation tries again.
//!
//! The data, under a prefix (`mcp` by default):
//! - `<prefix>:task:<task id>`: a hash with the record (`rec`) and whether it is terminal
//!   (`end`), expiring at the record's `expires_at_ms`. A Lua script writes it unless the
//!   stored record is terminal, atomically: a terminal status never changes, whichever
//!   process wrote it.
//! - `<prefix>:signals`: the pub/sub channel of task signals and changes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use mcp_sansio::store::{StoreError, StoreOp, StoreReply};

use crate::store::{Deliver, Done, Subscription, TaskStore};

/// How long connecting may take
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long one command may take
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the subscriber looks at the store being dropped, and waits between attempts
/// to reconnect
const TICK: Duration = Duration::from_millis(250);

/// Writes a record unless the stored one is terminal; returns the kept record, or nil
const PUT: &str = r"
if redis.call('HGET', KEYS[1], 'end') == '1' then
  return redis.call('HGET', KEYS[1], 'rec')
end
redis.call('HSET', KEYS[1], 'rec', ARGV[1], 'end', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return false
";

/// A [`TaskStore`] in Redis (see the [module docs](self))
pub struct RedisTaskStore {
    describe: String,
    ops: Mutex<mpsc::Sender<(StoreOp, Done)>>,
    subscribers: Arc<Subscribers>,
    stop: Arc<AtomicBool>,
}

#[derive(Default)]
struct Subscribers {
    next: Mutex<(u64, BTreeMap<u64, Deliver>)>,
}

impl Subscribers {
    fn deliver(&self, message: &str) {
        let all: Vec<Deliver> = self
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .values()
            .cloned()
            .collect();
        for deliver in all {
            deliver(message);
        }
    }
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("url", &self.describe)
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// A store at `url` (`redis://HOST:PORT`, `redis://:password@HOST:PORT/DB`,
    /// `rediss://` for TLS where the `redis` crate has it), with keys under `mcp:`
    ///
    /// Redis need not be up yet: operations fail with the reason until it is.
    ///
    /// # Errors
    /// The URL is not a Redis URL, or a thread could not be started.
    pub fn open(url: &str) -> Result<Arc<Self>, StoreError> {
        Self::with_prefix(url, "mcp")
    }

    /// As [`open`](Self::open), with keys and the channel under `prefix:` (several
    /// deployments on one Redis)
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn with_prefix(url: &str, prefix: &str) -> Result<Arc<Self>, StoreError> {
        let client =
            redis::Client::open(url).map_err(|e| StoreError(format!("{}: {e}", redact(url))))?;
        let describe = redact(url);
        let (tx, rx) = mpsc::channel::<(StoreOp, Done)>();
        let subscribers = Arc::new(Subscribers::default());
        let stop = Arc::new(AtomicBool::new(false));
        let keys = Keys {
            prefix: prefix.to_owned(),
        };
        {
            let client = client.clone();
            let keys = keys.clone();
            let describe = describe.clone();
            thread::Builder::new()
                .name("mcp-redis-ops".into())
                .spawn(move || run_ops(&client, &keys, &describe, &rx))
                .map_err(|e| StoreError(format!("no thread for the Redis store: {e}")))?;
        }
        {
            let subscribers = Arc::clone(&subscribers);
            let stop = Arc::clone(&stop);
            thread::Builder::new()
                .name("mcp-redis-sub".into())
                .spawn(move || run_subscriber(&client, &keys.channel(), &subscribers, &stop))
                .map_err(|e| StoreError(format!("no thread for the Redis store: {e}")))?;
        }
        Ok(Arc::new(Self {
            describe,
            ops: Mutex::new(tx),
            subscribers,
            stop,
        }))
    }
}

impl Drop for RedisTaskStore {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl TaskStore for RedisTaskStore {
    fn run(&self, op: StoreOp, done: Done) {
        let sent = self
            .ops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send((op, done));
        if let Err(mpsc::SendError((op, done))) = sent
            && !matches!(op, StoreOp::Publish { .. })
        {
            done(StoreReply::Failed(StoreError(format!(
                "{}: the store's thread ended",
                self.describe
            ))));
        }
    }

    fn subscribe(&self, deliver: Deliver) -> Subscription {
        let id = {
            let mut next = self
                .subscribers
                .next
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            next.0 += 1;
            let id = next.0;
            next.1.insert(id, deliver);
            id
        };
        struct Unsubscribe(std::sync::Weak<Subscribers>, u64);
        impl Drop for Unsubscribe {
            fn drop(&mut self) {
                if let Some(s) = self.0.upgrade() {
                    s.next
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .1
                        .remove(&self.1);
                }
            }
        }
        Subscription::new(Unsubscribe(Arc::downgrade(&self.subscribers), id))
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}

#[derive(Clone)]
struct Keys {
    prefix: String,
}

impl Keys {
    fn task(&self, id: &str) -> String {
        format!("{}:task:{id}", self.prefix)
    }

    fn channel(&self) -> String {
        format!("{}:signals", self.prefix)
    }
}

/// A URL without its password
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

fn connect(client: &redis::Client) -> redis::RedisResult<redis::Connection> {
    let con = client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
    con.set_read_timeout(Some(IO_TIMEOUT))?;
    con.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(con)
}

/// The operations thread: in order, on one connection, reconnecting after any error
fn run_ops(
    client: &redis::Client,
    keys: &Keys,
    describe: &str,
    ops: &mpsc::Receiver<(StoreOp, Done)>,
) {
    let put = redis::Script::new(PUT);
    let mut con: Option<redis::Connection> = None;
    for (op, done) in ops {
        let outcome = (|| -> redis::RedisResult<Option<StoreReply>> {
            if con.is_none() {
                con = Some(connect(client)?);
            }
            let c = con.as_mut().expect("connected above");
            Ok(match op {
                StoreOp::Put {
                    task,
                    record,
                    terminal,
                    expires_at_ms,
                    ..
                } => {
                    let kept: Option<String> = put
                        .key(keys.task(&task))
                        .arg(record)
                        .arg(if terminal { "1" } else { "0" })
                        .arg(expires_at_ms)
                        .invoke(c)?;
                    Some(kept.map_or(StoreReply::Stored, StoreReply::Kept))
                }
                StoreOp::Get { task, .. } => {
                    let record: Option<String> = redis::cmd("HGET")
                        .arg(keys.task(&task))
                        .arg("rec")
                        .query(c)?;
                    Some(StoreReply::Found(record))
                }
                StoreOp::Publish { message } => {
                    let _: i64 = redis::cmd("PUBLISH")
                        .arg(keys.channel())
                        .arg(message)
                        .query(c)?;
                    None
                }
                _ => None,
            })
        })();
        match outcome {
            Ok(Some(reply)) => done(reply),
            Ok(None) => {}
            Err(e) => {
                con = None;
                done(StoreReply::Failed(StoreError(format!("{describe}: {e}"))));
            }
        }
    }
}

/// The subscriber thread: delivers every message on the channel, reconnecting until the
/// store is dropped
fn run_subscriber(
    client: &redis::Client,
    channel: &str,
    subscribers: &Subscribers,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::SeqCst) {
        let Ok(mut con) = connect(client) else {
            thread::sleep(TICK);
            continue;
        };
        let mut pubsub = con.as_pubsub();
        if pubsub.subscribe(channel).is_err() || pubsub.set_read_timeout(Some(TICK)).is_err() {
            thread::sleep(TICK);
            continue;
        }
        while !stop.load(Ordering::SeqCst) {
            match pubsub.get_message() {
                Ok(message) => {
                    if let Ok(text) = message.get_payload::<String>() {
                        subscribers.deliver(&text);
                    }
                }
                Err(e) if e.is_timeout() => {}
                Err(_) => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn urls_are_described_without_their_password() {
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_eq!(
            redact("redis://:hunter2@127.0.0.1:6379/0"),
            "redis://***@127.0.0.1:6379/0"
        );
    }
}
