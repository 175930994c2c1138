//! RFC 6570 URI templates: parse, expand, and match a URI back to its variables
//!
//! MCP servers publish resource templates (`resources/templates/list` → `uriTemplate`). A
//! server then has to [expand](UriTemplate::expand) them, and, for every `resources/read`, find
//! the template a concrete URI came from and recover its variables
//! ([`UriTemplate::matches`]). `completion/complete` with a `ref/resource` names a template and
//! one of its [variables](UriTemplate::variables).
//!
//! ```
//! use mcp_sansio::uri_template::{UriTemplate, Variables};
//!
//! let template = UriTemplate::parse("https://api.example.com/repos/{owner}/{repo}/issues{?state,labels}")?;
//! let vars: Variables = [("owner", "rust-lang"), ("repo", "rust"), ("state", "open")].into_iter().collect();
//! let uri = template.expand(&vars);
//! assert_eq!(uri, "https://api.example.com/repos/rust-lang/rust/issues?state=open");
//!
//! let found = template.matches("https://api.example.com/repos/a/b/issues?labels=bug&state=closed").unwrap();
//! assert_eq!(found.get_str("owner"), Some("a"));
//! assert_eq!(found.get_str("state"), Some("closed"));
//! assert_eq!(found.get_str("labels"), Some("bug"));
//! # Ok::<(), mcp_sansio::uri_template::TemplateError>(())
//! ```
//!
//! # Parsing
//!
//! [`UriTemplate::parse`] accepts the full RFC 6570 syntax (levels 1 to 4) and rejects
//! malformed templates with the byte offset and the problem: an unclosed `{`, a stray `}`, an
//! empty expression, a reserved or unknown operator, a bad variable name, a prefix length
//! outside `1..=9999`, a prefix together with explode, a `%` not followed by two hex digits,
//! or a character the RFC does not allow in a literal (space, `"`, `'`, `<`, `>`, `\`, `^`,
//! `` ` ``, `|`, control characters). Non-ASCII literal characters are allowed and
//! percent-encoded, as the RFC says.
//!
//! # Expansion
//!
//! [`UriTemplate::expand`] follows the algorithm of RFC 6570 appendix A exactly: all eight
//! operators (none, `+`, `#`, `.`, `/`, `;`, `?`, `&`), explode (`*`) and prefix (`:n`, counted
//! in Unicode scalar values). Values are strings, lists, or ordered key/value maps
//! ([`TemplateValue`]). A variable absent from [`Variables`], an empty list and an empty map
//! are all *undefined* and skipped; an empty string is defined.
//!
//! # Matching
//!
//! [`UriTemplate::matches`] is the inverse of expansion, for `resources/read`. It answers the
//! values of the variables if `uri` could be an expansion of the template, else `None`. The
//! rules:
//!
//! - **Literals** must match byte for byte. A template's literals are stored percent-encoded
//!   as expansion writes them (`é` becomes `%C3%A9`), and the URI is compared as is; no
//!   normalization is done on either side.
//! - **Values are percent-decoded.** A `%XX` sequence that does not decode to UTF-8 is kept
//!   as its three characters. Positions inside a `%XX` triplet are never split. Operators
//!   `+` and `#` pass `%XX` through on expansion, so for them a triplet of a character they
//!   would have written raw (unreserved or reserved, e.g. `%2F`) stays encoded: `{+path}`
//!   gives `a%2Fb` for `a%2Fb`, distinct from `a/b` for `a/b`; `%20` still becomes a space.
//! - **Operators none and `+`** (no prefix character): the expression must match at least one
//!   character. A variable of operator none matches a run of characters without any reserved
//!   character (`:/?#[]@!$&'()*+,;=`), so `users://{id}/profile` stops `id` at the `/`. A
//!   variable of `+` (and `#`) may contain anything, reserved characters included, so
//!   `file:///{+path}` matches `file:///a/b/c` with `path = "a/b/c"`.
//! - **Operators `#`, `.` and `/`** match their prefix character and then the values,
//!   separated by `,`, `.` and `/`; the whole expression is optional (`{.format}` may be
//!   absent). A `.` variable may contain `.` and a `#` variable anything, while a `/`
//!   variable is one segment.
//! - **Several variables in one unnamed expression** (`{x,y}`, `{/a,b}`) take the separated
//!   values in order; trailing variables with no value are left unset.
//! - **Explode in an unnamed expression** (`{/list*}`, `{.dom*}`, `{list*}`) matches a run of
//!   separated items into a [`TemplateValue::List`]; if every item has a raw `=` it is a
//!   [`TemplateValue::Map`] instead (`{/keys*}` on `/a=1/b=2`).
//! - **Operators `?`, `&` and `;`** match `name=value` parameters (or a bare `name`, value
//!   `""`) **in any order, each optional**; an absent parameter leaves its variable unset. A
//!   repeated name of a non-exploded variable keeps its first value. An exploded variable
//!   collects every parameter with its name into a list; the first exploded variable of the
//!   expression also takes parameters with unknown names, becoming a map (`{?keys*}`). A
//!   parameter with an unknown name and no exploded variable to take it fails the match.
//!   A `?`/`&` value runs to the next `&` or `#`; a `;` value to the next `;`, `/`, `?` or `#`.
//! - **Prefix** (`{var:3}`) limits the matched value to that many characters.
//! - **A variable repeated in the template** takes the value of its first occurrence; later
//!   occurrences are matched by shape only.
//! - **Every non-exploded variable matches as a [`TemplateValue::String`]**, even one whose
//!   text has commas.
//!
//! When several splits work, variables are settled **left to right**, each taking the
//! **longest** value with which the rest of the URI can still match, with one refinement: a
//! variable first tries to stop before the character that follows it in the template (the
//! next literal's first character, the next expression's prefix character, or the separator
//! before the next variable of its expression), and goes past it only if nothing else
//! matches. So `db://{table}/{id}{.format}` splits `db://t/42.json` into `id = "42"` and
//! `format = "json"`, `{+path,x}` splits `/foo/bar,1024` at the comma, and `{path}.txt`
//! still matches `a.b.txt` with `path = "a.b"`. A present value is preferred to an absent one.
//!
//! ## Cost
//!
//! Matching never backtracks exponentially. It compiles the template into a chain of at most
//! `2 × variables + parts + 1` states and computes, from right to left, which (state, URI
//! position) pairs can still reach the end; each cell costs O(1) amortized (O(log n) with a
//! prefix modifier, O(length) for a literal), so the whole match is
//! O(template length × URI length), and the final left-to-right walk that picks the split
//! never revisits a choice. The table is bounded: when states × (URI length + 2) exceeds
//! 4 194 304 cells, `matches` gives up and returns `None` rather than allocate more.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::str::FromStr;

