//! HTTP/1.1 framing over `futures-io`, for the bindings that frame HTTP themselves
//! (mcp-sansio-async-std's server and client; mcp-sansio-blocking's server, over blocking
//! sockets behind `futures_lite::io::AssertAsync`)
//!
//! Heads are parsed by `httparse`; this module only frames messages (RFC 9112): it reads a
//! head within [`MAX_HEAD`] bytes and `MAX_HEADERS` fields, reads bodies delimited by
//! `Content-Length`, `chunked` or (responses only) the end of the connection, and writes
//! heads, whole bodies and chunked bodies (flushed per chunk, so each SSE event leaves at
//! once). What a request or response means is decided by `mcp_sansio::http`.

use std::io;

use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::http::Fields;

/// The largest head (request or status line and header fields) read
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header fields in one head
pub(crate) const MAX_HEADERS: usize = 100;
/// The longest chunk-size line or trailer line
const MAX_LINE: usize = 4096;
/// The most trailer bytes after a chunked body
const MAX_TRAILERS: usize = 16 * 1024;
/// How much is read from the socket at once
const READ_SIZE: usize = 16 * 1024;

/// Why a message could not be read
#[derive(Debug)]
pub enum ReadError {
    /// The socket failed or closed in the middle of a message
    Io(io::Error),
    /// The head is larger than [`MAX_HEAD`] or has more than `MAX_HEADERS` fields
    HeadTooLarge,
    /// The bytes are not HTTP/1.1
    Malformed(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::HeadTooLarge => f.write_str("the HTTP head is too large"),
            Self::Malformed(why) => write!(f, "malformed HTTP: {why}"),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

fn malformed(why: impl Into<String>) -> ReadError {
    ReadError::Malformed(why.into())
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the connection closed mid-message",
    )
}

/// A request head
#[derive(Debug)]
pub struct RequestHead {
    /// The method (`POST`, `GET`, `DELETE`)
    pub method: String,
    /// The request target as sent (origin form for our clients)
    pub target: String,
    /// HTTP/1.0 (`false`) or HTTP/1.1 (`true`)
    pub http11: bool,
    /// Every field, its value as the client sent it (the core answers a value that is not
    /// UTF-8 with 400)
    pub headers: Fields,
}

/// A response head
#[derive(Debug)]
pub struct ResponseHead {
    /// The status code
    pub status: u16,
    /// HTTP/1.0 (`false`) or HTTP/1.1 (`true`)
    pub http11: bool,
    /// Every field, its value as text
    pub headers: Vec<(String, String)>,
}

/// A head's fields as the readers here take them: a list of `(name, value)` pairs or the
/// [`Fields`] of a request
pub trait FieldPairs {
    /// Every field `(name, value)`, in order
    fn pairs(&self) -> impl Iterator<Item = (&str, &[u8])>;
}

impl<V: AsRef<[u8]>> FieldPairs for [(String, V)] {
    fn pairs(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.iter().map(|(n, v)| (n.as_str(), v.as_ref()))
    }
}

impl<V: AsRef<[u8]>> FieldPairs for Vec<(String, V)> {
    fn pairs(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.as_slice().pairs()
    }
}

impl FieldPairs for Fields {
    fn pairs(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.iter()
    }
}

/// The value of the header field `name` (the first, when repeated), if it is text
pub fn header<'a>(headers: &'a (impl FieldPairs + ?Sized), name: &str) -> Option<&'a str> {
    headers
        .pairs()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| std::str::from_utf8(v).ok())
}

/// Every value of the header field `name`; `Err` when one is not text
fn values<'a>(
    headers: &'a (impl FieldPairs + ?Sized),
    name: &str,
) -> Result<Vec<&'a str>, ReadError> {
    headers
        .pairs()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| std::str::from_utf8(v).map_err(|_| malformed(format!("{name} is not text"))))
        .collect()
}

/// Whether the connection stays open after this message (`Connection` and the version)
pub fn keep_alive(http11: bool, headers: &(impl FieldPairs + ?Sized)) -> bool {
    let mut options = headers
        .pairs()
        .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
        .filter_map(|(_, v)| std::str::from_utf8(v).ok())
        .flat_map(|v| v.split(','))
        .map(str::trim);
    if http11 {
        !options.any(|o| o.eq_ignore_ascii_case("close"))
    } else {
        options.any(|o| o.eq_ignore_ascii_case("keep-alive"))
    }
}

