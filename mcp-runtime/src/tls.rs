//! HTTPS for every binding: the rustls configurations (on the ring provider) the clients
//! and servers use, and readable words for what went wrong in a handshake
//!
//! A client trusts the platform's root certificates (`rustls-native-certs`: on Linux the
//! system bundle, or `SSL_CERT_FILE` / `SSL_CERT_DIR` when set, as OpenSSL's tools do) and
//! the PEM roots of [`HttpOptions::root_certificates`]; it always verifies the server's
//! certificate and name (there is no option that turns verification off). A server presents
//! a [`TlsIdentity`]: a certificate chain and its private key. Both speak `http/1.1` by
//! ALPN.
//!
//! The sockets, the handshakes and their deadlines are each binding's own IO; this module
//! only builds configurations and words errors.

use std::error::Error as StdError;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::{CertificateError, ClientConfig, RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

pub use rustls;

use crate::http_options::HttpOptions;

/// The error of a client asked for an `https://` URL without the `tls` feature
pub const NEEDS_TLS: &str = "https:// needs the `tls` feature";

/// The ALPN protocol both sides offer
const HTTP11: &[u8] = b"http/1.1";

/// The crypto provider of every configuration: rustls' ring
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Why a [`TlsIdentity`] could not be made
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The certificate chain PEM does not parse, or holds no `CERTIFICATE` block
    #[error("TLS identity: the certificate chain: {0}")]
    Chain(String),
    /// The private key PEM does not parse, or holds no private key
    #[error("TLS identity: the private key: {0}")]
    Key(String),
    /// rustls refused the pair (a key that does not match the certificate, an unsupported
    /// key type)
    #[error("TLS identity: {0}")]
    Refused(String),
}

/// What a server presents to its clients: a certificate chain (its own certificate first)
/// and the private key of that certificate, as a rustls server configuration
#[derive(Clone)]
pub struct TlsIdentity {
    config: Arc<ServerConfig>,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity").finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// An identity from a certificate chain in PEM (one or more `CERTIFICATE` blocks, the
    /// server's own first) and its private key in PEM (PKCS#8, PKCS#1 or SEC1)
    ///
    /// # Errors
    /// [`TlsError`] when either does not parse or rustls refuses the pair.
    pub fn from_pem(chain: &[u8], key: &[u8]) -> Result<Self, TlsError> {
        let chain = certificates(chain).map_err(TlsError::Chain)?;
        let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| TlsError::Key(pem_error(&e)))?;
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Refused(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| TlsError::Refused(e.to_string()))?;
        config.alpn_protocols = vec![HTTP11.to_vec()];
        Ok(Self {
            config: Arc::new(config),
        })
    }

    /// The rustls server configuration
    pub fn server_config(&self) -> Arc<ServerConfig> {
        Arc::clone(&self.config)
    }
}

/// Every `CERTIFICATE` block of `pem`; at least one
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(&e))?;
    if certs.is_empty() {
        return Err("no CERTIFICATE block in the PEM".into());
    }
    Ok(certs)
}

fn pem_error(error: &rustls_pki_types::pem::Error) -> String {
    match error {
        rustls_pki_types::pem::Error::NoItemsFound => "nothing found in the PEM".into(),
        other => format!("the PEM does not parse ({other:?})"),
    }
}

/// The roots a client trusts: the platform's (or `SSL_CERT_FILE` / `SSL_CERT_DIR`'s), then
/// those of `options`
///
/// # Errors
/// A root certificate of `options` that does not parse, or that rustls cannot use: the
/// text says which.
pub fn root_certificates(options: &HttpOptions) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut roots = rustls_native_certs::load_native_certs().certs;
    for (i, pem) in options.root_certificates.iter().enumerate() {
        let certs = certificates(pem).map_err(|e| format!("root certificate {}: {e}", i + 1))?;
        // Each must be usable as a trust anchor: a broken one is an error, not ignored.
        let mut check = RootCertStore::empty();
        for cert in &certs {
            check
                .add(cert.clone())
                .map_err(|e| format!("root certificate {}: {e}", i + 1))?;
        }
        roots.extend(certs);
    }
    Ok(roots)
}

