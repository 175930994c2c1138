//! The server handle every async binding shares: build it, serve it over the runtime's
//! byte streams, stdio or Streamable HTTP, and change what it offers while it serves
//!
//! The catalog, argument validation, pagination, caching hints and every protocol rule come
//! from `mcp-sansio`; the builder, the handlers' `Context` and the dispatcher are
//! [`server`](crate::server)'s; the binding's part is its [`RuntimeIo`] (and
//! [`HttpIo`](crate::io::HttpIo)).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use mcp_sansio::server::CatalogError;
use mcp_sansio::server::uri_template::Variables;
use mcp_sansio::{ListKind, ServerConfig};
use serde_json::{Map, Value};

use crate::driver::{AsyncRead, AsyncWrite};
use crate::io::RuntimeIo;
use crate::runtime::Runtime;
use crate::server::{Context, NotDeclared, ServerBuilder, ServerCore};

/// A built server; serve as many connections as you like
///
/// Cheap to clone: clones share the catalog, so one can serve while another changes what
/// the server offers.
pub struct Server<R: Runtime> {
    core: ServerCore<R>,
}

impl<R: Runtime> Clone for Server<R> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
        }
    }
}

impl<R: Runtime> From<ServerCore<R>> for Server<R> {
    fn from(core: ServerCore<R>) -> Self {
        Self { core }
    }
}

impl<R: Runtime> std::fmt::Debug for Server<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.core.config)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> Server<R> {
    /// Starts building a server
    pub fn builder(config: ServerConfig) -> ServerBuilder<R, Self> {
        ServerBuilder::new(config)
    }

    /// What the layer serves connections of this server with (for a binding's HTTP stack)
    pub fn core(&self) -> &ServerCore<R> {
        &self.core
    }
}

impl<R: RuntimeIo> Server<R> {
    /// Serves one connection over a reader and a writer of the runtime until the client
    /// closes it
    pub async fn serve<Rd, Wr>(&self, reader: Rd, writer: Wr)
    where
        R::Io<Rd>: AsyncRead + Unpin + Send + 'static,
        R::Io<Wr>: AsyncWrite + Unpin + Send + 'static,
    {
        crate::driver::serve(&self.core, R::io(reader), R::io(writer)).await;
    }

    /// Serves one connection over this process's stdin and stdout
    ///
    /// On Unix, when stdin and stdout are pipes (as when an MCP client starts this process),
    /// they are read and written directly by the runtime's event loop; otherwise (a terminal,
    /// a file) through the runtime's blocking stdin and stdout, whose every read and write is
    /// a trip to a blocking thread.
    pub async fn serve_stdio(&self) {
        R::serve_stdio(&self.core).await;
    }
}

#[cfg(feature = "http")]
impl<R: crate::io::HttpIo> Server<R> {
    /// Serves Streamable HTTP at `addr` (both wires: 2025 sessions and 2026 stateless
    /// requests) with the default [`HttpConfig`](mcp_sansio::http::HttpConfig): only
    /// `localhost`, `127.0.0.1` and `[::1]` may be named by `Host` and `Origin`
    ///
    /// Returns once the socket is bound; the server runs in the background until its
    /// handle's `shutdown` (or the handle is dropped).
    ///
    /// # Errors
    /// Binding the socket failed.
    pub async fn serve_http(
        &self,
        addr: std::net::SocketAddr,
    ) -> std::io::Result<R::HttpServerHandle> {
        self.serve_http_with(addr, mcp_sansio::http::HttpConfig::default())
            .await
    }

    /// [`serve_http`](Self::serve_http) with the HTTP rules' limits and host policy
    ///
    /// # Errors
    /// Binding the socket failed.
    pub async fn serve_http_with(
        &self,
        addr: std::net::SocketAddr,
        config: mcp_sansio::http::HttpConfig,
    ) -> std::io::Result<R::HttpServerHandle> {
        R::serve_http(addr, config, &self.core, None, None).await
    }

    /// The Streamable HTTP endpoint of this server under `config`, to mount in an app of
    /// your own (with tokio: a `tower::Service` for an axum route or a hyper service), or
    /// the sans-IO entry point `HttpEndpoint::handle` for any other HTTP stack
    ///
    /// Its sessions are its own (another endpoint, or [`serve_http`](Self::serve_http), has
    /// others); its actor runs on a task of the current runtime until the endpoint's
    /// `shutdown`, or until every clone and open response is gone.
    ///
    /// # Panics
    /// With tokio, outside a tokio runtime.
    pub fn http_endpoint(&self, config: mcp_sansio::http::HttpConfig) -> R::HttpEndpoint {
        R::http_endpoint(&self.core, config)
    }

    /// [`serve_http_with`](Self::serve_http_with) as an OAuth-protected resource: the
    /// Protected Resource Metadata is served, and requests without a valid bearer token
    /// (or without the required scopes) are answered 401 or 403 before any MCP processing
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "auth")]
    pub async fn serve_http_protected(
        &self,
        addr: std::net::SocketAddr,
        config: mcp_sansio::http::HttpConfig,
        protection: crate::auth::asynchronous::Protection,
    ) -> std::io::Result<R::HttpServerHandle> {
        R::serve_http(addr, config, &self.core, Some(protection), None).await
    }
}

#[cfg(feature = "tls")]
impl<R: crate::io::TlsIo> Server<R> {
    /// [`serve_http`](Self::serve_http) over TLS (`https://`), presenting `identity`
    ///
    /// The TLS handshake counts toward the connection's
    /// [`header_read_timeout`](mcp_sansio::http::HttpConfig::header_read_timeout) and its
    /// connection toward [`max_connections`](mcp_sansio::http::HttpConfig::max_connections),
    /// as a request head does.
    ///
    /// # Errors
    /// Binding the socket failed.
    pub async fn serve_https(
        &self,
        addr: std::net::SocketAddr,
        identity: crate::tls::TlsIdentity,
    ) -> std::io::Result<R::HttpServerHandle> {
        self.serve_https_with(addr, mcp_sansio::http::HttpConfig::default(), identity)
            .await
    }

