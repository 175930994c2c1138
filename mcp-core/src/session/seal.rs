//! Sealed `requestState`: the server's multi-round-trip state, sent to the client and back,
//! authenticated with HMAC-SHA256 so a client can neither forge nor alter it
//!
//! Format: `base64url(payload JSON) "." base64url(HMAC-SHA256(key, payload JSON))`, no padding.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Why a sealed state was refused
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SealError {
    /// Not of the sealed form, or not base64
    Malformed,
    /// The MAC does not match: tampered, or sealed with another key
    Forged,
}

/// Seals `payload` with `key`
pub(crate) fn seal(key: &[u8; 32], payload: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(payload);
    let tag = mac.finalize().into_bytes();
    let mut out = URL_SAFE_NO_PAD.encode(payload);
    out.push('.');
    URL_SAFE_NO_PAD.encode_string(tag, &mut out);
    out
}

/// Checks and opens a sealed state; the payload is returned only if the MAC matches
pub(crate) fn unseal(key: &[u8; 32], sealed: &str) -> Result<Vec<u8>, SealError> {
    let (payload, tag) = sealed.split_once('.').ok_or(SealError::Malformed)?;
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| SealError::Malformed)?;
    let tag = URL_SAFE_NO_PAD
        .decode(tag)
        .map_err(|_| SealError::Malformed)?;
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(&payload);
    mac.verify_slice(&tag).map_err(|_| SealError::Forged)?;
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens_and_refuses_changes() {
        let key = [7u8; 32];
        let sealed = seal(&key, br#"{"a":1}"#);
        assert_eq!(unseal(&key, &sealed).unwrap(), br#"{"a":1}"#);
        assert_eq!(unseal(&[8u8; 32], &sealed), Err(SealError::Forged));
        let (payload, tag) = sealed.split_once('.').unwrap();
        let other = URL_SAFE_NO_PAD.encode(br#"{"a":2}"#);
        assert_eq!(
            unseal(&key, &format!("{other}.{tag}")),
            Err(SealError::Forged)
        );
        assert_eq!(unseal(&key, payload), Err(SealError::Malformed));
        assert_eq!(unseal(&key, "!!.??"), Err(SealError::Malformed));
    }
}
