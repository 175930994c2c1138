//! How the client's `ureq` agents speak TLS: with the `tls` feature, ureq's rustls with the
//! runtime layer's roots, on ring, for the MCP connection's agent ([`tls`]) and the OAuth
//! agent (`platform_tls`) alike; without it, nothing to configure

use ureq::http::Uri;

/// How the agent speaks TLS: ureq's rustls with the kernel's roots, on ring
#[cfg(feature = "tls")]
pub(crate) type Tls = ureq::tls::TlsConfig;
/// Without the `tls` feature there is no TLS to configure
#[cfg(not(feature = "tls"))]
pub(crate) struct Tls;

/// The agent's TLS configuration for `http` to reach `uri`: for `https://`, the
/// platform's roots (or `SSL_CERT_FILE` / `SSL_CERT_DIR`'s) and those of the options,
/// verification on, SNI, the ring provider
///
/// # Errors
/// A root certificate of the options that does not parse.
#[cfg(feature = "tls")]
pub(crate) fn tls(
    uri: &Uri,
    http: &mcp_sansio_runtime::http_options::HttpOptions,
) -> Result<Tls, String> {
    use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};
    if uri.scheme_str() != Some("https") {
        return Ok(TlsConfig::default());
    }
    let roots: Vec<Certificate<'static>> = mcp_sansio_runtime::tls::root_certificates(http)?
        .iter()
        .map(|der| Certificate::from_der(der.as_ref()).to_owned())
        .collect();
    Ok(TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(mcp_sansio_runtime::tls::provider())
        .root_certs(RootCerts::new_with_certs(&roots))
        .use_sni(true)
        .build())
}

/// The agent's TLS configuration trusting the platform's roots only (the OAuth agent's)
#[cfg(all(feature = "tls", feature = "auth"))]
pub(crate) fn platform_tls() -> Tls {
    let https: Uri = Uri::from_static("https://localhost/");
    let options = mcp_sansio_runtime::http_options::HttpOptions::default();
    tls(&https, &options).expect("the platform's roots are only ever skipped, never an error")
}

/// Without the `tls` feature there is no TLS to configure
#[cfg(not(feature = "tls"))]
pub(crate) fn tls(
    _: &Uri,
    _: &mcp_sansio_runtime::http_options::HttpOptions,
) -> Result<Tls, String> {
    Ok(Tls)
}
