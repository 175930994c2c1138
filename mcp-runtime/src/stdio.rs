//! This process's stdin and stdout as pipes an event loop can drive
//!
//! When an MCP client starts a server, the server's stdin and stdout are pipes: a runtime
//! can then read and write them on its event loop, in non-blocking mode, instead of sending
//! every read and write to a blocking thread. A terminal or a file is left to the blocking
//! path (a terminal put in non-blocking mode would stay so for the shell after us).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// A descriptor of stdin, where stdin is a pipe (or FIFO)
pub fn stdin_pipe() -> Option<OwnedFd> {
    pipe(std::io::stdin().as_fd())
}

/// A descriptor of stdout, where stdout is a pipe (or FIFO) that stderr does not write into
/// too: with `2>&1`, a non-blocking stdout would make `eprintln!` meet a full pipe and panic
pub fn stdout_pipe() -> Option<OwnedFd> {
    let stdout = std::io::stdout();
    let shared = same_file(stdout.as_fd(), std::io::stderr().as_fd());
    if shared { None } else { pipe(stdout.as_fd()) }
}

/// A new descriptor of `fd`'s pipe, if it is one
fn pipe(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
    let fd = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(fd);
    let is_pipe = file.metadata().is_ok_and(|m| m.file_type().is_fifo());
    is_pipe.then(|| file.into())
}

/// Whether two descriptors name the same file (or pipe); unknown counts as the same
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    let meta = |fd: BorrowedFd<'_>| {
        let fd = fd.try_clone_to_owned().ok()?;
        std::fs::File::from(fd).metadata().ok()
    };
    match (meta(a), meta(b)) {
        (Some(a), Some(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => true,
    }
}