/// A parsed RFC 6570 URI template
///
/// Two templates are equal when their source strings are equal.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
    names: Vec<String>,
}

/// The value of one template variable
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TemplateValue {
    /// A string; the empty string is defined (`{?x}` expands to `?x=`)
    String(String),
    /// A list of strings; an empty list is undefined
    List(Vec<String>),
    /// An ordered list of key/value pairs; an empty map is undefined
    Map(Vec<(String, String)>),
}

/// Variable values by name, in insertion order
///
/// Build one with [`Variables::insert`] or collect it from pairs:
///
/// ```
/// use mcp_sansio::uri_template::{TemplateValue, Variables};
///
/// let mut vars: Variables = [("id", "42")].into_iter().collect();
/// vars.insert("tags", vec!["a".to_string(), "b".to_string()]);
/// assert_eq!(vars.get_str("id"), Some("42"));
/// assert!(matches!(vars.get("tags"), Some(TemplateValue::List(_))));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    entries: Vec<(String, TemplateValue)>,
}

/// Why a template failed to parse: where, and what is wrong
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template at byte {position}: {kind}")]
pub struct TemplateError {
    position: usize,
    kind: TemplateErrorKind,
}

/// The problem a [`TemplateError`] reports
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateErrorKind {
    /// A `{` with no `}` after it
    #[error("unclosed '{{'")]
    UnclosedExpression,
    /// A `}` outside any expression
    #[error("'}}' without a matching '{{'")]
    UnmatchedClose,
    /// A `{` inside an expression
    #[error("'{{' inside an expression")]
    NestedBrace,
    /// `{}`
    #[error("empty expression")]
    EmptyExpression,
    /// One of the operators RFC 6570 reserves for future extensions: `=`, `,`, `!`, `@`, `|`
    #[error("operator '{0}' is reserved for future extensions")]
    ReservedOperator(char),
    /// Punctuation that is neither an operator nor the start of a variable name
    #[error("unknown operator '{0}'")]
    UnknownOperator(char),
    /// An empty variable name, e.g. `{a,}` or `{:3}`
    #[error("empty variable name")]
    EmptyVariableName,
    /// A character that is not allowed in a variable name here (names are letters, digits,
    /// `_`, `%XX`, and single dots between them)
    #[error("invalid character in variable name")]
    InvalidVariableName,
    /// A prefix length that is not a number from 1 to 9999 without leading zeros
    #[error("prefix length must be a number from 1 to 9999")]
    InvalidPrefix,
    /// Both a prefix and explode on one variable (`{var:3*}`, `{var*:3}`)
    #[error("a variable cannot have both a prefix and explode")]
    ExplodeWithPrefix,
    /// A `%` not followed by two hex digits
    #[error("'%' not followed by two hex digits")]
    InvalidPercentEncoding,
    /// A character RFC 6570 does not allow in a literal
    #[error("character {0:?} is not allowed in a URI template")]
    InvalidLiteral(char),
}

impl TemplateError {
    /// Byte offset in the template where the problem is
    pub fn position(&self) -> usize {
        self.position
    }

    /// What the problem is
    pub fn kind(&self) -> &TemplateErrorKind {
        &self.kind
    }
}

// ---------------------------------------------------------------------------------------------
// The parsed form

#[derive(Debug, Clone)]
enum Part {
    /// Literal text, percent-encoded as expansion writes it
    Literal(String),
    Expr(Expr),
}

#[derive(Debug, Clone)]
struct Expr {
    op: Op,
    vars: Vec<VarSpec>,
}

#[derive(Debug, Clone)]
struct VarSpec {
    name: String,
    /// Index in `UriTemplate::names`
    id: usize,
    modifier: Modifier,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    Prefix(u16),
    Explode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    /// The character written before the first defined value
    fn first(self) -> Option<u8> {
        match self {
            Self::Simple | Self::Reserved => None,
            Self::Fragment => Some(b'#'),
            Self::Label => Some(b'.'),
            Self::Path => Some(b'/'),
            Self::PathParam => Some(b';'),
            Self::Query => Some(b'?'),
            Self::QueryCont => Some(b'&'),
        }
    }

    fn sep(self) -> u8 {
        match self {
            Self::Simple | Self::Reserved | Self::Fragment => b',',
            Self::Label => b'.',
            Self::Path => b'/',
            Self::PathParam => b';',
            Self::Query | Self::QueryCont => b'&',
        }
    }

