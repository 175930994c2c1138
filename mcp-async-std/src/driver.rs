//! The actor that owns one `Session`: it reads, feeds the core, drains its outputs, writes,
//! and sleeps until the core's next deadline. No lock around the core.
//!
//! Handler tasks run on smol's global executor ([`smol::spawn`]); dropping a handler's
//! [`Task`] cancels it, which is how a cancelled request stops its handler.

use std::sync::Arc;
use std::time::Instant;

use async_channel::{Receiver, Sender};
use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, FutureExt};
use mcp_sansio::http::SessionKey;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{InputRequests, InputResponses};
use mcp_sansio::{InboundNotification, InputId, Session};
use mcp_sansio_shared::peer;
use smol::Task;

pub use mcp_sansio_shared::peer::TaskStatusUpdate;
pub(crate) use mcp_sansio_shared::peer::unix_ms;

/// async-std and smol as the shared glue (`mcp-sansio-shared`) sees them
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct AsyncStd;

/// Commands from the application's handles to the actor
pub(crate) type Command = peer::Command<AsyncStd>;
/// Messages from server handler tasks (and client input handlers) to the actor
pub(crate) type HandlerMsg = peer::HandlerMsg<AsyncStd>;
/// Where handler tasks send their messages
pub(crate) type Handlers = peer::Handlers<AsyncStd>;
/// The per-`Session` state of an actor
pub(crate) type Peer = peer::Peer<AsyncStd>;
/// Who waits for a client's handshake
pub(crate) type Ready = peer::Ready<AsyncStd>;
/// The actor's end of [`Handlers`]
pub(crate) type HandlerRx = Receiver<(SessionKey, HandlerMsg)>;

/// What the server side does with inbound requests (the shared dispatcher, as an object);
/// public only because the runtime's glue names it
#[doc(hidden)]
#[allow(unreachable_pub)]
pub trait Dispatch: peer::Dispatch<AsyncStd> {}
impl<T: peer::Dispatch<AsyncStd>> Dispatch for T {}

/// Handler tasks run on smol's global executor; dropping a handler's [`Task`] cancels it.
/// Every channel is an `async-channel`, sent to without waiting.
impl peer::Runtime for AsyncStd {
    type Run = Task<()>;
    type Reply<T: Send + 'static> = Sender<T>;
    type Stream<T: Send + 'static> = Sender<T>;
    type HandlerTx = Sender<(SessionKey, HandlerMsg)>;
    type Options = ClientOptions;
    type Dispatch = dyn Dispatch;

    fn now() -> Instant {
        now()
    }
    fn reply<T: Send + 'static>(tx: Sender<T>, value: T) {
        let _ = tx.try_send(value);
    }
    fn report<T: Send + 'static>(tx: &Sender<T>, value: T) {
        let _ = tx.try_send(value);
    }
    fn stop(run: Task<()>) {
        drop(run);
    }
    fn send_handler(tx: &Self::HandlerTx, key: SessionKey, msg: HandlerMsg) -> bool {
        tx.try_send((key, msg)).is_ok()
    }
    fn notification(options: &ClientOptions, notification: InboundNotification) {
        if let Some(tx) = &options.notifications {
            let _ = tx.try_send(notification);
        }
    }
    fn input(
        options: &ClientOptions,
        id: InputId,
        requests: InputRequests,
        handlers: &Handlers,
    ) -> Result<(), ErrorObject> {
        let Some(handler) = &options.input else {
            return Err(peer::no_input_handler());
        };
        let future = handler(requests);
        let messages = handlers.clone();
        smol::spawn(async move {
            let result = future.await;
            let _ = messages.send(HandlerMsg::Answered { id, result });
        })
        .detach();
        Ok(())
    }
}

pub use mcp_sansio::server::AskFailure;

/// The client application's answer to the server's input requests
pub type InputHandler = Arc<
    dyn Fn(
            InputRequests,
        )
            -> std::pin::Pin<Box<dyn Future<Output = Result<InputResponses, ErrorObject>> + Send>>
        + Send
        + Sync,
>;

/// What a client connection does with what the server sends besides responses
///
/// The channels are `async-channel`'s (`async_channel::unbounded()`, the same type as
/// `smol::channel` and `async_std::channel`). The connection never waits on them: a message
/// that does not fit a full bounded channel is dropped, so prefer unbounded ones.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Answers the server's input requests (elicitation, sampling, roots) in both eras;
    /// without it they are refused
    pub input: Option<InputHandler>,
    /// Receives the server's notifications (log messages, list changes, resource updates,
    /// subscription traffic); without it they are dropped
    pub notifications: Option<Sender<InboundNotification>>,
    /// Child processes only: receives the server's stderr line by line instead of passing
    /// it through
    pub stderr: Option<Sender<String>>,
    /// HTTP only: authorize with OAuth when the server challenges (401, or 403
    /// `insufficient_scope`)
    #[cfg(feature = "auth")]
    pub auth: Option<crate::auth::OAuthOptions>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("ClientOptions");
        f.field("input", &self.input.is_some())
            .field("notifications", &self.notifications.is_some())
            .field("stderr", &self.stderr.is_some());
        #[cfg(feature = "auth")]
        f.field("auth", &self.auth.is_some());
        f.finish()
    }
}

impl ClientOptions {
    /// With an input handler
    pub fn input(mut self, handler: InputHandler) -> Self {
        self.input = Some(handler);
        self
    }