    /// [`serve_http_with`](Self::serve_http_with) over TLS (`https://`), presenting
    /// `identity` (see [`serve_https`](Self::serve_https))
    ///
    /// # Errors
    /// Binding the socket failed.
    pub async fn serve_https_with(
        &self,
        addr: std::net::SocketAddr,
        config: mcp_sansio::http::HttpConfig,
        identity: crate::tls::TlsIdentity,
    ) -> std::io::Result<R::HttpServerHandle> {
        R::serve_http(addr, config, &self.core, None, Some(R::tls(&identity))).await
    }

    /// [`serve_http_protected`](Self::serve_http_protected) over TLS (`https://`),
    /// presenting `identity` (see [`serve_https`](Self::serve_https))
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "auth")]
    pub async fn serve_https_protected(
        &self,
        addr: std::net::SocketAddr,
        config: mcp_sansio::http::HttpConfig,
        protection: crate::auth::asynchronous::Protection,
        identity: crate::tls::TlsIdentity,
    ) -> std::io::Result<R::HttpServerHandle> {
        let tls = Some(R::tls(&identity));
        R::serve_http(addr, config, &self.core, Some(protection), tls).await
    }
}

/// Changing what the server offers while it serves, and pushing changes to every connected
/// client
///
/// Every connection the server serves ([`serve`](Self::serve), [`serve_stdio`](Self::serve_stdio),
/// and every session of its HTTP servers, both eras) sees a change from its next request on
/// (the next `tools/list` shows an added tool), and is told what changed:
/// `notifications/<list>/list_changed` after an `add_*` or `remove_*` when the server
/// declares `listChanged` for the list (build it with
/// [`ServerBuilder::list_changed`](ServerBuilder#method.list_changed)),
/// `notifications/resources/updated` after [`notify_resource_updated`](Self::notify_resource_updated)
/// to the clients subscribed to the URI (legacy `resources/subscribe`, which needs
/// [`resource_subscriptions`](ServerBuilder#method.resource_subscriptions);
/// 2026 `subscriptions/listen`). Which session gets what is the core's rule. A list a server
/// changes at run time must be declared when it is built (`list_changed` declares tools,
/// resources and prompts), since clients read the capabilities once.
///
/// # Example
///
/// ```
/// use mcp_sansio::schema::{CallToolResult, Tool};
/// use mcp_sansio::{Implementation, ListKind, ServerConfig};
/// use mcp_sansio_tokio::Server;
/// use serde_json::Map;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder(ServerConfig::new(Implementation::new("live", "1.0")))
///     .list_changed()
///     .resource_subscriptions()
///     .build();
/// // Clones share the catalog: hand one to the code that serves, keep one to change it.
/// server.add_tool(Tool::new("late", Map::new()), |_cx, _args| async {
///     Ok(CallToolResult::text("added at run time"))
/// })?; // every connected client gets notifications/tools/list_changed
/// server.notify_resource_updated("file:///notes.txt"); // to its subscribers
/// server.notify_list_changed(ListKind::Prompts)?; // say so by hand
/// assert!(server.remove_tool("late"));
/// # Ok(())
/// # }
/// ```
impl<R: Runtime> Server<R> {
    /// Adds a tool and its handler while the server serves; clients are told (see above)
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context<R>, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'static,
    {
        self.core
            .live()
            .add_tool(tool, Arc::new(move |cx, args| Box::pin(handler(cx, args))))
    }

    /// Removes a tool; whether it was there (only then are clients told)
    pub fn remove_tool(&self, name: &str) -> bool {
        self.core.live().remove_tool(name)
    }

    /// Adds a resource and its reader while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn add_resource<F, Fut>(&self, resource: Resource, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context<R>, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.core.live().add_resource(
            resource,
            Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars))),
        )
    }

    /// Removes a resource by its URI; whether it was there
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.core.live().remove_resource(uri)
    }

    /// Adds a resource template and the reader of the URIs it matches while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn add_resource_template<F, Fut>(
        &self,
        template: ResourceTemplate,
        handler: F,
    ) -> Result<(), CatalogError>
    where
        F: Fn(Context<R>, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.core.live().add_resource_template(
            template,
            Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars))),
        )
    }

    /// Removes a resource template by its URI template; whether it was there
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.core.live().remove_resource_template(uri_template)
    }

    /// Adds a prompt and its handler while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn add_prompt<F, Fut>(&self, prompt: Prompt, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context<R>, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        self.core.live().add_prompt(
            prompt,
            Arc::new(move |cx, args| Box::pin(handler(cx, args))),
        )
    }

    /// Removes a prompt; whether it was there
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.core.live().remove_prompt(name)
    }

    /// Tells every connected client that a list changed (`add_*` and `remove_*` do it
    /// themselves): legacy sessions, and 2026 listen streams that asked for it
    ///
    /// # Errors
    /// [`NotDeclared`] when the server does not declare `listChanged` for the list.
    pub fn notify_list_changed(&self, kind: ListKind) -> Result<(), NotDeclared> {
        self.core.live().notify_list_changed(kind)
    }

    /// Tells every connected client subscribed to `uri` (or to a parent of it) that the
    /// resource changed: `notifications/resources/updated`
    pub fn notify_resource_updated(&self, uri: &str) {
        self.core.live().notify_resource_updated(uri);
    }
}
