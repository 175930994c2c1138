//! `threads`: the floor of any thread-per-connection binding, with no MCP at all
//!
//! One line goes through the same hand-offs a W1 call makes in mcp-sansio-blocking: the caller writes
//! it to a Unix socket; the server's reader thread reads it and hands it to a worker thread
//! over a channel; the worker writes the answer back; the client's reader thread reads it and
//! hands it to the waiting caller over a channel. Four thread wake-ups per round trip and no
//! work beyond moving ~200 bytes, so a threaded binding's W1 cannot beat this figure.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;

/// The bytes of one round trip (about the size of a W1 request and answer)
const LINE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}
"#;

/// `n` round trips through the four hand-offs
pub(crate) fn round_trips(n: usize) {
    let (client, server) = UnixStream::pair().expect("a socket pair");
    let (to_worker, worker_rx) = mpsc::channel::<Vec<u8>>();
    let (to_caller, caller_rx) = mpsc::channel::<Vec<u8>>();
    let mut server_write = server.try_clone().expect("a clone");
    let server_reader = std::thread::spawn(move || {
        each_line(server, |line, _| to_worker.send(line).is_ok());
    });
    let worker = std::thread::spawn(move || {
        for line in worker_rx {
            if server_write.write_all(&line).is_err() {
                break;
            }
        }
    });
    let client_read = client.try_clone().expect("a clone");
    let client_reader = std::thread::spawn(move || {
        each_line(client_read, |line, _| to_caller.send(line).is_ok());
    });
    let mut client = client;
    for _ in 0..n {
        client.write_all(LINE).expect("the socket is open");
        let answer = caller_rx.recv().expect("an answer");
        std::hint::black_box(answer);
    }
    client
        .shutdown(std::net::Shutdown::Both)
        .expect("a shutdown");
    for t in [server_reader, worker, client_reader] {
        t.join().expect("no panic");
    }
}

/// `n` round trips through two hand-offs, the fewest any client and server on two threads
/// can make: the caller writes the line and reads the answer itself, the server's one thread
/// reads the line and writes it back. No MCP, no channel, no worker.
pub(crate) fn ping_pong(n: usize) {
    let (client, server) = UnixStream::pair().expect("a socket pair");
    let mut server_write = server.try_clone().expect("a clone");
    let echo = std::thread::spawn(move || {
        each_line(server, |line, _| server_write.write_all(&line).is_ok());
    });
    let mut reader = BufReader::new(client.try_clone().expect("a clone"));
    let mut client = client;
    let mut answer = Vec::new();
    for _ in 0..n {
        client.write_all(LINE).expect("the socket is open");
        answer.clear();
        reader.read_until(b'\n', &mut answer).expect("an answer");
        std::hint::black_box(&answer);
    }
    client
        .shutdown(std::net::Shutdown::Both)
        .expect("a shutdown");
    echo.join().expect("no panic");
}

/// `pipes`: the floor of W3: `runs` runs of `n` lines written to a child process's stdin
/// and read back from its stdout (the child is this binary, `echo`: blocking reads and
/// writes, no MCP, no event loop), two process wake-ups per round trip
pub(crate) fn pipes(runs: usize, n: usize) -> Result<Vec<f64>, String> {
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut to_child = child.stdin.take().ok_or("no stdin")?;
    let mut from_child = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut answer = Vec::new();
    let mut failure = None;
    let rates = crate::common::time_runs(runs, n, |n| {
        for _ in 0..n {
            answer.clear();
            let echoed = to_child.write_all(LINE).is_ok()
                && from_child
                    .read_until(b'\n', &mut answer)
                    .is_ok_and(|read| read > 0);
            if !echoed {
                failure = Some("the echo child stopped".to_owned());
                return;
            }
        }
    });
    drop(to_child);
    let _ = child.wait();
    match failure {
        Some(e) => Err(e),
        None => Ok(rates),
    }
}

/// The `pipes` child: echoes stdin to stdout line by line until EOF
pub(crate) fn echo() {
    let mut output = std::io::stdout().lock();
    each_line(std::io::stdin().lock(), |line, _| {
        output
            .write_all(&line)
            .and_then(|()| output.flush())
            .is_ok()
    });
}

/// `fanout`: the floor of a threaded W2: `n` round trips made by 64 caller threads at once,
/// no MCP. Each caller writes its line (tagged with its number) to one Unix socket under a
/// lock and waits on its own channel; the server's one thread echoes lines back in batches;
/// the client's reader thread hands each answer to its caller. At least one thread wake-up
/// per call (the caller's), and no worker pool.
pub(crate) fn fanout(n: usize) {
    use std::io::BufWriter;
    use std::sync::{Arc, Mutex};
    const CALLERS: usize = crate::common::IN_FLIGHT;
    let (client, server) = UnixStream::pair().expect("a socket pair");
    let server_write = server.try_clone().expect("a clone");
    let echo = std::thread::spawn(move || {
        let mut writer = BufWriter::new(server_write);
        // Answers go out together when no more requests wait in the buffer.
        each_line(server, |line, more| {
            writer.write_all(&line).is_ok() && (more || writer.flush().is_ok())
        });
    });
    let mut to_callers = Vec::with_capacity(CALLERS);
    let mut callers_rx = Vec::with_capacity(CALLERS);
    for _ in 0..CALLERS {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        to_callers.push(tx);
        callers_rx.push(rx);
    }
    let client_read = client.try_clone().expect("a clone");
    let client_reader = std::thread::spawn(move || {
        each_line(client_read, |line, _| {
            let caller = line
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0usize, |k, b| k * 10 + usize::from(b - b'0'));
            to_callers[caller % CALLERS].send(line).is_ok()
        });
    });
    let writer = Arc::new(Mutex::new(client));
    std::thread::scope(|s| {
        for (i, rx) in callers_rx.into_iter().enumerate() {
            let writer = Arc::clone(&writer);
            let share = n / CALLERS + usize::from(i < n % CALLERS);
            s.spawn(move || {
                let mut request = format!("{i} ").into_bytes();
                request.extend_from_slice(LINE);
                for _ in 0..share {
                    writer
                        .lock()
                        .expect("no panic")
                        .write_all(&request)
                        .expect("the socket is open");
                    std::hint::black_box(rx.recv().expect("an answer"));
                }
            });
        }
    });
    writer
        .lock()
        .expect("no panic")
        .shutdown(std::net::Shutdown::Both)
        .expect("a shutdown");
    for t in [echo, client_reader] {
        t.join().expect("no panic");
    }
}

/// Reads `reader` line by line until EOF, an error, or `each` returns `false`; `each` gets
/// the line (with its newline) and whether more bytes already wait in the read buffer
fn each_line(reader: impl std::io::Read, mut each: impl FnMut(Vec<u8>, bool) -> bool) {
    let mut reader = BufReader::new(reader);
    loop {
        let mut line = Vec::new();
        if !reader
            .read_until(b'\n', &mut line)
            .is_ok_and(|read| read > 0)
        {
            return;
        }
        let more = !reader.buffer().is_empty();
        if !each(line, more) {
            return;
        }
    }
}
