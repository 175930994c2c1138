//! PKCE (RFC 7636, S256) and the deterministic random stream the flow draws from
//!
//! The core makes no randomness of its own: the caller seeds [`Drbg`] with 32 bytes of OS
//! randomness (or a fixed seed in tests), and every verifier and `state` is drawn from
//! HMAC-SHA256(seed, counter).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// A random stream expanded from a caller-supplied seed (HMAC-SHA256 in counter mode)
pub(crate) struct Drbg {
    seed: [u8; 32],
    counter: u64,
}

impl Drbg {
    pub(crate) fn new(seed: [u8; 32]) -> Self {
        Self { seed, counter: 0 }
    }

    /// Mixes fresh caller entropy into the stream
    pub(crate) fn reseed(&mut self, entropy: &[u8]) {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.seed).expect("any key length");
        mac.update(b"reseed");
        mac.update(entropy);
        self.seed = mac.finalize().into_bytes().into();
    }

    /// 32 bytes, base64url without padding (43 characters: a valid PKCE verifier)
    pub(crate) fn token(&mut self) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.seed).expect("any key length");
        mac.update(&self.counter.to_be_bytes());
        self.counter += 1;
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }
}

/// The S256 code challenge of a verifier
pub(crate) fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn stream_is_seeded_and_distinct() {
        let mut a = Drbg::new([7; 32]);
        let mut b = Drbg::new([7; 32]);
        let (x, y) = (a.token(), a.token());
        assert_ne!(x, y);
        assert_eq!(x.len(), 43);
        assert_eq!(b.token(), x);
        b.reseed(b"more");
        assert_ne!(b.token(), y);
    }
}