    fn named(self) -> bool {
        matches!(self, Self::PathParam | Self::Query | Self::QueryCont)
    }

    fn if_empty(self) -> &'static str {
        match self {
            Self::Query | Self::QueryCont => "=",
            _ => "",
        }
    }

    fn allow_reserved(self) -> bool {
        matches!(self, Self::Reserved | Self::Fragment)
    }
}

const RESERVED: &[u8] = b":/?#[]@!$&'()*+,;=";

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_hex_triplet(bytes: &[u8], i: usize) -> bool {
    bytes.get(i) == Some(&b'%')
        && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
        && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

fn push_pct(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 0xF)]));
}

/// Whether RFC 6570 allows this ASCII character in a literal (`%` is handled apart)
fn is_literal_ascii(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x24 | 0x26 | 0x28..=0x3B | 0x3D | 0x3F..=0x5B | 0x5D | 0x5F | 0x61..=0x7A | 0x7E)
}

// ---------------------------------------------------------------------------------------------
// Parsing

impl UriTemplate {
    /// Parses a template
    ///
    /// Errors name the byte offset and the problem; see [`TemplateErrorKind`].
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let bytes = template.as_bytes();
        let mut parser = Parser {
            parts: Vec::new(),
            names: Vec::new(),
            ids: HashMap::new(),
        };
        let mut literal = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'{' => {
                    if !literal.is_empty() {
                        parser
                            .parts
                            .push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    i = parser.expression(template, i)?;
                }
                b'}' => return Err(error(i, TemplateErrorKind::UnmatchedClose)),
                b'%' => {
                    if !is_hex_triplet(bytes, i) {
                        return Err(error(i, TemplateErrorKind::InvalidPercentEncoding));
                    }
                    literal.push_str(&template[i..i + 3]);
                    i += 3;
                }
                _ if b.is_ascii() => {
                    if !is_literal_ascii(b) {
                        return Err(error(i, TemplateErrorKind::InvalidLiteral(char::from(b))));
                    }
                    literal.push(char::from(b));
                    i += 1;
                }
                _ => {
                    let c = template[i..]
                        .chars()
                        .next()
                        .expect("i is on a char boundary");
                    let mut buf = [0; 4];
                    for &byte in c.encode_utf8(&mut buf).as_bytes() {
                        push_pct(&mut literal, byte);
                    }
                    i += c.len_utf8();
                }
            }
        }
        if !literal.is_empty() {
            parser.parts.push(Part::Literal(literal));
        }
        Ok(Self {
            source: template.to_owned(),
            parts: parser.parts,
            names: parser.names,
        })
    }

    /// The template as written
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Variable names in order of first appearance, each once
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

fn error(position: usize, kind: TemplateErrorKind) -> TemplateError {
    TemplateError { position, kind }
}

struct Parser {
    parts: Vec<Part>,
    names: Vec<String>,
    ids: HashMap<String, usize>,
}

impl Parser {
    /// Parses the expression whose `{` is at `open`; returns the offset after its `}`
    fn expression(&mut self, template: &str, open: usize) -> Result<usize, TemplateError> {
        let bytes = template.as_bytes();
        let mut close = open + 1;
        loop {
            match bytes.get(close) {
                None => return Err(error(open, TemplateErrorKind::UnclosedExpression)),
                Some(b'}') => break,
                Some(b'{') => return Err(error(close, TemplateErrorKind::NestedBrace)),
                Some(_) => close += 1,
            }
        }
        if close == open + 1 {
            return Err(error(open, TemplateErrorKind::EmptyExpression));
        }
        let mut start = open + 1;
        let op = match bytes[start] {
            b'+' => Op::Reserved,
            b'#' => Op::Fragment,
            b'.' => Op::Label,
            b'/' => Op::Path,
            b';' => Op::PathParam,
            b'?' => Op::Query,
            b'&' => Op::QueryCont,
            c @ (b'=' | b',' | b'!' | b'@' | b'|') => {
                return Err(error(
                    start,
                    TemplateErrorKind::ReservedOperator(char::from(c)),
                ));
            }
            c if c.is_ascii_punctuation() && !matches!(c, b'_' | b'%' | b':' | b'*') => {
                return Err(error(
                    start,
                    TemplateErrorKind::UnknownOperator(char::from(c)),
                ));
            }
            _ => Op::Simple,
        };
        if op != Op::Simple {
            start += 1;
        }
        let mut vars = Vec::new();
        loop {
            let end = bytes[start..close]
                .iter()
                .position(|&b| b == b',')
                .map_or(close, |p| start + p);
            vars.push(self.varspec(template, start, end)?);
            if end == close {
                break;
            }
            start = end + 1;
        }
        self.parts.push(Part::Expr(Expr { op, vars }));
        Ok(close + 1)
    }

