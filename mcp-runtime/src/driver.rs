//! The async bindings' actor that owns one `Session` over a byte stream: it reads, feeds the
//! core, drains its outputs, writes, and sleeps until the core's next deadline. No lock
//! around the core.
//!
//! The stream is any `futures-io` reader and writer (the tokio binding adapts tokio's); the
//! tasks and the timer are the binding's [`Runtime`]'s.

use std::pin::Pin;
use std::task::Poll;

/// The byte streams the actor drives: `futures-io`'s
pub use futures_lite::{AsyncRead, AsyncWrite};
use futures_lite::{AsyncWriteExt, Stream};
use mcp_sansio::http::SessionKey;
use mcp_sansio::{ServerSession, Session};
use tracing::Instrument;

use crate::alarm::Timer;
use crate::chan::{self, QueueReceiver};
use crate::client::{Client, ClientOptions, ConnectError};
use crate::peer::{App, Command, HandlerMsg, Handlers, Peer, Ready, Side, unix_ms};
use crate::runtime::Runtime;
use crate::server::ServerCore;

/// Connects over a reader and a writer, with `options`, and waits for the handshake or
/// discovery (the bindings' `Client::connect_with`)
///
/// # Errors
/// [`ConnectError::Handshake`] when the server refuses or speaks no common version.
pub async fn connect<R, I, O>(
    reader: I,
    writer: O,
    config: mcp_sansio::ClientConfig,
    options: &ClientOptions<R>,
) -> Result<Client<R>, ConnectError>
where
    R: Runtime,
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let app = options.app();
    let config = crate::client::declare_input(config, options.input.is_some());
    // The connection's span is a child of the caller's.
    let span = crate::trace::connection("client");
    Client::start_actor(config, move |session, commands, ready| {
        run::<R, _, I, O>(session, reader, writer, commands, app, Some(ready), None)
            .instrument(span)
    })
    .await
    .map(|client| client.with_options(options))
}

/// Serves one connection of `server` until the client closes it (the bindings'
/// `Server::serve`); the connection is in the server's hub meanwhile, so what the server
/// pushes reaches it
pub async fn serve<R, I, O>(server: &ServerCore<R>, reader: I, writer: O)
where
    R: Runtime,
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    // A byte stream's tasks have one client: not shared.
    let session = ServerSession::new(
        std::sync::Arc::clone(server.live().local_config()),
        R::now(),
    );
    let (_keep, commands) = chan::queue();
    let hub = Some(server.live().hub());
    run::<R, _, I, O>(session, reader, writer, commands, server.app(), None, hub)
        .instrument(crate::trace::connection("server"))
        .await;
}

/// Connects a client to `server` in memory, with `options`, and waits for the handshake or
/// discovery (the async bindings' `Client::in_memory_with`)
///
/// The server's side runs on a task of its own (the runtime's `spawn`) over the other end of
/// an in-memory [`connection`](crate::memory::connection): the same actor, core and bytes as
/// over a socket, with no socket. It ends when the client closes (its last handle goes).
///
/// # Errors
/// [`ConnectError::Handshake`] when the server refuses or speaks no common version (a client
/// configured for an era the server does not serve).
pub async fn in_memory<R: Runtime>(
    server: &ServerCore<R>,
    config: mcp_sansio::ClientConfig,
    options: &ClientOptions<R>,
) -> Result<Client<R>, ConnectError> {
    let ((client_reads, client_writes), (server_reads, server_writes)) =
        crate::memory::connection();
    let server = server.clone();
    R::spawn(async move { serve(&server, server_reads, server_writes).await });
    connect(client_reads, client_writes, config, options).await
}

/// What woke the connection actor
enum Wake<R: Runtime> {
    Read(std::io::Result<usize>),
    Command(Option<Command<R>>),
    Handler(Option<(SessionKey, HandlerMsg<R>)>),
    /// The timer fired: whether the core's deadline is due
    Timeout(bool),
}

/// The sources an actor waits on: reading, commands, handler messages, the timer
const SOURCES: usize = 4;

/// Commands and handler answers taken without waiting after each wake of the loop: enough
/// to batch a burst into one write, few enough that reading and timers are not starved
const DRAIN_BUDGET: usize = 64;