/// The client configuration for `options`: its roots (see [`root_certificates`]),
/// verification of the server's certificate and name, SNI, ALPN `http/1.1`
///
/// # Errors
/// As [`root_certificates`].
pub fn client_config(options: &HttpOptions) -> Result<Arc<ClientConfig>, String> {
    let mut store = RootCertStore::empty();
    // The platform's bundle may hold a certificate rustls cannot use: skip it, as curl does.
    store.add_parsable_certificates(root_certificates(options)?);
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![HTTP11.to_vec()];
    Ok(Arc::new(config))
}

/// The rustls error behind `error`, if any: `error` itself, one of its sources, or the
/// error an `io::Error` on the way carries
pub(crate) fn rustls_error<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(inner) = error
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            && let Some(tls) = rustls_error(inner)
        {
            return Some(tls);
        }
        next = error.source();
    }
    None
}

/// `error` in words, for a connection to `server` (`host:port`), if a rustls error is
/// behind it
pub fn explain(error: &(dyn StdError + 'static), server: &str) -> Option<String> {
    rustls_error(error).map(|tls| describe(tls, server))
}

/// A handshake's rustls error in words, for a connection to `server` (`host:port`)
pub fn describe(error: &rustls::Error, server: &str) -> String {
    use CertificateError as C;
    match error {
        rustls::Error::InvalidCertificate(why) => match why {
            C::UnknownIssuer => format!(
                "TLS: the server's certificate is not trusted (UnknownIssuer) for {server}: \
                 no trusted root certificate issued it (trusted: the platform's, \
                 SSL_CERT_FILE / SSL_CERT_DIR, and HttpOptions::root_certificates)"
            ),
            C::NotValidForName => {
                format!(
                    "TLS: the server's certificate is not valid for the name it was reached by \
                     (NotValidForName) at {server}"
                )
            }
            C::NotValidForNameContext { presented, .. } => format!(
                "TLS: the server's certificate is not valid for the name it was reached by \
                 (NotValidForName) at {server}: it names {}",
                presented
                    .iter()
                    .map(|name| bare_name(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            C::Expired | C::ExpiredContext { .. } => {
                format!("TLS: the server's certificate has expired (Expired) for {server}")
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                format!("TLS: the server's certificate is not valid yet (NotValidYet) for {server}")
            }
            C::Revoked => {
                format!("TLS: the server's certificate is revoked (Revoked) for {server}")
            }
            C::BadSignature => format!(
                "TLS: the server's certificate has a bad signature (BadSignature) for {server}"
            ),
            other => {
                format!("TLS: the server's certificate was refused ({other:?}) for {server}")
            }
        },
        rustls::Error::AlertReceived(alert) => {
            format!("TLS: the server at {server} refused the handshake ({alert:?})")
        }
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => format!(
            "TLS: the server at {server} does not speak TLS as expected ({error}); is it an \
             http:// server?"
        ),
        other => format!("TLS with {server}: {other}"),
    }
}

/// A name rustls presents as `DnsName("a.example")`, as `a.example`
fn bare_name(presented: &str) -> &str {
    presented
        .strip_prefix("DnsName(\"")
        .and_then(|rest| rest.strip_suffix("\")"))
        .unwrap_or(presented)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_that_does_not_parse_is_an_error_naming_it() {
        let options = HttpOptions::default().root_certificates_pem(b"not a pem".to_vec());
        let error = client_config(&options).unwrap_err();
        assert!(error.starts_with("root certificate 1: "), "{error}");
        let broken = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let options = HttpOptions::default().root_certificates_pem(broken.to_vec());
        let error = client_config(&options).unwrap_err();
        assert!(error.starts_with("root certificate 1: "), "{error}");
    }

    #[test]
    fn an_identity_needs_a_chain_and_a_key() {
        assert!(matches!(
            TlsIdentity::from_pem(b"", b""),
            Err(TlsError::Chain(_))
        ));
    }

    #[test]
    fn errors_are_found_through_io_errors() {
        let tls = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        let text = explain(&io, "127.0.0.1:1").unwrap();
        assert!(
            text.contains("not trusted (UnknownIssuer) for 127.0.0.1:1"),
            "{text}"
        );
        assert!(explain(&std::io::Error::other("x"), "a:1").is_none());
        assert_eq!(bare_name("DnsName(\"a.example\")"), "a.example");
        assert_eq!(bare_name("10.0.0.1"), "10.0.0.1");
    }
}
