//! The actor that owns one `Session`: it reads, feeds the core, drains its outputs, writes,
//! and sleeps until the core's next deadline. No lock around the core.

use std::sync::Arc;

use mcp_sansio::InputId;
use mcp_sansio::http::SessionKey;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{InputRequests, InputResponses};
use mcp_sansio::{InboundNotification, Session};
use mcp_sansio_shared::peer;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

pub use mcp_sansio_shared::peer::TaskStatusUpdate;
pub(crate) use mcp_sansio_shared::peer::unix_ms;

/// The tokio runtime as the shared glue (`mcp-sansio-shared`) sees it
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Tokio;

/// Commands from the application's handles to the actor
pub(crate) type Command = peer::Command<Tokio>;
/// Messages from server handler tasks (and client input handlers) to the actor
pub(crate) type HandlerMsg = peer::HandlerMsg<Tokio>;
/// Where handler tasks send their messages
pub(crate) type Handlers = peer::Handlers<Tokio>;
/// The per-`Session` state of an actor
pub(crate) type Peer = peer::Peer<Tokio>;
/// Who waits for a client's handshake
pub(crate) type Ready = peer::Ready<Tokio>;
/// The actor's end of [`Handlers`]
pub(crate) type HandlerRx = mpsc::UnboundedReceiver<(SessionKey, HandlerMsg)>;

/// What the server side does with inbound requests (the shared dispatcher, as an object);
/// public only because the runtime's glue names it
#[doc(hidden)]
#[allow(unreachable_pub)]
pub trait Dispatch: peer::Dispatch<Tokio> {}
impl<T: peer::Dispatch<Tokio>> Dispatch for T {}

impl peer::Runtime for Tokio {
    type Run = AbortHandle;
    type Reply<T: Send + 'static> = oneshot::Sender<T>;
    type Stream<T: Send + 'static> = mpsc::UnboundedSender<T>;
    type HandlerTx = mpsc::UnboundedSender<(SessionKey, HandlerMsg)>;
    type Options = ClientOptions;
    type Dispatch = dyn Dispatch;

    fn now() -> std::time::Instant {
        now()
    }
    fn reply<T: Send + 'static>(tx: oneshot::Sender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn report<T: Send + 'static>(tx: &mpsc::UnboundedSender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn stop(run: AbortHandle) {
        run.abort();
    }
    fn send_handler(tx: &Self::HandlerTx, key: SessionKey, msg: HandlerMsg) -> bool {
        tx.send((key, msg)).is_ok()
    }
    fn notification(options: &ClientOptions, notification: InboundNotification) {
        if let Some(tx) = &options.notifications {
            let _ = tx.send(notification);
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
        tokio::spawn(async move {
            let result = future.await;
            let _ = messages.send(HandlerMsg::Answered { id, result });
        });
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
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Answers the server's input requests (elicitation, sampling, roots) in both eras;
    /// without it they are refused
    pub input: Option<InputHandler>,
    /// Receives the server's notifications (log messages, list changes, resource updates,
    /// subscription traffic); without it they are dropped
    pub notifications: Option<mpsc::UnboundedSender<InboundNotification>>,
    /// Child processes only: receives the server's stderr line by line instead of passing
    /// it through
    pub stderr: Option<mpsc::UnboundedSender<String>>,
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
    pub fn stderr(mut self, sender: mpsc::UnboundedSender<String>) -> Self {
        self.stderr = Some(sender);
        self
    }

    /// With a channel for the server's notifications
    pub fn notifications(mut self, sender: mpsc::UnboundedSender<InboundNotification>) -> Self {
        self.notifications = Some(sender);
        self
    }
}

/// The core's clock as tokio sees it, so paused-time tests drive protocol timeouts
pub(crate) fn now() -> std::time::Instant {
    Instant::now().into_std()
}

/// Runs one connection until it closes
pub(crate) async fn run<R, W>(
    mut session: Session,
    mut reader: R,
    mut writer: W,
    mut commands: mpsc::Receiver<Command>,
    dispatch: Option<Arc<dyn Dispatch>>,
    options: ClientOptions,
    ready: Option<Ready>,
) where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    session.anchor_wall_clock(now(), unix_ms());
    let mut peer = Peer::new(ready);
    let (handlers, mut handler_rx) = Handlers::channel();
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
        tokio::select! {
            read = reader.read(&mut buf), if want_read => match read {
                Ok(0) | Err(_) => {
                    reading = false;
                    session.handle_eof(now());
                }
                Ok(n) => session.handle_bytes(now(), &buf[..n]),
            },
            command = commands.recv(), if commands_open => {
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
            msg = handler_rx.recv() => {
                if let Some((_, msg)) = msg {
                    peer.on_handler(&mut session, msg);
                }
            }
            due = timer.wait(deadline), if armed => {
                if due {
                    session.handle_timeout(now());
                }
            }
        }
    }
    peer.abort_all();
    let _ = writer.shutdown().await;
}

/// One timer for a connection's (or an HTTP actor's) life, moved only when the core's
/// deadline comes sooner (see `mcp_sansio_shared::alarm`)
pub(crate) struct Timer {
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    alarm: mcp_sansio_shared::alarm::Alarm,
}

impl Timer {
    pub(crate) fn new() -> Self {
        Self {
            sleep: Box::pin(tokio::time::sleep_until(Instant::now())),
            alarm: mcp_sansio_shared::alarm::Alarm::default(),
        }
    }

    /// Arms the timer for the core's `deadline` if it must move; `true` when it is armed
    pub(crate) fn arm(&mut self, deadline: Option<std::time::Instant>) -> bool {
        if let Some(at) = self.alarm.rearm(deadline) {
            self.sleep.as_mut().reset(Instant::from_std(at));
        }
        self.alarm.is_armed()
    }

    /// Waits for the armed timer (cancel-safe: dropping the wait keeps the timer); `true`
    /// when the core's `deadline` is due then
    pub(crate) async fn wait(&mut self, deadline: Option<std::time::Instant>) -> bool {
        self.sleep.as_mut().await;
        self.alarm.fired(deadline, now())
    }
}