/// How a message's body is delimited
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Exactly this many bytes (0: no body)
    Length(u64),
    /// `Transfer-Encoding: chunked`
    Chunked,
    /// Until the connection closes (responses only)
    UntilClose,
}

/// The framing of a request body: chunked, a valid `Content-Length`, or none; anything
/// ambiguous (both, conflicting lengths, another transfer coding) is refused
pub(crate) fn request_framing(headers: &(impl FieldPairs + ?Sized)) -> Result<Framing, ReadError> {
    match message_framing(headers)? {
        Some(framing) => Ok(framing),
        None => Ok(Framing::Length(0)),
    }
}

/// The framing of a response body to a request with `method` (RFC 9112 §6.3)
pub fn response_framing(
    method: &str,
    status: u16,
    headers: &[(String, String)],
) -> Result<Framing, ReadError> {
    if method.eq_ignore_ascii_case("HEAD") || status < 200 || status == 204 || status == 304 {
        return Ok(Framing::Length(0));
    }
    Ok(message_framing(headers)?.unwrap_or(Framing::UntilClose))
}

fn message_framing(headers: &(impl FieldPairs + ?Sized)) -> Result<Option<Framing>, ReadError> {
    let codings: Vec<&str> = values(headers, "transfer-encoding")?
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let lengths = values(headers, "content-length")?;
    let mut lengths = lengths
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(str::trim);
    if !codings.is_empty() {
        if lengths.next().is_some() {
            return Err(malformed("both Transfer-Encoding and Content-Length"));
        }
        return match codings.as_slice() {
            [c] if c.eq_ignore_ascii_case("chunked") => Ok(Some(Framing::Chunked)),
            _ => Err(malformed("unsupported Transfer-Encoding")),
        };
    }
    let mut length = None;
    for value in lengths {
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed("invalid Content-Length"));
        }
        let n: u64 = value
            .parse()
            .map_err(|_| malformed("invalid Content-Length"))?;
        if length.is_some_and(|l| l != n) {
            return Err(malformed("conflicting Content-Length values"));
        }
        length = Some(n);
    }
    Ok(length.map(Framing::Length))
}

/// Where a body is in its framing
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyState {
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailers(usize),
    UntilClose,
    Done,
}

/// Reads a body piece by piece ([`Conn::body_piece`])
#[derive(Debug)]
pub struct Body {
    state: BodyState,
}

impl Body {
    /// A body to read, delimited by `framing`
    pub fn new(framing: Framing) -> Self {
        let state = match framing {
            Framing::Length(0) => BodyState::Done,
            Framing::Length(n) => BodyState::Length(n),
            Framing::Chunked => BodyState::ChunkSize,
            Framing::UntilClose => BodyState::UntilClose,
        };
        Self { state }
    }

    /// Whether the body has been read to its end
    pub fn is_done(&self) -> bool {
        self.state == BodyState::Done
    }
}

/// One side of an HTTP/1.1 connection: the socket and the bytes read but not yet used
#[derive(Debug)]
pub struct Conn<S> {
    io: S,
    buf: Vec<u8>,
    /// What a read fills, zeroed once for the connection (from its first read): a zeroed
    /// array made per read was 16 KiB of `memset` each time, twice a request, a third of
    /// mcp-sansio-async-std's instructions under H2
    chunk: Box<[u8]>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    /// A connection over `io`, nothing read yet
    pub fn new(io: S) -> Self {
        Self {
            io,
            buf: Vec::new(),
            chunk: Box::default(),
        }
    }

    /// Whether bytes of a next message are already here
    pub fn has_buffered(&self) -> bool {
        !self.buf.is_empty()
    }

    /// How many bytes are read but not yet used
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Reads more bytes into the buffer; `Ok(0)` at the end of the connection. Dropping the
    /// future before it finishes loses nothing.
    pub async fn fill(&mut self) -> io::Result<usize> {
        if self.chunk.is_empty() {
            self.chunk = vec![0u8; READ_SIZE].into_boxed_slice();
        }
        let n = self.io.read(&mut self.chunk).await?;
        self.buf.extend_from_slice(&self.chunk[..n]);
        Ok(n)
    }