    /// Authorizes HTTP connections with OAuth
    #[cfg(feature = "auth")]
    pub fn auth(mut self, auth: crate::auth::OAuthOptions) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Captures a child server's stderr, line by line
    pub fn stderr(mut self, sender: Sender<String>) -> Self {
        self.stderr = Some(sender);
        self
    }

    /// With a channel for the server's notifications
    pub fn notifications(mut self, sender: Sender<InboundNotification>) -> Self {
        self.notifications = Some(sender);
        self
    }
}

/// The core's clock: the monotonic clock that `async_io::Timer` sleeps on
pub(crate) fn now() -> Instant {
    Instant::now()
}

/// What woke the connection actor
enum Wake {
    Read(std::io::Result<usize>),
    Command(Option<Command>),
    Handler(Option<(SessionKey, HandlerMsg)>),
    /// The timer fired: whether the core's deadline is due
    Timeout(bool),
}

/// Runs one connection until it closes
pub(crate) async fn run<R, W>(
    mut session: Session,
    mut reader: R,
    mut writer: W,
    commands: Receiver<Command>,
    dispatch: Option<Arc<dyn Dispatch>>,
    options: ClientOptions,
    ready: Option<Ready>,
) where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    session.anchor_wall_clock(now(), unix_ms());
    let mut peer = Peer::new(ready);
    let (handlers, handler_rx) = Handlers::channel();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::with_capacity(64 * 1024);
    let mut commands_open = true;
    let mut reading = true;
    let mut timer = Timer::new();
    loop {
        // Drain: write everything, then deliver every event.
        loop {
            while session.poll_transmit(&mut out).is_some() {}
            if !out.is_empty() {
                if writer.write_all(&out).await.is_err() || writer.flush().await.is_err() {
                    session.close(now());
                }
                out.clear();
            }
            let Some(event) = session.poll_event() else {
                break;
            };
            peer.on_event(&mut session, event, dispatch.as_ref(), &options, &handlers);
        }
        if session.is_closed() {
            break;
        }
        let deadline = session.poll_timeout();
        let armed = timer.arm(deadline);
        let want_read = reading && session.wants_read();
        // Whichever is ready first (a fair race); the others are dropped, and reading,
        // receiving and sleeping lose nothing when dropped.
        let wake = {
            let read = async {
                if want_read {
                    Wake::Read(reader.read(&mut buf).await)
                } else {
                    std::future::pending().await
                }
            };
            let command = async {
                if commands_open {
                    Wake::Command(commands.recv().await.ok())
                } else {
                    std::future::pending().await
                }
            };
            let handler = async { Wake::Handler(handler_rx.recv().await.ok()) };
            let timeout = async {
                if armed {
                    Wake::Timeout(timer.wait(deadline).await)
                } else {
                    std::future::pending().await
                }
            };
            read.race(command).race(handler).race(timeout).await
        };
        match wake {
            Wake::Read(Ok(0) | Err(_)) => {
                reading = false;
                session.handle_eof(now());
            }
            Wake::Read(Ok(n)) => session.handle_bytes(now(), &buf[..n]),
            Wake::Command(command) => {
                let close = match command {
                    Some(command) => peer.on_command(&mut session, command),
                    None => true,
                };
                if close {
                    commands_open = false;
                    if dispatch.is_none() {
                        session.close(now());
                    }
                }
            }
            Wake::Handler(msg) => {
                if let Some((_, msg)) = msg {
                    peer.on_handler(&mut session, msg);
                }
            }
            Wake::Timeout(due) => {
                if due {
                    session.handle_timeout(now());
                }
            }
        }
    }
    peer.abort_all();
    close_and_drain(&commands);
    close_and_drain(&handler_rx);
    let _ = writer.close().await;
}

/// Closes a channel and drops what is queued in it: unlike tokio's, an async-channel keeps
/// its queue while any sender lives, so a reply channel inside a queued message would
/// never close and its caller would wait forever
pub(crate) fn close_and_drain<T>(rx: &Receiver<T>) {
    rx.close();
    while rx.try_recv().is_ok() {}
}

/// One timer for a connection's (or an HTTP actor's) life, moved only when the core's
/// deadline comes sooner (see `mcp_sansio_shared::alarm`)
pub(crate) struct Timer {
    timer: async_io::Timer,
    alarm: mcp_sansio_shared::alarm::Alarm,
}

impl Timer {
    pub(crate) fn new() -> Self {
        Self {
            timer: async_io::Timer::never(),
            alarm: mcp_sansio_shared::alarm::Alarm::default(),
        }
    }

    /// Arms the timer for the core's `deadline` if it must move; `true` when it is armed
    pub(crate) fn arm(&mut self, deadline: Option<Instant>) -> bool {
        if let Some(at) = self.alarm.rearm(deadline) {
            self.timer.set_at(at);
        }
        self.alarm.is_armed()
    }

    /// Waits for the armed timer (dropping the wait keeps the timer); `true` when the core's
    /// `deadline` is due then
    pub(crate) async fn wait(&mut self, deadline: Option<Instant>) -> bool {
        (&mut self.timer).await;
        self.alarm.fired(deadline, now())
    }
}

/// One-shot replies: an `async-channel` with room for one message
pub(crate) mod oneshot {
    pub(crate) use async_channel::{Receiver, Sender};

    /// A channel for one reply
    pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
        async_channel::bounded(1)
    }
}
