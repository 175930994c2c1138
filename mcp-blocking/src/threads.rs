//! Plain threads as the runtime layer sees them: the [`Blocking`] plumbing of the shared
//! per-session [`Peer`] (what the application and the handlers asked for, mapped onto the
//! core's calls, in `mcp-sansio-runtime`), where handler messages and commands go
//! ([`Route`]: an HTTP actor's inbox, or a byte-stream connection itself), the inbox an HTTP
//! actor waits on ([`Input`], [`recv_until`]), and the client's [`ClientOptions`]
//!
//! A leaf of the crate: the byte-stream driver, the HTTP actors, the client and the server
//! all build on it.

use std::sync::mpsc;
use std::sync::{Arc, Weak};
use std::thread;
use std::time::Instant;

#[cfg(feature = "http")]
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use mcp_sansio::http::SessionKey;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{InputRequests, InputResponses};
use mcp_sansio::{InboundRequest, ServerSession};
#[cfg(feature = "http")]
use mcp_sansio_runtime::http::{Channels, Piece};
use mcp_sansio_runtime::peer;

use crate::cancel::CancellationToken;

pub use mcp_sansio_runtime::peer::TaskStatusUpdate;
pub(crate) use mcp_sansio_runtime::peer::{Outcome, unix_ms};

/// Plain threads as the runtime layer (`mcp-sansio-runtime`) sees them: a handler run is its
/// cancellation token, replies and reports go through `std` channels, handler messages
/// take a [`Route`], and a client's input handler runs on a thread
///
/// Public but unnamed outside the crate: the binding's [`ClientOptions`] names it.
#[derive(Debug, Clone, Copy)]
pub struct Blocking;

/// Commands from the application's handles to the driver
pub(crate) type Command = peer::Command<Blocking>;
/// Messages from server handler threads (and client input handlers) to the driver
pub(crate) type HandlerMsg = peer::HandlerMsg<Blocking>;
/// Where handler threads send their messages, tagged with their session
pub(crate) type Handlers = peer::Handlers<Blocking>;
/// The per-`Session` state of a driver: stdio and HTTP drivers handle events alike through it
pub(crate) type Peer = peer::Peer<Blocking>;
/// Who waits for a client's handshake
pub(crate) type Ready = peer::Ready<Blocking>;
/// What a connection runs the application with (see [`app`])
pub(crate) type App = peer::App<Blocking>;

/// What the server side does with inbound requests (the server's dispatcher, as an object)
pub(crate) trait Dispatch: Send + Sync + 'static {
    /// Handles one request; returns the handler's run if it started one
    fn dispatch(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
        handlers: &Handlers,
    ) -> Option<CancellationToken>;
}

impl peer::Plumbing for Blocking {
    type Run = CancellationToken;
    type Reply<T: Send + 'static> = crate::one::OneSender<T>;
    type Stream<T: Send + 'static> = mpsc::Sender<T>;
    type HandlerTx = Route;

    fn now() -> Instant {
        now()
    }
    fn reply<T: Send + 'static>(tx: crate::one::OneSender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn report<T: Send + 'static>(tx: &mpsc::Sender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn stop(run: CancellationToken) {
        run.cancel();
    }
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    fn send_handler(tx: &Route, key: SessionKey, msg: HandlerMsg) -> bool {
        match &tx.0 {
            #[cfg(feature = "http")]
            To::Inbox(tx) => tx.send(Input::Handler(key, msg)).is_ok(),
            // A byte-stream connection has one session
            To::Direct(sink) => sink.upgrade().is_some_and(|sink| sink.handler(msg).is_ok()),
        }
    }
}

/// What a connection runs the application with: `dispatch` serves requests (servers), the
/// client's `options` take notifications and input requests (the input handler on a thread
/// of its own: the application may take its time, a user answering)
pub(crate) fn app(dispatch: Option<Arc<dyn Dispatch>>, options: &ClientOptions) -> App {
    let mut app = options.app_with(|handler, id, requests, handlers| {
        let handler = Arc::clone(handler);
        let messages = handlers.clone();
        thread::Builder::new()
            .name("mcp-input".into())
            .spawn(move || {
                let result = handler(requests);
                let _ = messages.send(HandlerMsg::Answered { id, result });
            })
            .map(|_| ())
            .map_err(|_| ErrorObject::internal_error("no thread for the input handler"))
    });
    app.dispatch = dispatch.map(|d| -> peer::Dispatch<Blocking> {
        Box::new(move |session, request, handlers| d.dispatch(session, request, handlers))
    });
    app
}

/// Everything an HTTP actor waits for, on one channel
#[cfg(feature = "http")]
pub(crate) enum Input {
    Command(Command),
    Handler(SessionKey, HandlerMsg),
    /// HTTP server: from the connection threads
    Http(ToActor),
    /// HTTP client: from the request threads
    Net(FromNet),
}

/// From the request threads to the HTTP client's actor
#[cfg(feature = "http")]
pub(crate) type FromNet = mcp_sansio_runtime::http::FromNet<Vec<u8>>;

/// The HTTP server actor's channels: crossbeam's
#[cfg(feature = "http")]
pub(crate) struct Chans;

#[cfg(feature = "http")]
impl Channels for Chans {
    type Body = Vec<u8>;
    type Reply = Sender<Answer>;
    type Frames = Sender<Piece>;
    type FramesRx = Receiver<Piece>;