    /// Parses the varspec in `template[start..end]`
    fn varspec(
        &mut self,
        template: &str,
        start: usize,
        end: usize,
    ) -> Result<VarSpec, TemplateError> {
        let bytes = template.as_bytes();
        let mut i = start;
        // varname = varchar *( ["."] varchar )
        let mut after_dot = true;
        while i < end {
            match bytes[i] {
                b'%' => {
                    if !is_hex_triplet(&bytes[..end], i) {
                        return Err(error(i, TemplateErrorKind::InvalidPercentEncoding));
                    }
                    i += 3;
                    after_dot = false;
                }
                b'.' if !after_dot => {
                    i += 1;
                    after_dot = true;
                }
                b if b.is_ascii_alphanumeric() || b == b'_' => {
                    i += 1;
                    after_dot = false;
                }
                b':' | b'*' => break,
                _ => return Err(error(i, TemplateErrorKind::InvalidVariableName)),
            }
        }
        if i == start {
            return Err(error(start, TemplateErrorKind::EmptyVariableName));
        }
        if after_dot {
            // A trailing dot
            return Err(error(i - 1, TemplateErrorKind::InvalidVariableName));
        }
        let name = &template[start..i];
        let modifier = match bytes.get(i).filter(|_| i < end) {
            None => Modifier::None,
            Some(b'*') => {
                match bytes[i + 1..end].first() {
                    None => {}
                    Some(b':') => return Err(error(i + 1, TemplateErrorKind::ExplodeWithPrefix)),
                    Some(_) => return Err(error(i + 1, TemplateErrorKind::InvalidVariableName)),
                }
                Modifier::Explode
            }
            Some(_) => {
                // ':' max-length, max-length = %x31-39 0*3DIGIT
                let digits_start = i + 1;
                let digits_end = bytes[digits_start..end]
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .map_or(end, |p| digits_start + p);
                if digits_end < end {
                    let kind = if bytes[digits_end] == b'*' {
                        TemplateErrorKind::ExplodeWithPrefix
                    } else {
                        TemplateErrorKind::InvalidPrefix
                    };
                    return Err(error(digits_end, kind));
                }
                let digits = &template[digits_start..digits_end];
                if digits.is_empty() || digits.len() > 4 || digits.starts_with('0') {
                    return Err(error(i, TemplateErrorKind::InvalidPrefix));
                }
                Modifier::Prefix(digits.parse().expect("one to four ASCII digits"))
            }
        };
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = self.names.len();
                self.names.push(name.to_owned());
                self.ids.insert(name.to_owned(), id);
                id
            }
        };
        Ok(VarSpec {
            name: name.to_owned(),
            id,
            modifier,
        })
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for UriTemplate {}

impl std::hash::Hash for UriTemplate {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.source.hash(state);
    }
}

impl serde::Serialize for UriTemplate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

impl<'de> serde::Deserialize<'de> for UriTemplate {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let source = String::deserialize(deserializer)?;
        Self::parse(&source).map_err(serde::de::Error::custom)
    }
}

// ---------------------------------------------------------------------------------------------
// Values

impl TemplateValue {
    /// The string, if this is a [`TemplateValue::String`]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether expansion treats this value as defined: every string, non-empty lists and maps
    pub(crate) fn is_defined(&self) -> bool {
        match self {
            Self::String(_) => true,
            Self::List(items) => !items.is_empty(),
            Self::Map(pairs) => !pairs.is_empty(),
        }
    }
}

impl From<String> for TemplateValue {
    fn from(value: String) -> Self {
        Self::String(value)
    }
}

impl From<&str> for TemplateValue {
    fn from(value: &str) -> Self {
        Self::String(value.to_owned())
    }
}

impl From<Vec<String>> for TemplateValue {
    fn from(items: Vec<String>) -> Self {
        Self::List(items)
    }
}

impl From<Vec<&str>> for TemplateValue {
    fn from(items: Vec<&str>) -> Self {
        Self::List(items.into_iter().map(str::to_owned).collect())
    }
}

impl From<Vec<(String, String)>> for TemplateValue {
    fn from(pairs: Vec<(String, String)>) -> Self {
        Self::Map(pairs)
    }
}

impl From<Vec<(&str, &str)>> for TemplateValue {
    fn from(pairs: Vec<(&str, &str)>) -> Self {
        Self::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        )
    }
}

impl Variables {
    /// No variables
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `name`, if set
    pub fn get(&self, name: &str) -> Option<&TemplateValue> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The value of `name` if it is set to a string
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(TemplateValue::as_str)
    }

    /// Sets `name`; returns the value it replaces, which keeps its place in the order
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        value: impl Into<TemplateValue>,
    ) -> Option<TemplateValue> {
        let name = name.into();
        let value = value.into();
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                self.entries.push((name, value));
                None
            }
        }
    }

    /// Unsets `name`; returns its value
    pub fn remove(&mut self, name: &str) -> Option<TemplateValue> {
        let index = self.entries.iter().position(|(n, _)| n == name)?;
        Some(self.entries.remove(index).1)
    }

    /// Whether `name` is set
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// How many variables are set
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no variable is set
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The variables in insertion order
    pub fn iter(&self) -> impl Iterator<Item = (&str, &TemplateValue)> {
        self.entries.iter().map(|(n, v)| (n.as_str(), v))
    }
}

impl<K: Into<String>, V: Into<TemplateValue>> FromIterator<(K, V)> for Variables {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut vars = Self::new();
        vars.extend(iter);
        vars
    }
}

impl<K: Into<String>, V: Into<TemplateValue>> Extend<(K, V)> for Variables {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl IntoIterator for Variables {
    type Item = (String, TemplateValue);
    type IntoIter = std::vec::IntoIter<(String, TemplateValue)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

// ---------------------------------------------------------------------------------------------
// Expansion

impl UriTemplate {
    /// Expands the template with these values (RFC 6570 section 3)
    ///
    /// Variables missing from `vars`, empty lists and empty maps are undefined and skipped.
    /// Expansion cannot fail.
    pub fn expand(&self, vars: &Variables) -> String {
        let mut out = String::with_capacity(self.source.len() + 16);
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Expr(expr) => expand_expr(expr, vars, &mut out),
            }
        }
        out
    }
}