    /// Reads a request head; `Ok(None)` when the connection ends cleanly before one starts
    pub async fn read_request(&mut self) -> Result<Option<RequestHead>, ReadError> {
        loop {
            let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut request = httparse::Request::new(&mut fields);
            match request.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let head = RequestHead {
                        method: request.method.unwrap_or_default().to_owned(),
                        target: request.path.unwrap_or_default().to_owned(),
                        http11: request.version == Some(1),
                        headers: raw(request.headers),
                    };
                    self.buf.drain(..len);
                    return Ok(Some(head));
                }
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => return Err(ReadError::HeadTooLarge),
                Err(e) => return Err(malformed(e.to_string())),
            }
            if self.buf.len() > MAX_HEAD {
                return Err(ReadError::HeadTooLarge);
            }
            if self.fill().await? == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(closed().into())
                };
            }
        }
    }

    /// Reads a response head, skipping interim (1xx) responses
    pub async fn read_response(&mut self) -> Result<ResponseHead, ReadError> {
        loop {
            let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut fields);
            match response.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let head = ResponseHead {
                        status: response.code.unwrap_or_default(),
                        http11: response.version == Some(1),
                        headers: owned(response.headers)?,
                    };
                    self.buf.drain(..len);
                    if (100..200).contains(&head.status) && head.status != 101 {
                        continue;
                    }
                    return Ok(head);
                }
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => return Err(ReadError::HeadTooLarge),
                Err(e) => return Err(malformed(e.to_string())),
            }
            if self.buf.len() > MAX_HEAD {
                return Err(ReadError::HeadTooLarge);
            }
            if self.fill().await? == 0 {
                return Err(closed().into());
            }
        }
    }

    /// The next piece of `body` as it arrives; `Ok(None)` at its end
    pub async fn body_piece(&mut self, body: &mut Body) -> Result<Option<Vec<u8>>, ReadError> {
        loop {
            match body.state {
                BodyState::Done => return Ok(None),
                BodyState::Length(left) | BodyState::ChunkData(left) => {
                    if self.buf.is_empty() && self.fill().await? == 0 {
                        return Err(closed().into());
                    }
                    let take = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(self.buf.len());
                    let piece: Vec<u8> = self.buf.drain(..take).collect();
                    let left = left - take as u64;
                    body.state = match body.state {
                        BodyState::Length(_) if left == 0 => BodyState::Done,
                        BodyState::Length(_) => BodyState::Length(left),
                        _ if left == 0 => BodyState::ChunkEnd,
                        _ => BodyState::ChunkData(left),
                    };
                    return Ok(Some(piece));
                }
                BodyState::UntilClose => {
                    if self.buf.is_empty() && self.fill().await? == 0 {
                        body.state = BodyState::Done;
                        return Ok(None);
                    }
                    return Ok(Some(std::mem::take(&mut self.buf)));
                }
                BodyState::ChunkSize => {
                    let line = self.line().await?;
                    let size = line.split(|&b| b == b';').next().unwrap_or_default();
                    let size = std::str::from_utf8(size)
                        .ok()
                        .map(str::trim)
                        .filter(|s| !s.is_empty() && s.len() <= 16)
                        .and_then(|s| u64::from_str_radix(s, 16).ok())
                        .ok_or_else(|| malformed("invalid chunk size"))?;
                    body.state = if size == 0 {
                        BodyState::Trailers(0)
                    } else {
                        BodyState::ChunkData(size)
                    };
                }
                BodyState::ChunkEnd => {
                    if !self.line().await?.is_empty() {
                        return Err(malformed("a chunk is longer than its size"));
                    }
                    body.state = BodyState::ChunkSize;
                }
                BodyState::Trailers(seen) => {
                    let line = self.line().await?;
                    let seen = seen + line.len() + 2;
                    body.state = if line.is_empty() {
                        BodyState::Done
                    } else if seen > MAX_TRAILERS {
                        return Err(ReadError::HeadTooLarge);
                    } else {
                        BodyState::Trailers(seen)
                    };
                }
            }
        }
    }

    /// The whole of `body`, or `Ok(None)` when it is longer than `limit`
    pub async fn body_to_end(
        &mut self,
        body: &mut Body,
        limit: usize,
    ) -> Result<Option<Vec<u8>>, ReadError> {
        // A body of known length is read into a buffer of its size, not one that doubles
        // (and is copied) as it grows: a large body costs its size once.
        let mut all = match body.state {
            BodyState::Length(n) => usize::try_from(n)
                .ok()
                .filter(|&n| n <= limit)
                .map_or_else(Vec::new, Vec::with_capacity),
            _ => Vec::new(),
        };
        while let Some(piece) = self.body_piece(body).await? {
            if all.len() + piece.len() > limit {
                return Ok(None);
            }
            all.extend_from_slice(&piece);
        }
        Ok(Some(all))
    }

    /// A CRLF-terminated line (without the CRLF), at most [`MAX_LINE`] bytes
    async fn line(&mut self) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..end].to_vec();
                self.buf.drain(..end + 2);
                return Ok(line);
            }
            if self.buf.len() > MAX_LINE {
                return Err(malformed("a chunk line is too long"));
            }
            if self.fill().await? == 0 {
                return Err(closed().into());
            }
        }
    }

    /// The connection's IO (to adjust its deadlines)
    pub fn io_mut(&mut self) -> &mut S {
        &mut self.io
    }

    /// Writes `bytes` and flushes them
    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.io.write_all(bytes).await?;
        self.io.flush().await
    }
}

