//! The async bindings' client over Streamable HTTP: one actor owns the client `Session` and
//! its [`ClientTransport`] (in a [`ClientFront`]); the binding's [`Requests`] carry each
//! request the transport plans
//!
//! Every protocol decision is the transport's; the binding performs HTTP and reports what
//! came back as [`FromNet`] messages on the actor's channel.

use std::time::Duration;

use futures_lite::FutureExt;
use mcp_sansio::ClientConfig;
use mcp_sansio::http::ClientTransport;

use crate::alarm::Timer;
use crate::chan::{self, Receiver, Sender};
use crate::client::{Client, ClientOptions, ConnectError};
use crate::http::{ClientFront, FromNet, Requests};
use crate::peer::{App, Command, HandlerMsg, HandlerRx, Handlers, Peer};
use crate::runtime::Runtime;

/// How long closing waits for the server to answer DELETE
const DELETE_WAIT: Duration = Duration::from_secs(2);

/// The channel on which a binding's requests report to the actor, and its actor's end
pub fn net_channel<D>() -> (Sender<FromNet<D>>, Receiver<FromNet<D>>) {
    async_channel::unbounded()
}

/// Connects over Streamable HTTP and waits for the handshake (2025) or discovery (2026): the
/// bindings' `Client::connect_http`, once they have made their `requests` (whose reports
/// go to `from_net`'s sender) and the `transport` (with OAuth, if the options ask for it)
///
/// # Errors
/// [`ConnectError::Handshake`] when the server refuses, is unreachable or speaks no common
/// version.
pub async fn connect<R, Q, D>(
    config: ClientConfig,
    transport: ClientTransport,
    requests: Q,
    from_net: Receiver<FromNet<D>>,
    options: &ClientOptions<R>,
) -> Result<Client<R>, ConnectError>
where
    R: Runtime,
    Q: Requests + Send + 'static,
    Q::Task: Send,
    D: AsRef<[u8]> + Send + 'static,
{
    let transport = transport
        .with_headers(options.http.headers.iter().cloned())
        .map_err(|e| ConnectError::Options(e.to_string()))?;
    let app = options.app();
    let config = crate::client::declare_input(config, options.input.is_some());
    Client::start_actor(config, move |session, commands, ready| {
        let actor = Actor {
            front: ClientFront::new(session, transport, requests, R::now),
            peer: Peer::new(Some(ready)).over_http(),
            app,
            handlers: Handlers::<R>::channel(),
        };
        actor.run(commands, from_net)
    })
    .await
    .map(|client| client.with_options(options))
}

/// What woke the actor
enum Wake<R: Runtime, D> {
    Command(Option<Command<R>>),
    Net(FromNet<D>),
    Handler(HandlerMsg<R>),
    /// The timer fired: whether the core's deadline is due
    Timeout(bool),
}

struct Actor<R: Runtime, Q: Requests> {
    front: ClientFront<Q>,
    peer: Peer<R>,
    app: App<R>,
    handlers: (Handlers<R>, HandlerRx<R>),
}

impl<R: Runtime, Q: Requests> Actor<R, Q> {
    async fn run<D: AsRef<[u8]>>(
        mut self,
        mut commands: chan::QueueReceiver<Command<R>>,
        net_rx: Receiver<FromNet<D>>,
    ) {
        let mut closing = false;
        let mut timer = Timer::<R>::default();
        loop {
            self.pump();
            if self.front.session.is_closed() {
                break;
            }
            let deadline = self.front.poll_timeout();
            let armed = timer.arm(deadline);
            let wake = {
                let command = async {
                    if closing {
                        std::future::pending().await
                    } else {
                        Wake::Command(chan::next(&mut commands).await)
                    }
                };
                // The actor holds a sender of both: they never close while it runs.
                let net = async {
                    match net_rx.recv().await {
                        Ok(msg) => Wake::Net(msg),
                        Err(_) => std::future::pending().await,
                    }
                };
                let handler = async {
                    match chan::next(&mut self.handlers.1).await {
                        Some((_, msg)) => Wake::Handler(msg),
                        None => std::future::pending().await,
                    }
                };
                let timeout = async {
                    if armed {
                        Wake::Timeout(timer.wait(deadline).await)
                    } else {
                        std::future::pending().await
                    }
                };
                command.race(net).race(handler).race(timeout).await
            };
            match wake {
                Wake::Command(command) => {
                    closing = match command {
                        Some(command) => self.peer.on_command(&mut self.front.session, command),
                        None => true,
                    };
                    if closing {
                        self.close(&net_rx).await;
                    }
                }
                Wake::Net(msg) => self.front.on_net(msg),
                Wake::Handler(msg) => self.peer.on_client_handler(&mut self.front.session, msg),
                Wake::Timeout(due) => {
                    if due {
                        self.front.handle_timeout();
                    }
                }
            }
        }
        // Stopping the requests closes every response still open.
        self.front.abort_all();
        self.peer.abort_all();
        chan::close_queue(&mut commands);
        chan::close_queue(&mut self.handlers.1);
    }

    /// Ends the session: DELETE (2025 wire), waiting up to [`DELETE_WAIT`] for the head of
    /// its response, then close
    async fn close<D>(&mut self, net_rx: &Receiver<FromNet<D>>) {
        if let Some(delete) = self.front.close() {
            let stream = delete.stream;
            if let Ok(task) = self.front.requests.start(delete) {
                let answered = async {
                    while let Ok(msg) = net_rx.recv().await {
                        match msg {
                            FromNet::Head { stream: s, .. }
                            | FromNet::End { stream: s }
                            | FromNet::Failed { stream: s, .. }
                                if s == stream =>
                            {
                                return;
                            }
                            // What else comes back is too late: the session is ending.
                            _ => {}
                        }
                    }
                };
                let mut timer = Timer::<R>::default();
                timer.arm(Some(R::now() + DELETE_WAIT));
                answered
                    .or(async {
                        timer.wait(None).await;
                    })
                    .await;
                self.front.requests.abort(task);
            }
        }
        self.front.closed();
    }

    /// Moves what the session transmits into HTTP requests and delivers its events until
    /// both are quiet
    fn pump(&mut self) {
        self.front
            .pump_peer(&mut self.peer, &self.app, &self.handlers.0);
    }
}