fn expand_expr(expr: &Expr, vars: &Variables, out: &mut String) {
    let op = expr.op;
    let allow = op.allow_reserved();
    let sep = char::from(op.sep());
    let mut first = true;
    for spec in &expr.vars {
        let Some(value) = vars.get(&spec.name).filter(|v| v.is_defined()) else {
            continue;
        };
        if first {
            if let Some(c) = op.first() {
                out.push(char::from(c));
            }
            first = false;
        } else {
            out.push(sep);
        }
        let explode = spec.modifier == Modifier::Explode;
        match value {
            TemplateValue::String(s) => {
                if op.named() {
                    out.push_str(&spec.name);
                    if s.is_empty() {
                        out.push_str(op.if_empty());
                        continue;
                    }
                    out.push('=');
                }
                let s = match spec.modifier {
                    Modifier::Prefix(n) => truncate_chars(s, usize::from(n)),
                    _ => s,
                };
                encode(s, allow, out);
            }
            TemplateValue::List(items) if explode => {
                for (j, item) in items.iter().enumerate() {
                    if j > 0 {
                        out.push(sep);
                    }
                    if op.named() {
                        out.push_str(&spec.name);
                        if item.is_empty() {
                            out.push_str(op.if_empty());
                            continue;
                        }
                        out.push('=');
                    }
                    encode(item, allow, out);
                }
            }
            TemplateValue::Map(pairs) if explode => {
                for (j, (key, val)) in pairs.iter().enumerate() {
                    if j > 0 {
                        out.push(sep);
                    }
                    encode(key, allow, out);
                    if op.named() && val.is_empty() {
                        out.push_str(op.if_empty());
                    } else {
                        out.push('=');
                        encode(val, allow, out);
                    }
                }
            }
            TemplateValue::List(items) => {
                if op.named() {
                    out.push_str(&spec.name);
                    out.push('=');
                }
                for (j, item) in items.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    encode(item, allow, out);
                }
            }
            TemplateValue::Map(pairs) => {
                if op.named() {
                    out.push_str(&spec.name);
                    out.push('=');
                }
                for (j, (key, val)) in pairs.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    encode(key, allow, out);
                    out.push(',');
                    encode(val, allow, out);
                }
            }
        }
    }
}

fn truncate_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// Percent-encodes `s`: unreserved characters pass; with `allow_reserved`, reserved characters
/// and valid `%XX` triplets pass too
fn encode(s: &str, allow_reserved: bool, out: &mut String) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if is_unreserved(b) || (allow_reserved && RESERVED.contains(&b)) {
            out.push(char::from(b));
        } else if allow_reserved && is_hex_triplet(bytes, i) {
            out.push_str(&s[i..i + 3]);
            i += 3;
            continue;
        } else {
            push_pct(out, b);
        }
        i += 1;
    }
}

