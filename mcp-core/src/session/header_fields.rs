//! A request's HTTP header fields as its handlers read them ([`Caller::headers`](super::Caller::headers)):
//! every name and value in one text buffer, shared by every clone
//!
//! A binding builds one per request from its HTTP library's header map
//! ([`HeaderFields::from_utf8`]): three allocations, whatever the number of fields, where a
//! list of owned pairs takes two per field and as many frees when the request ends.

use std::fmt;
use std::sync::Arc;

/// The header fields of an HTTP request, in order, names as sent, values as text
///
/// Cheap to clone (one shared buffer). Read a field with [`get`](Self::get) (the first
/// value, ASCII case-insensitive) or all of them with [`iter`](Self::iter). Build one from
/// pairs of text with `collect()` or `From`, or from the bytes of a header map with
/// [`from_utf8`](Self::from_utf8).
///
/// ```
/// use mcp_sansio::session::HeaderFields;
///
/// let fields = HeaderFields::from(vec![("Host", "example.com"), ("X-Trace", "7")]);
/// assert_eq!(fields.get("x-trace"), Some("7"));
/// assert_eq!(fields.len(), 2);
/// let pairs: Vec<(&str, &str)> = fields.iter().collect();
/// assert_eq!(pairs, [("Host", "example.com"), ("X-Trace", "7")]);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HeaderFields(Option<Arc<Buffer>>);

/// The fields' text, each name followed by its value, and where each ends
#[derive(Debug, PartialEq, Eq)]
struct Buffer {
    text: String,
    /// The end of each field's name and of its value in `text` (a name starts where the
    /// value before it ended)
    ends: Vec<(usize, usize)>,
}

impl HeaderFields {
    /// No fields
    pub fn new() -> Self {
        Self::default()
    }

    /// The fields of `fields` in order, when every value is UTF-8 text; `None` as soon as
    /// one is not
    pub fn from_utf8<I, N, V>(fields: I) -> Option<Self>
    where
        I: IntoIterator<Item = (N, V)>,
        N: AsRef<str>,
        V: AsRef<[u8]>,
    {
        let fields = fields.into_iter();
        let mut bytes = Vec::with_capacity(256);
        let mut ends = Vec::with_capacity(fields.size_hint().0);
        for (name, value) in fields {
            bytes.extend_from_slice(name.as_ref().as_bytes());
            let name_end = bytes.len();
            bytes.extend_from_slice(value.as_ref());
            ends.push((name_end, bytes.len()));
        }
        // One check of the whole buffer, then of the boundaries: two values that are not
        // text alone can make text together (a partial character, an empty name, the rest).
        let text = String::from_utf8(bytes).ok()?;
        let fields = Buffer { text, ends };
        fields.boundaries().then(|| Self::wrap(fields))
    }

    fn wrap(buffer: Buffer) -> Self {
        if buffer.ends.is_empty() {
            Self(None)
        } else {
            Self(Some(Arc::new(buffer)))
        }
    }

    /// How many fields there are
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |b| b.ends.len())
    }

    /// Whether there are none
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every field `(name, value)`, in order
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buffer: self.0.as_deref(),
            next: 0,
        }
    }

    /// The first value of the field `name` (ASCII case-insensitive)
    pub fn get(&self, name: &str) -> Option<&str> {
        // The loop of `values`, written out: the rules look up eight fields a request, and
        // whether the iterator's closure is inlined was left to the compiler's mood.
        let buffer = self.0.as_deref()?;
        let (text, name) = (buffer.text.as_bytes(), name.as_bytes());
        let mut start = 0;
        for &(name_end, end) in &buffer.ends {
            if name_end - start == name.len()
                && text[start..name_end].eq_ignore_ascii_case(name)
                && let Some(value) = buffer.text.get(name_end..end)
            {
                return Some(value);
            }
            start = end;
        }
        None
    }

    /// Every value of the field `name` (ASCII case-insensitive), in order
    pub fn values<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a str> {
        let (text, ends) = self
            .0
            .as_deref()
            .map_or(("", &[][..]), |b| (b.text.as_str(), &b.ends[..]));
        let name = name.as_bytes();
        let mut start = 0;
        ends.iter().filter_map(move |&(name_end, end)| {
            // The length first: most fields are not the one asked for.
            let found = name_end - start == name.len()
                && text.as_bytes()[start..name_end].eq_ignore_ascii_case(name);
            start = end;
            if found { text.get(name_end..end) } else { None }
        })
    }
}

