//! The async bindings' Streamable HTTP server actor: one task owns the core's `HttpServer`
//! rules and every session behind them (in a [`ServerFront`]), fed by the binding's
//! connection tasks
//!
//! Each connection task reads a request (the body up to the core's `max_body_size`) and
//! hands it to the actor ([`ToActor`]) with a channel for the [`Answer`]; an open answer's
//! [`Piece`]s follow on a channel of their own. The binding keeps the
//! sockets and the HTTP/1.1 framing (hyper, or its own).

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures_lite::FutureExt;
use mcp_sansio::http::{HttpConfig, SessionKey};

use crate::alarm::Timer;
use crate::chan::{self, Receiver, Sender};
use crate::http::{Channels, Piece, ServerFront};
use crate::peer::{HandlerMsg, HandlerRx, Handlers, Peer, unix_ms};
use crate::push::Registration;
use crate::runtime::Runtime;
use crate::server::ServerCore;

/// The kernel's channels between the connections and the actor; `B` is a request body as
/// the binding's HTTP stack collected it
#[derive(Debug)]
pub struct AsyncChannels<B>(PhantomData<fn() -> B>);

impl<B: AsRef<[u8]> + 'static> Channels for AsyncChannels<B> {
    type Body = B;
    type Reply = chan::OneSender<Answer<B>>;
    type Frames = Sender<Piece>;
    type FramesRx = Receiver<Piece>;

    fn reply(reply: Self::Reply, answer: Answer<B>) -> bool {
        reply.send(answer).is_ok()
    }

    fn frames() -> (Self::Frames, Self::FramesRx) {
        async_channel::unbounded()
    }

    fn send(frames: &Self::Frames, piece: Piece) {
        let _ = frames.try_send(piece);
    }
}

/// From a connection to the actor
pub type ToActor<B> = crate::http::ToActor<AsyncChannels<B>>;
/// The actor's answer to one request
pub type Answer<B> = crate::http::Answer<AsyncChannels<B>>;

/// A server's actor, ready to run: the connections send to [`to_actor`](Self::to_actor),
/// a message on (or the closing of) [`stop`](Self::stop) ends it
pub struct Actor<B: AsRef<[u8]> + 'static> {
    /// Where the connections send their requests
    pub to_actor: Sender<ToActor<B>>,
    /// Ends the actor (the server shuts down)
    pub stop: Sender<()>,
    /// The largest request body the connections read (the core's `max_body_size`)
    pub body_limit: usize,
    /// The rules the 2026 fast path shares with the actor's core server
    pub lanes: mcp_sansio::http::Lanes,
    /// The count of the session the 2026 requests share (the actor's and the fast path's)
    pub stateless: Arc<std::sync::OnceLock<crate::meter::Open>>,
    /// The actor itself: run it on a task of its own
    pub run: std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
}

impl<B: AsRef<[u8]> + 'static> std::fmt::Debug for Actor<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Actor").finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]> + Send + 'static> Actor<B> {
    /// The actor serving `server`'s sessions under the HTTP rules of `config`
    pub fn new<R: Runtime>(config: HttpConfig, server: &ServerCore<R>) -> Self {
        let (to_actor, conns) = async_channel::unbounded();
        let (handlers, handler_rx) = Handlers::<R>::channel();
        let (stop, stopped) = async_channel::bounded(1);
        // In the server's hub before the tools are read, so no tool change is missed.
        let pushes = handlers.clone();
        let pushes_for_store = handlers.clone();
        let registration = server
            .live()
            .hub()
            .register(move |push| pushes.send(HandlerMsg::Push(push)).is_ok());
        let tools = server.live().tools();
        let stateless = Arc::new(std::sync::OnceLock::new());
        let app = crate::http::PeerApp {
            app: server.app(),
            handlers,
            stateless: Arc::clone(&stateless),
        };
        let body_limit = config.max_body_size;
        let clock = (R::now(), unix_ms());
        let mut front = ServerFront::new(config, Arc::clone(&server.config), &tools, app, clock);
        front.set_access(server.live().access());
        front.share_through(server.live().store(), pushes_for_store);
        let lanes = front.lanes();
        Self {
            to_actor,
            stop,
            body_limit,
            lanes,
            stateless,
            run: Box::pin(run(front, conns, handler_rx, stopped, registration)),
        }
    }
}

/// What woke the actor
enum Wake<R: Runtime, B: AsRef<[u8]> + 'static> {
    Conn(Option<ToActor<B>>),
    Handler(Option<(SessionKey, HandlerMsg<R>)>),
    /// The timer fired: whether the core's deadline is due
    Timeout(bool),
    Stop,
}

async fn run<R: Runtime, B: AsRef<[u8]> + Send + 'static>(
    mut front: ServerFront<AsyncChannels<B>, Peer<R>>,
    conns: Receiver<ToActor<B>>,
    mut handler_rx: HandlerRx<R>,
    stop: Receiver<()>,
    registration: Registration,
) {
    let mut timer = Timer::<R>::default();
    loop {
        front.pump(R::now());
        let deadline = front.poll_timeout();
        let armed = timer.arm(deadline);
        let wake = async { Wake::Conn(conns.recv().await.ok()) }
            .race(async { Wake::Handler(chan::next(&mut handler_rx).await) })
            .race(async {
                if armed {
                    Wake::Timeout(timer.wait(deadline).await)
                } else {
                    std::future::pending().await
                }
            })
            .race(async {
                let _ = stop.recv().await;
                Wake::Stop
            })
            .await;
        match wake {
            Wake::Conn(Some(msg)) => {
                // What is queued first (a change the server pushed before this request
                // came, a tool added, say) reaches the rules first.
                while let Ok((key, msg)) = handler_rx.try_recv() {
                    front.on_handler(key, msg);
                }
                front.on_conn(R::now(), msg);
            }
            Wake::Conn(None) | Wake::Stop => break,
            Wake::Handler(Some((key, msg))) => front.on_handler(key, msg),
            Wake::Handler(None) => {}
            Wake::Timeout(due) => {
                if due {
                    front.handle_timeout(R::now());
                }
            }
        }
    }
    // Shutting down: every open response ends (its channel closes), handlers stop, and
    // requests still queued get their answer channel closed (503).
    chan::close_and_drain(&conns);
    drop(registration);
    chan::close_queue(&mut handler_rx);
    front.end_all();
}