/// The header fields, their values as sent (less surrounding whitespace)
fn raw(fields: &[httparse::Header<'_>]) -> Fields {
    Fields::from_pairs(|| fields.iter().map(|h| (h.name, h.value.trim_ascii())))
}

/// The header fields as owned strings; a value that is not UTF-8 is refused
fn owned(fields: &[httparse::Header<'_>]) -> Result<Vec<(String, String)>, ReadError> {
    fields
        .iter()
        .map(|h| {
            let value = std::str::from_utf8(h.value)
                .map_err(|_| malformed(format!("the {} header is not UTF-8", h.name)))?;
            Ok((h.name.to_owned(), value.trim().to_owned()))
        })
        .collect()
}

/// Appends `name: value` to a head being written, refusing what would break the framing
pub(crate) fn push_field(head: &mut String, name: &str, value: &str) -> Result<(), String> {
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !name_ok || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!("invalid header field {name:?}"));
    }
    head.push_str(name);
    head.push_str(": ");
    head.push_str(value);
    head.push_str("\r\n");
    Ok(())
}

/// The reason phrase for a status (only informative in HTTP/1.1)
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// An `http://` or `https://` URL taken apart for a request
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https://`: the connection is TLS (the binding refuses it without its `tls` feature)
    pub tls: bool,
    /// The host to connect to (without brackets for IPv6)
    pub host: String,
    /// The port (the scheme's default when the URL names none)
    pub port: u16,
    /// `host[:port]` as written, for the `Host` header
    pub authority: String,
    /// The path and query (origin form), at least `/`
    pub path: String,
}

impl Target {
    /// Parses an absolute `http://` or `https://` URL (no user info; the fragment is
    /// dropped)
    pub fn parse(url: &str) -> Result<Self, String> {
        let scheme = |s: &str| {
            url.get(..s.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(s))
        };
        let (tls, rest) = if scheme("http://") {
            (false, &url[7..])
        } else if scheme("https://") {
            (true, &url[8..])
        } else {
            return Err(format!(
                "{url}: only http:// and https:// URLs are supported"
            ));
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("{url}: no host, or user info in the URL"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("{url}: an unclosed IPv6 address"))?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        let port = match port {
            None | Some("") if tls => 443,
            None | Some("") => 80,
            Some(port) => port
                .parse()
                .map_err(|_| format!("{url}: an invalid port"))?,
        };
        if host.is_empty()
            || host
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(format!("{url}: an invalid host"));
        }
        let path = match path {
            "" => "/".to_owned(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_owned(),
        };
        if path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(format!("{url}: spaces or control characters in the path"));
        }
        Ok(Self {
            tls,
            host: host.to_owned(),
            port,
            authority: authority.to_owned(),
            path,
        })
    }