impl Buffer {
    /// Whether every name and value starts and ends at a character boundary (a value of
    /// bytes that are not text alone may still make text with the next name's bytes)
    fn boundaries(&self) -> bool {
        self.ends.iter().all(|&(name_end, end)| {
            self.text.is_char_boundary(name_end) && self.text.is_char_boundary(end)
        })
    }

    fn field(&self, i: usize) -> (&str, &str) {
        let start = if i == 0 { 0 } else { self.ends[i - 1].1 };
        let (name_end, end) = self.ends[i];
        (&self.text[start..name_end], &self.text[name_end..end])
    }
}

/// The fields of a [`HeaderFields`], in order
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    buffer: Option<&'a Buffer>,
    next: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let buffer = self.buffer?;
        if self.next >= buffer.ends.len() {
            return None;
        }
        self.next += 1;
        Some(buffer.field(self.next - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.buffer.map_or(0, |b| b.ends.len() - self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a HeaderFields {
    type Item = (&'a str, &'a str);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<N: AsRef<str>, V: AsRef<str>> FromIterator<(N, V)> for HeaderFields {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(fields: I) -> Self {
        let mut text = String::new();
        let mut ends = Vec::new();
        for (name, value) in fields {
            text.push_str(name.as_ref());
            let name_end = text.len();
            text.push_str(value.as_ref());
            ends.push((name_end, text.len()));
        }
        Self::wrap(Buffer { text, ends })
    }
}

impl<N: AsRef<str>, V: AsRef<str>> From<Vec<(N, V)>> for HeaderFields {
    fn from(fields: Vec<(N, V)>) -> Self {
        fields.into_iter().collect()
    }
}

impl<N: AsRef<str>, V: AsRef<str>> From<&[(N, V)]> for HeaderFields {
    fn from(fields: &[(N, V)]) -> Self {
        fields.iter().map(|(n, v)| (n, v)).collect()
    }
}

impl<N: AsRef<str>, V: AsRef<str>, const K: usize> From<[(N, V); K]> for HeaderFields {
    fn from(fields: [(N, V); K]) -> Self {
        fields.into_iter().collect()
    }
}

impl fmt::Debug for HeaderFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_back_in_order_as_they_went_in() {
        let pairs = [
            ("Host", "a"),
            ("", ""),
            ("X-\u{e9}", "\u{e9}t\u{e9}"),
            ("x-e", ""),
        ];
        let fields = HeaderFields::from(pairs);
        assert_eq!(fields.iter().collect::<Vec<_>>(), pairs);
        assert_eq!(fields.iter().len(), 4);
        assert_eq!(fields.get("X-E"), Some(""));
        assert_eq!(fields.get("host"), Some("a"));
        assert_eq!(fields.get("missing"), None);
        let bytes = pairs.map(|(n, v)| (n, v.as_bytes()));
        assert_eq!(HeaderFields::from_utf8(bytes), Some(fields.clone()));
        assert_eq!(format!("{fields:?}"), format!("{:?}", pairs));
        assert!(HeaderFields::new().is_empty());
        assert_eq!(
            HeaderFields::from_utf8(Vec::<(&str, &[u8])>::new()),
            Some(HeaderFields::new())
        );
    }

    #[test]
    fn a_value_that_is_not_text_refuses_the_whole_even_when_its_neighbour_completes_it() {
        // "\u{e9}" is C3 A9: split across two values with an empty name between them, the
        // buffer is text, but neither value is.
        let split = [("A", &b"\xc3"[..]), ("", &b"\xa9"[..])];
        assert_eq!(HeaderFields::from_utf8(split), None);
        assert_eq!(HeaderFields::from_utf8([("A", &b"x\xc3"[..])]), None);
        assert_eq!(
            HeaderFields::from_utf8([("A", &b"\xff"[..]), ("B", b"v")]),
            None
        );
        let whole = [("A", "\u{e9}".as_bytes()), ("", b"")];
        assert_eq!(
            HeaderFields::from_utf8(whole),
            Some(HeaderFields::from([("A", "\u{e9}"), ("", "")]))
        );
    }
}
