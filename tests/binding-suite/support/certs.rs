//! Certificates made at test time (`rcgen`): a test CA, and server certificates it signs
//! for chosen names, valid now or long expired

use mcp_sansio_runtime::http_options::HttpOptions;
use mcp_sansio_runtime::tls::rustls;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
    KeyUsagePurpose, date_time_ymd,
};

/// A test certificate authority
pub(crate) struct TestCa {
    /// Its certificate, PEM: what a client must trust
    pub(crate) pem: String,
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A server certificate and its key, PEM: what a server presents
pub(crate) struct Leaf {
    /// The server's certificate, then the CA's
    pub(crate) chain: String,
    pub(crate) key: String,
}

impl TestCa {
    pub(crate) fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, name);
        params.distinguished_name = dn;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        Self {
            pem: issuer.pem(),
            issuer,
        }
    }

    /// A certificate for `names` (DNS names or IP addresses), valid from 1975 to 4096
    pub(crate) fn leaf(&self, names: &[&str]) -> Leaf {
        self.sign(names, false)
    }

    /// A certificate for `names` that expired in 2001
    pub(crate) fn expired_leaf(&self, names: &[&str]) -> Leaf {
        self.sign(names, true)
    }

    fn sign(&self, names: &[&str], expired: bool) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        if expired {
            params.not_before = date_time_ymd(2000, 1, 1);
            params.not_after = date_time_ymd(2001, 1, 1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            chain: format!("{}{}", cert.pem(), self.pem),
            key: key.serialize_pem(),
        }
    }
}

/// A raw TLS client connection
pub(crate) type TlsStream = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;

/// A raw TLS connection to `addr` (a client of ours, trusting `ca_pem` only), its handshake
/// done: for tests that write bytes no client of ours would
pub(crate) fn tls_connect(addr: std::net::SocketAddr, ca_pem: &str) -> std::io::Result<TlsStream> {
    let options = HttpOptions::default().root_certificates_pem(ca_pem.as_bytes().to_vec());
    let config = mcp_sansio_runtime::tls::client_config(&options).map_err(std::io::Error::other)?;
    let name = rustls::pki_types::ServerName::from(addr.ip());
    let session = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
    let tcp = std::net::TcpStream::connect(addr)?;
    let mut stream = rustls::StreamOwned::new(session, tcp);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock)?;
    }
    Ok(stream)
}
