//! Where session ids come from: the binding's randomness, injected

/// A source of fresh, unguessable session ids (2025 wire)
///
/// The core has no randomness; the binding implements this with its OS random generator.
/// Ids must be visible ASCII (0x21–0x7E) and unique; ids that are not are refused and the
/// `initialize` fails with 500.
pub trait SessionIdSource {
    /// The next session id
    fn next_session_id(&mut self) -> String;
}

/// Any closure producing 16 random bytes is a source: the id is their 32 hex digits
impl<F: FnMut() -> [u8; 16]> SessionIdSource for F {
    fn next_session_id(&mut self) -> String {
        session_id_from_bytes(self())
    }
}

/// A session id from 16 random bytes: 32 lowercase hex digits
pub fn session_id_from_bytes(bytes: [u8; 16]) -> String {
    format!("{:032x}", u128::from_be_bytes(bytes))
}

/// Whether `id` may be a session id: non-empty visible ASCII
pub(crate) fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| (0x21..=0x7E).contains(&b))
}
