//! Base64 (RFC 4648 §4: standard alphabet, `=` padding), strict on decode
//!
//! Only the `=?base64?…?=` header encoding needs it, so it is a few lines here rather than a
//! dependency.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes bytes as padded standard base64
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |i: u32| char::from(ALPHABET[((n >> (18 - 6 * i)) & 0x3F) as usize]);
        out.push(sextet(0));
        out.push(sextet(1));
        out.push(if chunk.len() > 1 { sextet(2) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(3) } else { '=' });
    }
    out
}

/// Why a text is not strict base64
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base64Error {
    /// The length is not a multiple of 4
    Length,
    /// A byte outside the alphabet, or `=` where padding may not be
    Character,
    /// Padding bits that are not zero (the text is not the canonical encoding)
    NonCanonical,
}

fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes padded standard base64, rejecting missing padding, stray characters, whitespace
/// and non-zero padding bits
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return Err(Base64Error::Length);
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.len() / 4;
    for (i, quad) in bytes.chunks(4).enumerate() {
        let last = i + 1 == quads;
        let pad = match quad {
            [_, _, b'=', b'='] if last => 2,
            [_, _, _, b'='] if last => 1,
            _ => 0,
        };
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | sextet(c).ok_or(Base64Error::Character)?;
        }
        n <<= 6 * pad;
        let [_, b0, b1, b2] = n.to_be_bytes();
        match pad {
            0 => out.extend_from_slice(&[b0, b1, b2]),
            1 if b2 == 0 => out.extend_from_slice(&[b0, b1]),
            2 if b1 == 0 && b2 == 0 => out.push(b0),
            _ => return Err(Base64Error::NonCanonical),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 4648 §10
    const VECTORS: [(&str, &str); 7] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];

    #[test]
    fn rfc4648_vectors() {
        for (plain, coded) in VECTORS {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let coded = encode(&all);
        assert!(coded.ends_with("/w=="), "{coded}");
        assert_eq!(decode(&coded).unwrap(), all);
    }

    #[test]
    fn strict() {
        assert_eq!(decode("Zg"), Err(Base64Error::Length));
        assert_eq!(decode("Zg="), Err(Base64Error::Length));
        assert_eq!(decode("Zg=a"), Err(Base64Error::Character));
        assert_eq!(decode("Z==="), Err(Base64Error::Character));
        assert_eq!(decode("===="), Err(Base64Error::Character));
        assert_eq!(decode("Zg==Zg=="), Err(Base64Error::Character));
        assert_eq!(decode("Zm 9"), Err(Base64Error::Character));
        assert_eq!(decode("Zm-_"), Err(Base64Error::Character));
        assert_eq!(decode("Zh=="), Err(Base64Error::NonCanonical));
        assert_eq!(decode("Zm9="), Err(Base64Error::NonCanonical));
    }
}
