//! Shared tasks in Redis: the [`TaskStore`] of several server processes
//!
//! Built on the `redis` crate's synchronous client, on two threads of its own, so it serves
//! every binding (tokio, async-std/smol, threads) the same way: one thread runs the sessions'
//! operations in order on one connection, the other reads the signals. Both reconnect by
//! themselves: while Redis cannot be reached, every `Put` and `Get` fails at once with the
//! reason (the affected requests fail with it), and the next operation tries again. An
//! operation that finds its connection dropped (Redis restarted since the last one) is run
//! once more on a new connection before it fails.
//!
//! The data, under a prefix (`mcp` by default):
//! - `<prefix>:task:<task id>`: a hash with the record (`rec`) and whether it is terminal
//!   (`end`), expiring at the record's `expires_at_ms`. A Lua script writes it unless the
//!   stored record is terminal, atomically: a terminal status never changes, whichever
//!   process wrote it.
//! - `<prefix>:signals`: a stream of the task signals and changes (the message in field
//!   `m`), trimmed to about [`SIGNAL_LOG`] entries.
//!
//! Signals go through a stream rather than pub/sub because pub/sub keeps nothing for a
//! subscriber that is not connected at the moment of the publish: a process whose
//! subscription was still connecting (just started) or reconnecting (Redis restarted, a
//! read timed out while Redis was busy) lost the signal for good, and a task waited for its
//! input or its cancel until its ttl. The reader keeps its place in the stream instead and
//! goes on from it after every reconnect. It starts a few seconds before the store was
//! opened ([`REPLAY`]: Redis's clock may be behind this machine's): what it reads again then
//! is about tasks and clients a new process does not have, and is ignored.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use mcp_sansio::store::{StoreError, StoreOp, StoreReply};
use redis::streams::StreamReadReply;

use crate::peer::unix_ms;
use crate::store::{Deliver, Done, Subscription, TaskStore};

/// How long connecting may take
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long one command may take
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the signal reader looks at the store being dropped (its longest wait for
/// the next signal), and how long it waits between attempts to reconnect
const TICK: Duration = Duration::from_millis(250);
/// About how many signals the stream keeps (`XADD ... MAXLEN ~`): a reader that was away
/// for longer than that many signals misses the oldest
pub const SIGNAL_LOG: usize = 10_000;
/// How far before the store's opening its reader starts in the stream: covers a Redis whose
/// clock is behind this machine's (stream ids are Redis's Unix milliseconds)
pub const REPLAY: Duration = Duration::from_secs(5);

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
            let start = unix_ms().saturating_sub(u64::try_from(REPLAY.as_millis()).unwrap_or(0));
            let cursor = format!("{start}-0");
            thread::Builder::new()
                .name("mcp-redis-sub".into())
                .spawn(move || run_reader(&client, &keys.stream(), cursor, &subscribers, &stop))
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

    fn stream(&self) -> String {
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
        let mut outcome = run_op(client, keys, &put, &mut con, &op);
        if outcome
            .as_ref()
            .is_err_and(redis::RedisError::is_connection_dropped)
        {
            // A connection Redis closed since the last operation (it restarted, say): once
            // more on a new connection. Repeating is safe: a `Put` writes the same record,
            // a `Get` reads, and a signal that comes twice changes nothing the first did not.
            outcome = run_op(client, keys, &put, &mut con, &op);
        }
        match outcome {
            Ok(Some(reply)) => done(reply),
            Ok(None) => {}
            Err(e) => done(StoreReply::Failed(StoreError(format!("{describe}: {e}")))),
        }
    }
}

/// One operation, on `con` (connected first if it is not; dropped after an error)
fn run_op(
    client: &redis::Client,
    keys: &Keys,
    put: &redis::Script,
    con: &mut Option<redis::Connection>,
    op: &StoreOp,
) -> redis::RedisResult<Option<StoreReply>> {
    let outcome = (|| {
        if con.is_none() {
            *con = Some(connect(client)?);
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
                    .key(keys.task(task))
                    .arg(record)
                    .arg(if *terminal { "1" } else { "0" })
                    .arg(expires_at_ms)
                    .invoke(c)?;
                Some(kept.map_or(StoreReply::Stored, StoreReply::Kept))
            }
            StoreOp::Get { task, .. } => {
                let record: Option<String> = redis::cmd("HGET")
                    .arg(keys.task(task))
                    .arg("rec")
                    .query(c)?;
                Some(StoreReply::Found(record))
            }
            StoreOp::Publish { message } => {
                let _: String = redis::cmd("XADD")
                    .arg(keys.stream())
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(SIGNAL_LOG)
                    .arg("*")
                    .arg("m")
                    .arg(message)
                    .query(c)?;
                None
            }
            _ => None,
        })
    })();
    if outcome.is_err() {
        *con = None;
    }
    outcome
}

/// The signal reader's thread: delivers every signal of the stream after `cursor`, in
/// order, and goes on from the last one it delivered after every reconnect, until the store
/// is dropped
fn run_reader(
    client: &redis::Client,
    stream: &str,
    mut cursor: String,
    subscribers: &Subscribers,
    stop: &AtomicBool,
) {
    let block = u64::try_from(TICK.as_millis()).unwrap_or(250);
    while !stop.load(Ordering::SeqCst) {
        let Ok(mut con) = connect(client) else {
            thread::sleep(TICK);
            continue;
        };
        // A read waits up to `block` for a signal, then Redis answers nil.
        if con.set_read_timeout(Some(TICK + IO_TIMEOUT)).is_err() {
            thread::sleep(TICK);
            continue;
        }
        while !stop.load(Ordering::SeqCst) {
            let read: redis::RedisResult<Option<StreamReadReply>> = redis::cmd("XREAD")
                .arg("COUNT")
                .arg(256)
                .arg("BLOCK")
                .arg(block)
                .arg("STREAMS")
                .arg(stream)
                .arg(&cursor)
                .query(&mut con);
            match read {
                Ok(Some(reply)) => {
                    for entry in reply.keys.into_iter().flat_map(|key| key.ids) {
                        if let Some(text) = entry.get::<String>("m") {
                            subscribers.deliver(&text);
                        }
                        cursor = entry.id;
                    }
                }
                Ok(None) => {}
                Err(_) => {
                    // Reconnect (not at once: an error Redis answers would come again),
                    // and go on from the cursor.
                    thread::sleep(TICK);
                    break;
                }
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