/// Percent-decodes `raw`; a decoded byte sequence that is not UTF-8 keeps its `%XX` form.
/// With `reserved` (operators `+` and `#`, whose expansion passes `%XX` through), a triplet
/// of a character that expansion would not have encoded (unreserved or reserved) stays as is.
fn decode(raw: &[u8], reserved: bool) -> String {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let decoded =
            is_hex_triplet(raw, i).then(|| hex_value(raw[i + 1]) << 4 | hex_value(raw[i + 2]));
        if let Some(b) =
            decoded.filter(|&b| !(reserved && (is_unreserved(b) || RESERVED.contains(&b))))
        {
            bytes.push(b);
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let bytes = e.into_bytes();
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for &b in chunk.invalid() {
                    push_pct(&mut out, b);
                }
            }
            out
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Matching

/// Most cells (states × (URI length + 2)) the matching table may have
const MAX_CELLS: usize = 1 << 22;

/// A set of ASCII bytes as a bitmask; pct triplets and non-ASCII characters belong to every class
type Class = u128;

const fn class_without(excluded: &[u8]) -> Class {
    let mut mask = u128::MAX;
    let mut i = 0;
    while i < excluded.len() {
        mask &= !(1u128 << excluded[i]);
        i += 1;
    }
    mask
}

const CLASS_ANY: Class = u128::MAX;
const CLASS_UNRESERVED: Class = class_without(RESERVED);
const CLASS_PATH_PARAM_VALUE: Class = class_without(b";/?#");
const CLASS_QUERY_VALUE: Class = class_without(b"&#");

/// One state of the compiled template
enum Node<'t> {
    Literal(&'t [u8]),
    /// Variable `spec` of an unnamed expression, before or after its first value (`started`)
    Var {
        spec: &'t VarSpec,
        sep: u8,
        /// Operator `+` or `#`: `%XX` of reserved and unreserved characters is not decoded
        reserved: bool,
        /// The character a present value starts with: the operator's first, or the separator
        lead: Option<u8>,
        /// A present value must not be empty (operators none and `+`, first value)
        non_empty: bool,
        class: usize,
        present: usize,
        absent: Option<usize>,
        stop: Option<u8>,
    },
    /// A whole `;`, `?` or `&` expression
    Named {
        expr: &'t Expr,
        names: HashMap<&'t [u8], usize>,
        catch_all: Option<usize>,
        name_class: usize,
        value_class: usize,
        stop: Option<u8>,
    },
    Accept,
}

/// One `name[=value]` parameter of a named expression, found after a delimiter
struct Param {
    name: (usize, usize),
    /// Index of the variable in the expression that takes it
    var: usize,
    /// Where the value starts, if there is an `=`
    value: Option<usize>,
    /// Candidate ends: `lo..=hi`
    lo: usize,
    hi: usize,
    /// Where the parameter's text runs out
    full: usize,
}

struct Matcher<'u, 't> {
    uri: &'u [u8],
    n: usize,
    /// Token length at each token start, 0 elsewhere (and at `n`)
    tok: Vec<u8>,
    /// Decoded characters before each position
    chars: Vec<u32>,
    /// For each class: at each token start, where the run of tokens in the class ends
    runs: Vec<Vec<u32>>,
    nodes: Vec<Node<'t>>,
    /// Per node: the smallest live position at or after each position (`n + 1` if none)
    next_live: Vec<Vec<u32>>,
    /// Per named node: whether parameters starting after a delimiter here can end the expression
    params_live: Vec<Vec<bool>>,
}

impl UriTemplate {
    /// Matches a concrete URI against this template, for `resources/read`
    ///
    /// Returns the percent-decoded values of the variables if `uri` is an expansion of this
    /// template (in the order of [`variables`](Self::variables); variables with no value are
    /// absent), else `None`. See the [module documentation](self) for the rules and the cost.
    pub fn matches(&self, uri: &str) -> Option<Variables> {
        let mut matcher = Matcher::new(self, uri)?;
        matcher.solve();
        matcher.extract(self.names.len()).map(|values| {
            let entries = values
                .into_iter()
                .zip(&self.names)
                .filter_map(|(v, name)| v.map(|v| (name.clone(), v)))
                .collect();
            Variables { entries }
        })
    }
}

impl<'u, 't> Matcher<'u, 't> {
    fn new(template: &'t UriTemplate, uri: &'u str) -> Option<Self> {
        let bytes = uri.as_bytes();
        let n = bytes.len();
        let mut classes: Vec<Class> = Vec::new();
        let mut class_index = |c: Class| match classes.iter().position(|&k| k == c) {
            Some(i) => i,
            None => {
                classes.push(c);
                classes.len() - 1
            }
        };
        let mut nodes = Vec::new();
        for (pi, part) in template.parts.iter().enumerate() {
            let stop_after = match template.parts.get(pi + 1) {
                Some(Part::Literal(text)) => text.as_bytes().first().copied(),
                Some(Part::Expr(e)) => e.op.first(),
                None => None,
            };
            match part {
                Part::Literal(text) => nodes.push(Node::Literal(text.as_bytes())),
                Part::Expr(expr) if expr.op.named() => {
                    let names = expr
                        .vars
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, v)| (v.name.as_bytes(), i))
                        .collect();
                    let catch_all = expr
                        .vars
                        .iter()
                        .position(|v| v.modifier == Modifier::Explode);
                    let value_class = if expr.op == Op::PathParam {
                        CLASS_PATH_PARAM_VALUE
                    } else {
                        CLASS_QUERY_VALUE
                    };
                    nodes.push(Node::Named {
                        expr,
                        names,
                        catch_all,
                        name_class: class_index(CLASS_UNRESERVED),
                        value_class: class_index(value_class),
                        stop: stop_after,
                    });
                }
                Part::Expr(expr) => {
                    let op = expr.op;
                    let base = nodes.len();
                    let k = expr.vars.len();
                    let exit = base + 2 * k;
                    for (i, spec) in expr.vars.iter().enumerate() {
                        let last = i + 1 == k;
                        let explode = spec.modifier == Modifier::Explode;
                        let class = match (op.allow_reserved(), explode) {
                            (true, _) => CLASS_ANY,
                            (false, false) => CLASS_UNRESERVED,
                            (false, true) => CLASS_UNRESERVED | 1u128 << op.sep() | 1u128 << b'=',
                        };
                        let class = class_index(class);
                        for started in [false, true] {
                            let next = |s: bool| {
                                if last {
                                    exit
                                } else {
                                    base + 2 * (i + 1) + usize::from(s)
                                }
                            };
                            let absent = (!(last && !started && op.first().is_none()))
                                .then(|| next(started));
                            nodes.push(Node::Var {
                                spec,
                                sep: op.sep(),
                                reserved: op.allow_reserved(),
                                lead: if started { Some(op.sep()) } else { op.first() },
                                non_empty: !started && op.first().is_none(),
                                class,
                                present: next(true),
                                absent,
                                stop: if last { stop_after } else { Some(op.sep()) },
                            });
                        }
                    }
                }
            }
        }
        nodes.push(Node::Accept);
        if nodes.len().saturating_mul(n + 2) > MAX_CELLS {
            return None;
        }

        // Tokens, which a value never splits: the `%XX` triplets of one UTF-8 character, a
        // lone `%XX`, one ASCII byte, or one raw multi-byte character
        let mut tok = vec![0u8; n + 1];
        let mut chars = vec![0u32; n + 1];
        let mut starts = Vec::new();
        let mut count = 0u32;
        let mut p = 0;
        while p < n {
            let len = if is_hex_triplet(bytes, p) {
                3 * encoded_char_len(bytes, p)
            } else if bytes[p].is_ascii() {
                1
            } else {
                uri[p..]
                    .chars()
                    .next()
                    .expect("p is on a char boundary")
                    .len_utf8()
            };
            tok[p] = u8::try_from(len).expect("a token is at most 12 bytes");
            starts.push(p);
            count += 1;
            chars[p + 1..=p + len].fill(count);
            p += len;
        }
        let n32 = u32::try_from(n).expect("bounded by MAX_CELLS");
        let runs = classes
            .iter()
            .map(|&class| {
                let mut run = vec![0u32; n + 1];
                run[n] = n32;
                for &s in starts.iter().rev() {
                    let in_class = tok[s] != 1 || class & (1u128 << bytes[s]) != 0;
                    run[s] = if in_class {
                        run[s + usize::from(tok[s])]
                    } else {
                        s as u32
                    };
                }
                run
            })
            .collect();
        let count = nodes.len();
        Some(Self {
            uri: bytes,
            n,
            tok,
            chars,
            runs,
            nodes,
            next_live: vec![Vec::new(); count],
            params_live: vec![Vec::new(); count],
        })
    }

    fn is_boundary(&self, x: usize) -> bool {
        x == self.n || self.tok[x] != 0
    }

    fn run_end(&self, class: usize, x: usize) -> usize {
        self.runs[class][x] as usize
    }

    fn live(&self, node: usize, x: usize) -> bool {
        self.next_live[node][x] as usize == x
    }

    /// Whether `node` is live somewhere in `lo..=hi`
    fn live_in(&self, node: usize, lo: usize, hi: usize) -> bool {
        lo <= hi && self.next_live[node][lo] as usize <= hi
    }

    /// The last position at or after `lo` that is at most `max` characters past it
    fn char_limit(&self, lo: usize, max: u16) -> usize {
        let target = self.chars[lo] + u32::from(max);
        let first_over = lo + self.chars[lo..].partition_point(|&c| c <= target);
        first_over - 1
    }

    /// Fills `next_live` (and `params_live`) from the last state to the first
    fn solve(&mut self) {
        let n = self.n;
        for node in (0..self.nodes.len()).rev() {
            let mut next_live = vec![0u32; n + 2];
            next_live[n + 1] = (n + 1) as u32;
            let mut params = vec![
                false;
                if matches!(self.nodes[node], Node::Named { .. }) {
                    n + 1
                } else {
                    0
                }
            ];
            for x in (0..=n).rev() {
                let live = self.is_boundary(x) && self.live_at(node, x, &mut params);
                next_live[x] = if live { x as u32 } else { next_live[x + 1] };
            }
            self.next_live[node] = next_live;
            self.params_live[node] = params;
        }
    }

    /// Whether `node` can match from `x` to the end; `params` is the node's own
    /// `params_live`, filled for positions after `x` already
    fn live_at(&self, node: usize, x: usize, params: &mut [bool]) -> bool {
        match &self.nodes[node] {
            Node::Accept => x == self.n,
            Node::Literal(text) => {
                let end = x + text.len();
                self.uri[x..].starts_with(text) && self.is_boundary(end) && self.live(node + 1, end)
            }
            Node::Var {
                present, absent, ..
            } => {
                absent.is_some_and(|a| self.live(a, x))
                    || self
                        .var_range(node, x)
                        .is_some_and(|(_, lo, hi)| self.live_in(*present, lo, hi))
            }
            Node::Named { expr, .. } => {
                if x < self.n
                    && (self.uri[x] == expr.op.first().expect("named")
                        || self.uri[x] == expr.op.sep())
                {
                    params[x] = self.param(node, x).is_some_and(|p| {
                        self.live_in(node + 1, p.lo, p.hi)
                            || self.continues(&p, expr.op.sep(), params)
                    });
                }
                self.live(node + 1, x)
                    || (x < self.n && self.uri[x] == expr.op.first().expect("named") && params[x])
            }
        }
    }

    /// For a `Var` node at `x`: where a present value starts, and its candidate ends `lo..=hi`
    fn var_range(&self, node: usize, x: usize) -> Option<(usize, usize, usize)> {
        let Node::Var {
            spec,
            lead,
            non_empty,
            class,
            ..
        } = &self.nodes[node]
        else {
            unreachable!("var_range on a Var node")
        };
        let mut start = x;
        if let Some(c) = lead {
            if self.uri.get(x) != Some(c) {
                return None;
            }
            start += 1;
        }
        let mut hi = self.run_end(*class, start);
        if let Modifier::Prefix(max) = spec.modifier {
            hi = hi.min(self.char_limit(start, max));
        }
        let lo = if *non_empty {
            if start == self.n {
                return None;
            }
            start + usize::from(self.tok[start])
        } else {
            start
        };
        (lo <= hi).then_some((start, lo, hi))
    }

    /// For a `Named` node: the parameter after the delimiter at `x`
    fn param(&self, node: usize, x: usize) -> Option<Param> {
        let Node::Named {
            expr,
            names,
            catch_all,
            name_class,
            value_class,
            ..
        } = &self.nodes[node]
        else {
            unreachable!("param on a Named node")
        };
        let start = x + 1;
        let name_end = self.run_end(*name_class, start);
        if name_end == start {
            return None;
        }
        let var = names
            .get(&self.uri[start..name_end])
            .copied()
            .or(*catch_all)?;
        let spec = &expr.vars[var];
        let known = spec.name.as_bytes() == &self.uri[start..name_end];
        if self.uri.get(name_end) != Some(&b'=') {
            return Some(Param {
                name: (start, name_end),
                var,
                value: None,
                lo: name_end,
                hi: name_end,
                full: name_end,
            });
        }
        let value = name_end + 1;
        let full = self.run_end(*value_class, value);
        let hi = match spec.modifier {
            Modifier::Prefix(max) if known => full.min(self.char_limit(value, max)),
            _ => full,
        };
        Some(Param {
            name: (start, name_end),
            var,
            value: Some(value),
            lo: value,
            hi,
            full,
        })
    }

    /// Whether the parameters can go on after `p`
    fn continues(&self, p: &Param, sep: u8, params: &[bool]) -> bool {
        p.hi == p.full && self.uri.get(p.full) == Some(&sep) && params[p.full]
    }

    /// The preferred end in `lo..=hi` where `target` is live: the longest that does not
    /// contain `stop` past `from`, else the longest
    fn choose(
        &self,
        target: usize,
        from: usize,
        lo: usize,
        hi: usize,
        stop: Option<u8>,
    ) -> Option<usize> {
        let limit = stop
            .and_then(|c| (from..hi).find(|&q| self.is_boundary(q) && self.uri[q] == c))
            .unwrap_or(hi);
        (lo..=limit.min(hi))
            .rev()
            .find(|&e| self.live(target, e))
            .or_else(|| (limit.max(lo)..=hi).rev().find(|&e| self.live(target, e)))
    }

    /// Walks the live states from the start, choosing each split by the preference rules
    fn extract(&self, var_count: usize) -> Option<Vec<Option<TemplateValue>>> {
        if !self.live(0, 0) {
            return None;
        }
        let mut values: Vec<Option<TemplateValue>> = vec![None; var_count];
        let mut node = 0;
        let mut x = 0;
        loop {
            match &self.nodes[node] {
                Node::Accept => return Some(values),
                Node::Literal(text) => {
                    x += text.len();
                    node += 1;
                }
                Node::Var {
                    spec,
                    sep,
                    reserved,
                    present,
                    absent,
                    stop,
                    ..
                } => {
                    let chosen = self
                        .var_range(node, x)
                        .filter(|&(_, lo, hi)| self.live_in(*present, lo, hi))
                        .and_then(|(start, lo, hi)| {
                            self.choose(*present, start, lo, hi, *stop)
                                .map(|e| (start, e))
                        });
                    match chosen {
                        Some((start, end)) => {
                            let raw = &self.uri[start..end];
                            if values[spec.id].is_none() {
                                values[spec.id] = Some(if spec.modifier == Modifier::Explode {
                                    unnamed_exploded(raw, *sep, *reserved)
                                } else {
                                    TemplateValue::String(decode(raw, *reserved))
                                });
                            }
                            node = *present;
                            x = end;
                        }
                        None => node = absent.expect("a live Var node has a live way on"),
                    }
                }
                Node::Named { expr, stop, .. } => {
                    let first = expr.op.first().expect("named");
                    let params = &self.params_live[node];
                    if x < self.n && self.uri[x] == first && params[x] {
                        // Entries of exploded variables: (key, value, came under its own name)
                        let mut exploded: Vec<Vec<(String, String, bool)>> =
                            vec![Vec::new(); expr.vars.len()];
                        loop {
                            let p = self.param(node, x).expect("live parameter");
                            // Longest first: go on to the next parameter if the rest allows
                            let go_on = self.continues(&p, expr.op.sep(), params);
                            let end = if go_on {
                                p.full
                            } else {
                                self.choose(node + 1, p.lo, p.lo, p.hi, *stop)
                                    .expect("live parameter end")
                            };
                            let spec = &expr.vars[p.var];
                            let name = &self.uri[p.name.0..p.name.1];
                            let value = p
                                .value
                                .map_or_else(String::new, |v| decode(&self.uri[v..end], false));
                            if spec.modifier == Modifier::Explode {
                                let own = name == spec.name.as_bytes();
                                exploded[p.var].push((decode(name, false), value, own));
                            } else if values[spec.id].is_none() {
                                values[spec.id] = Some(TemplateValue::String(value));
                            }
                            x = end;
                            if !go_on {
                                break;
                            }
                        }
                        for (spec, entries) in expr.vars.iter().zip(exploded) {
                            if entries.is_empty() || values[spec.id].is_some() {
                                continue;
                            }
                            values[spec.id] = Some(if entries.iter().all(|e| e.2) {
                                TemplateValue::List(entries.into_iter().map(|e| e.1).collect())
                            } else {
                                TemplateValue::Map(
                                    entries.into_iter().map(|e| (e.0, e.1)).collect(),
                                )
                            });
                        }
                    }
                    node += 1;
                }
            }
        }
    }
}