    fn reply(reply: Self::Reply, answer: Answer) -> bool {
        reply.send(answer).is_ok()
    }

    fn frames() -> (Self::Frames, Self::FramesRx) {
        crossbeam_channel::unbounded()
    }

    fn send(frames: &Self::Frames, piece: Piece) {
        let _ = frames.send(piece);
    }
}

/// From the connection threads (and an endpoint's callers) to the HTTP server's actor
#[cfg(feature = "http")]
pub(crate) type ToActor = mcp_sansio_runtime::http::ToActor<Chans>;
/// The HTTP server actor's answer to one request
#[cfg(feature = "http")]
pub(crate) type Answer = mcp_sansio_runtime::http::Answer<Chans>;

pub use mcp_sansio::server::AskFailure;

/// The client application's answer to the server's input requests (elicitation, sampling,
/// roots); it runs on a thread of its own, so it may block (on a user, say)
pub type InputHandler =
    Arc<dyn Fn(InputRequests) -> Result<InputResponses, ErrorObject> + Send + Sync>;

/// What a client connection does with what the server sends besides responses: the
/// runtime layer's options with this binding's types (a plain-function [`InputHandler`],
/// `std` channels, the blocking OAuth options); its fields and methods are listed below
pub type ClientOptions = mcp_sansio_runtime::client::ClientOptions<Blocking>;

impl mcp_sansio_runtime::client::ClientTypes for Blocking {
    type InputHandler = InputHandler;
    #[cfg(feature = "auth")]
    type Auth = mcp_sansio_runtime::auth::blocking::OAuthOptions;
    #[cfg(not(feature = "auth"))]
    type Auth = NoAuth;
    type Middleware = dyn crate::middleware::ClientMiddleware;
}

/// Without the `auth` feature there are no OAuth options to give
#[cfg(not(feature = "auth"))]
#[derive(Debug, Clone, Copy)]
pub enum NoAuth {}

/// How often a wait for a response head asks whether the client went away
#[cfg(feature = "http")]
pub(crate) const TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// The core's clock
pub(crate) fn now() -> Instant {
    Instant::now()
}

/// Waits for the next input until `deadline`; `None` when the deadline passed first
#[cfg(feature = "http")]
pub(crate) fn recv_until(
    inbox: &Receiver<Input>,
    deadline: Option<Instant>,
) -> Result<Option<Input>, ()> {
    let received = match deadline {
        Some(d) => inbox.recv_deadline(d),
        None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(input) => Ok(Some(input)),
        Err(RecvTimeoutError::Timeout) => Ok(None),
        Err(RecvTimeoutError::Disconnected) => Err(()),
    }
}

/// Where handler threads (and a client's handles) send their messages: an HTTP actor's
/// inbox, or a byte-stream connection itself, which takes them at once on the sending
/// thread (no hand-off)
///
/// Public but unnamed outside the crate, as [`Blocking`]'s handler channel.
#[derive(Clone)]
pub struct Route(To);

#[derive(Clone)]
enum To {
    #[cfg(feature = "http")]
    Inbox(Sender<Input>),
    /// Gone once the connection's driver has ended
    Direct(Weak<dyn Sink>),
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route").finish_non_exhaustive()
    }
}

impl Route {
    /// To an HTTP actor's inbox
    #[cfg(feature = "http")]
    pub(crate) fn inbox(tx: Sender<Input>) -> Self {
        Self(To::Inbox(tx))
    }

    /// Straight to a byte-stream connection, on the sending thread; gone once the
    /// connection's driver has ended
    pub(crate) fn direct(sink: Weak<dyn Sink>) -> Self {
        Self(To::Direct(sink))
    }

    /// Sends an application's command to the driver; `Err` (and the command dropped) once
    /// it is gone
    pub(crate) fn command(&self, command: Command) -> Result<(), ()> {
        match &self.0 {
            #[cfg(feature = "http")]
            To::Inbox(tx) => tx.send(Input::Command(command)).map_err(|_| ()),
            To::Direct(sink) => sink.upgrade().ok_or(())?.command(command),
        }
    }
}

/// What takes messages directly on the sending thread: a byte-stream connection
pub(crate) trait Sink: Send + Sync {
    /// A handler's message; `Err` once the connection is gone
    fn handler(&self, msg: HandlerMsg) -> Result<(), ()>;
    /// An application's command; `Err` (and the command dropped) once the connection is gone
    fn command(&self, command: Command) -> Result<(), ()>;
}