    /// The URL again, as `http://authority/path` (or `https://`)
    #[cfg(feature = "auth")]
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path)
    }

    /// The URL as `http://authority/path` (or `https://`): a request's target in the
    /// absolute form a forward proxy takes
    pub fn absolute(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path)
    }

    /// `host:port`, for messages
    pub fn server(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// A request head for this target, with `Host`, the fields and `Content-Length`
    pub fn head(
        &self,
        method: &str,
        headers: &[(String, String)],
        body_len: usize,
        close: bool,
    ) -> Result<String, String> {
        let mut head = format!("{method} {} HTTP/1.1\r\n", self.path);
        push_field(&mut head, "Host", &self.authority)?;
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("host") || name.eq_ignore_ascii_case("content-length") {
                continue;
            }
            push_field(&mut head, name, value)?;
        }
        if body_len > 0 || method == "POST" || method == "PUT" {
            push_field(&mut head, "Content-Length", &body_len.to_string())?;
        }
        if close {
            push_field(&mut head, "Connection", "close")?;
        }
        head.push_str("\r\n");
        Ok(head)
    }
}

/// A response head: the core's fields, then the framing (`Content-Length` for a whole
/// body, chunked for an open one) and `Connection: close` when the connection ends
pub fn response_head(
    status: u16,
    headers: &[(&'static str, String)],
    length: Option<usize>,
    close: bool,
) -> Result<Vec<u8>, String> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        let framing = ["content-length", "transfer-encoding", "connection"];
        if !framing.iter().any(|f| name.eq_ignore_ascii_case(f)) {
            push_field(&mut head, name, value)?;
        }
    }
    match length {
        Some(n) => push_field(&mut head, "Content-Length", &n.to_string())?,
        None => push_field(&mut head, "Transfer-Encoding", "chunked")?,
    }
    if close {
        push_field(&mut head, "Connection", "close")?;
    }
    head.push_str("\r\n");
    Ok(head.into_bytes())
}

/// An empty response that closes the connection
pub fn simple_response(status: u16) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        reason(status)
    )
    .into_bytes()
}

/// Appends `data` to `bytes` as one chunk of a chunked body (nothing for an empty piece: an
/// empty chunk would end the body)
pub fn push_chunk(bytes: &mut Vec<u8>, data: &[u8]) {
    if !data.is_empty() {
        bytes.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
        bytes.extend_from_slice(data);
        bytes.extend_from_slice(b"\r\n");
    }
}

/// The last chunk, ending a chunked body
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// A request a server read off a connection with [`receive`]
#[derive(Debug)]
pub enum Received {
    /// A whole request
    Request {
        /// The method
        method: String,
        /// The path of the request target (without the query)
        path: String,
        /// Every field, as the client sent it
        headers: Fields,
        /// The body
        body: Vec<u8>,
        /// Whether the connection may carry another request after the answer
        keep_alive: bool,
    },
    /// The body is larger than the limit (the connection closes after the answer)
    Oversize,
    /// The head or the body missed its deadline: answer 408 and close
    Late,
    /// Not a request we can read: answer this status and close
    Bad(u16),
    /// The client went away
    Gone,
}

/// Whether a read failed because the connection's deadline passed (the binding's socket
/// reports it as `TimedOut`)
fn late(error: &ReadError) -> bool {
    matches!(error, ReadError::Io(e) if e.kind() == io::ErrorKind::TimedOut)
}