/// Runs one connection until it closes; a server's connection is in `hub` meanwhile
async fn run<R, S, I, O>(
    mut session: Session<S>,
    mut reader: I,
    mut writer: O,
    mut commands: QueueReceiver<Command<R>>,
    app: App<R>,
    ready: Option<Ready<R>>,
    hub: Option<&std::sync::Arc<crate::push::Hub>>,
) where
    R: Runtime,
    S: Side,
    I: AsyncRead + Unpin + Send,
    O: AsyncWrite + Unpin + Send,
{
    session.anchor_wall_clock(R::now(), unix_ms());
    let serving = app.dispatch.is_some();
    let mut peer = Peer::new(ready);
    let (handlers, handler_rx) = Handlers::<R>::channel();
    let mut handler_rx = handler_rx;
    // What the server pushes comes in as a handler message (until the connection ends).
    let _registration = hub.map(|hub| {
        let pushes = handlers.clone();
        hub.register(move |push| pushes.send(HandlerMsg::Push(push)).is_ok())
    });
    let role = if serving { "server" } else { "client" };
    let _open = crate::meter::Open::connection(role, "stream");
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::with_capacity(64 * 1024);
    let mut commands_open = true;
    let mut reading = true;
    let mut timer = Timer::<R>::default();
    // Handler answers taken in a row without racing (see below), when a handler may answer
    // before its run is spawned
    let at_once = R::runs_first_step_at_once();
    let mut quick = 0;
    // The source the next wait polls first
    let mut turn = 0;
    loop {
        // Drain: write everything, then deliver every event.
        loop {
            while session.poll_transmit(&mut out).is_some() {}
            if !out.is_empty() {
                let written = match writer.write_all(&out).await {
                    Ok(()) => writer.flush().await,
                    Err(e) => Err(e),
                };
                match written {
                    Ok(()) => crate::meter::sent("stream", out.len()),
                    Err(e) => {
                        let why = format!("writing to the connection failed: {e}");
                        session.handle_transport_error(R::now(), why);
                    }
                }
                out.clear();
            }
            let Some(event) = session.poll_event() else {
                break;
            };
            S::on_event(&mut peer, &mut session, event, &app, &handlers);
        }
        if session.is_closed() {
            break;
        }
        // A handler that finished in its first step (a runtime may run it at once, where
        // this loop is: `Runtime::runs_first_step_at_once`) has answered already: take that
        // without a round of the race below, a few times in a row at most, so reading and
        // timers keep their turn.
        if at_once
            && quick < DRAIN_BUDGET
            && let Ok((_, msg)) = handler_rx.try_recv()
        {
            quick += 1;
            S::on_handler(&mut peer, &mut session, msg);
            continue;
        }
        quick = 0;
        let deadline = session.poll_timeout();
        let armed = timer.arm(deadline);
        let want_read = reading && session.wants_read();
        // Whichever is ready first, each source first in turn (fair); polling a source that
        // is not ready loses nothing.
        let first = turn;
        turn = (turn + 1) % SOURCES;
        let wake = std::future::poll_fn(|cx| {
            for k in 0..SOURCES {
                let ready = match (first + k) % SOURCES {
                    0 if want_read => Pin::new(&mut reader)
                        .poll_read(cx, &mut buf)
                        .map(Wake::Read),
                    1 if commands_open => Pin::new(&mut commands).poll_next(cx).map(Wake::Command),
                    2 => Pin::new(&mut handler_rx).poll_next(cx).map(Wake::Handler),
                    3 if armed => timer.poll_wait(cx, deadline).map(Wake::Timeout),
                    _ => Poll::Pending,
                };
                if ready.is_ready() {
                    return ready;
                }
            }
            Poll::Pending
        })
        .await;
        match wake {
            Wake::Read(Ok(0)) => {
                reading = false;
                session.handle_eof(R::now());
            }
            Wake::Read(Err(e)) => {
                reading = false;
                let why = format!("reading from the connection failed: {e}");
                session.handle_transport_error(R::now(), why);
            }
            Wake::Read(Ok(n)) => {
                crate::meter::received("stream", n);
                session.handle_bytes(R::now(), &buf[..n]);
                peer.took_input(&session);
            }
            Wake::Command(command) => {
                let close = match command {
                    Some(command) => peer.on_command(&mut session, command),
                    None => true,
                };
                if close {
                    commands_open = false;
                    if !serving {
                        session.close(R::now());
                    }
                }
            }
            Wake::Handler(msg) => {
                if let Some((_, msg)) = msg {
                    S::on_handler(&mut peer, &mut session, msg);
                }
            }
            Wake::Timeout(due) => {
                if due {
                    session.handle_timeout(R::now());
                }
            }
        }
        // Take what else already waits, up to a budget, before writing: many callers'
        // commands and many handlers' answers then leave in one write, not one each.
        for _ in 0..DRAIN_BUDGET {
            if commands_open && let Ok(command) = commands.try_recv() {
                if peer.on_command(&mut session, command) {
                    commands_open = false;
                    if !serving {
                        session.close(R::now());
                    }
                }
            } else if let Ok((_, msg)) = handler_rx.try_recv() {
                S::on_handler(&mut peer, &mut session, msg);
            } else {
                break;
            }
        }
    }
    peer.abort_all();
    chan::close_queue(&mut commands);
    chan::close_queue(&mut handler_rx);
    let _ = writer.close().await;
}