/// How many `%XX` triplets from `p` encode one UTF-8 character (1 if they do not)
fn encoded_char_len(bytes: &[u8], p: usize) -> usize {
    let lead = hex_value(bytes[p + 1]) << 4 | hex_value(bytes[p + 2]);
    let len = match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return 1,
    };
    let mut buf = [0u8; 4];
    for (k, slot) in buf.iter_mut().enumerate().take(len) {
        let q = p + 3 * k;
        if !is_hex_triplet(bytes, q) {
            return 1;
        }
        *slot = hex_value(bytes[q + 1]) << 4 | hex_value(bytes[q + 2]);
    }
    if std::str::from_utf8(&buf[..len]).is_ok() {
        len
    } else {
        1
    }
}

/// The value of an exploded unnamed variable: a map if every item has a raw `=`, else a list
fn unnamed_exploded(raw: &[u8], sep: u8, reserved: bool) -> TemplateValue {
    let items: Vec<&[u8]> = raw.split(|&b| b == sep).collect();
    if items.iter().all(|item| item.contains(&b'=')) {
        TemplateValue::Map(
            items
                .into_iter()
                .map(|item| {
                    let eq = item.iter().position(|&b| b == b'=').expect("checked");
                    (
                        decode(&item[..eq], reserved),
                        decode(&item[eq + 1..], reserved),
                    )
                })
                .collect(),
        )
    } else {
        TemplateValue::List(
            items
                .into_iter()
                .map(|item| decode(item, reserved))
                .collect(),
        )
    }
}

impl fmt::Display for TemplateValue {
    /// Writes the value as a non-exploded, unencoded expansion would: items joined by `,`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => f.write_str(s),
            Self::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    f.write_str(item)?;
                }
                Ok(())
            }
            Self::Map(pairs) => {
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{k},{v}")?;
                }
                Ok(())
            }
        }
    }
}