/// Reads one request off a server's connection: its head, and its body up to `limit`,
/// each by the deadline `clock` gives under `edge`'s timeouts
///
/// `set_deadline` hands the binding's socket the instant past which its reads fail with
/// `TimedOut` (`None`: no deadline; it is `None` again when this returns). An
/// `Expect: 100-continue` with a body gets its interim response before the body is read.
pub async fn receive<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Conn<S>,
    limit: usize,
    clock: &mut mcp_sansio::http::ReadDeadline,
    edge: &mcp_sansio::http::HttpConfig,
    set_deadline: fn(&mut Conn<S>, Option<std::time::Instant>),
) -> Received {
    set_deadline(conn, clock.deadline(edge));
    // An async block, so that every way out below passes the reset after it.
    let received = async {
        let now = std::time::Instant::now;
        let head = match conn.read_request().await {
            Ok(Some(head)) => head,
            Err(e) if late(&e) => return Received::Late,
            Ok(None) | Err(ReadError::Io(_)) => return Received::Gone,
            Err(ReadError::HeadTooLarge) => return Received::Bad(431),
            Err(ReadError::Malformed(_)) => return Received::Bad(400),
        };
        clock.head_read(now());
        set_deadline(conn, clock.deadline(edge));
        let Ok(framing) = request_framing(&head.headers) else {
            return Received::Bad(400);
        };
        if let Framing::Length(n) = framing
            && n > limit as u64
        {
            return Received::Oversize;
        }
        let continue_expected =
            header(&head.headers, "expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
        if continue_expected
            && framing != Framing::Length(0)
            && conn.send(b"HTTP/1.1 100 Continue\r\n\r\n").await.is_err()
        {
            return Received::Gone;
        }
        let mut body = Body::new(framing);
        let received = conn.body_to_end(&mut body, limit).await;
        clock.body_read(now());
        match received {
            Ok(Some(body)) => Received::Request {
                keep_alive: keep_alive(head.http11, &head.headers),
                path: head.target.split('?').next().unwrap_or_default().to_owned(),
                method: head.method,
                headers: head.headers,
                body,
            },
            Ok(None) => Received::Oversize,
            Err(e) if late(&e) => Received::Late,
            Err(ReadError::Io(_)) => Received::Gone,
            Err(_) => Received::Bad(400),
        }
    }
    .await;
    set_deadline(conn, None);
    received
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(bytes: &[u8]) -> Conn<futures_lite::io::Cursor<Vec<u8>>> {
        Conn::new(futures_lite::io::Cursor::new(bytes.to_vec()))
    }

    fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn reads_pipelined_requests_with_both_framings() {
        futures_lite::future::block_on(async {
            let mut c = conn(
                b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\
                  POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
                  3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n",
            );
            let head = c.read_request().await.unwrap().unwrap();
            assert_eq!(
                (head.method.as_str(), head.target.as_str()),
                ("POST", "/mcp")
            );
            assert!(head.http11);
            let mut body = Body::new(request_framing(&head.headers).unwrap());
            assert_eq!(
                c.body_to_end(&mut body, 100).await.unwrap().unwrap(),
                b"hello"
            );
            let head = c.read_request().await.unwrap().unwrap();
            let mut body = Body::new(request_framing(&head.headers).unwrap());
            assert_eq!(
                c.body_to_end(&mut body, 100).await.unwrap().unwrap(),
                b"abcde"
            );
            assert!(body.is_done());
            assert!(c.read_request().await.unwrap().is_none());
        });
    }

    #[test]
    fn limits_and_malformed_input_are_errors_not_panics() {
        futures_lite::future::block_on(async {
            let mut c = conn(b"POST / HTTP/1.1\r\nContent-Length: 20\r\n\r\n0123456789");
            let head = c.read_request().await.unwrap().unwrap();
            let mut body = Body::new(request_framing(&head.headers).unwrap());
            // Cut off mid-body
            assert!(matches!(
                c.body_to_end(&mut body, 100).await,
                Err(ReadError::Io(_))
            ));
            let mut c = conn(b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789");
            let head = c.read_request().await.unwrap().unwrap();
            let mut body = Body::new(request_framing(&head.headers).unwrap());
            assert_eq!(c.body_to_end(&mut body, 5).await.unwrap(), None);

            let many: String = (0..MAX_HEADERS + 1)
                .map(|i| format!("X-{i}: 1\r\n"))
                .collect();
            let mut c = conn(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes());
            assert!(matches!(
                c.read_request().await,
                Err(ReadError::HeadTooLarge)
            ));
            let long = "x".repeat(MAX_HEAD + 10);
            let mut c = conn(format!("GET / HTTP/1.1\r\nX: {long}").as_bytes());
            assert!(matches!(
                c.read_request().await,
                Err(ReadError::HeadTooLarge)
            ));
            let mut c = conn(b"NOT HTTP\r\n\r\n");
            assert!(matches!(
                c.read_request().await,
                Err(ReadError::Malformed(_))
            ));

            let mut c = conn(b"1x\r\nab\r\n0\r\n\r\n");
            let mut body = Body::new(Framing::Chunked);
            assert!(matches!(
                c.body_piece(&mut body).await,
                Err(ReadError::Malformed(_))
            ));
            let mut c = conn(b"2\r\nabc\r\n0\r\n\r\n");
            let mut body = Body::new(Framing::Chunked);
            assert!(matches!(
                c.body_to_end(&mut body, 100).await,
                Err(ReadError::Malformed(_))
            ));
        });
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        assert!(
            request_framing(&fields(&[("Content-Length", "3"), ("Content-Length", "4")])).is_err()
        );
        assert!(request_framing(&fields(&[("Content-Length", "+3")])).is_err());
        assert!(
            request_framing(&fields(&[
                ("Transfer-Encoding", "chunked"),
                ("Content-Length", "3")
            ]))
            .is_err()
        );
        assert!(request_framing(&fields(&[("Transfer-Encoding", "gzip, chunked")])).is_err());
        assert_eq!(
            request_framing(&fields(&[("Content-Length", "3, 3")])).unwrap(),
            Framing::Length(3)
        );
        assert_eq!(
            request_framing(&Vec::<(String, String)>::new()).unwrap(),
            Framing::Length(0)
        );
        assert_eq!(
            response_framing("GET", 200, &[]).unwrap(),
            Framing::UntilClose
        );
        assert_eq!(
            response_framing("HEAD", 200, &fields(&[("Content-Length", "9")])).unwrap(),
            Framing::Length(0)
        );
        assert_eq!(
            response_framing("POST", 204, &[]).unwrap(),
            Framing::Length(0)
        );
    }

    #[test]
    fn responses_skip_interim_and_read_until_close() {
        futures_lite::future::block_on(async {
            let mut c = conn(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\nall of it");
            let head = c.read_response().await.unwrap();
            assert_eq!(head.status, 200);
            assert!(!head.http11 && !keep_alive(head.http11, &head.headers));
            let framing = response_framing("GET", head.status, &head.headers).unwrap();
            let mut body = Body::new(framing);
            assert_eq!(
                c.body_to_end(&mut body, 100).await.unwrap().unwrap(),
                b"all of it"
            );
        });
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection() {
        assert!(keep_alive(true, &Vec::<(String, String)>::new()));
        assert!(!keep_alive(
            true,
            &fields(&[("Connection", "Keep-Alive, close")])
        ));
        assert!(!keep_alive(false, &Vec::<(String, String)>::new()));
        assert!(keep_alive(false, &fields(&[("connection", "keep-alive")])));
    }

    #[test]
    fn targets() {
        let t = Target::parse("http://127.0.0.1:8080/mcp?x=1#frag").unwrap();
        assert_eq!(
            (
                t.host.as_str(),
                t.port,
                t.authority.as_str(),
                t.path.as_str()
            ),
            ("127.0.0.1", 8080, "127.0.0.1:8080", "/mcp?x=1")
        );
        let t = Target::parse("HTTP://[::1]:9/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        let t = Target::parse("http://example.com?q").unwrap();
        assert_eq!((t.port, t.path.as_str()), (80, "/?q"));
        let s = Target::parse("https://a/").unwrap();
        assert!(s.tls && !t.tls);
        assert_eq!((s.port, s.server().as_str()), (443, "a:443"));
        assert!(Target::parse("ftp://a/").is_err());
        assert!(Target::parse("http://u@a/").is_err());
        assert!(Target::parse("http://a:x/").is_err());
        assert!(Target::parse("http:///x").is_err());
        assert!(Target::parse("http://a/b c").is_err());
        let head = t
            .head(
                "POST",
                &fields(&[("Accept", "x"), ("Host", "evil")]),
                2,
                true,
            )
            .unwrap();
        assert_eq!(
            head,
            "POST /?q HTTP/1.1\r\nHost: example.com\r\nAccept: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
        );
        assert!(
            t.head("GET", &fields(&[("X", "a\r\nB: c")]), 0, false)
                .is_err()
        );
    }
}
