"""Certificates made at test time (``cryptography``): a test CA, a server certificate it
issued for ``localhost`` and 127.0.0.1, one for another host name, an expired one, and one
from a CA nobody trusts. Written as PEM files into a directory."""

import datetime
import ipaddress
import pathlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _ca(cn):
    key = _key()
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(ca, names, ips=(), expired=False):
    ca_cert, ca_key = ca
    key = _key()
    now = datetime.datetime.now(datetime.timezone.utc)
    if expired:
        start, end = now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)
    else:
        start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
    san = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(names[0]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


class Pki:
    """``ca`` (the trusted root's PEM file), and ``(certfile, keyfile)`` pairs: ``good``
    (localhost, 127.0.0.1), ``wrong_host`` (only wrong.example), ``expired``, ``untrusted``
    (localhost, 127.0.0.1, from another CA)."""

    def __init__(self, directory):
        d = pathlib.Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        ca = _ca("mcp-sansio test CA")
        other = _ca("nobody trusts this CA")
        self.ca = d / "ca.pem"
        self.ca.write_bytes(_pem(ca[0]))
        self.ca_pem = _pem(ca[0])

        def write(name, leaf):
            cert, key = leaf
            certfile, keyfile = d / f"{name}.pem", d / f"{name}.key"
            certfile.write_bytes(_pem(cert))
            keyfile.write_bytes(_key_pem(key))
            return str(certfile), str(keyfile)

        self.good = write("good", _leaf(ca, ["localhost"], ["127.0.0.1"]))
        self.wrong_host = write("wrong-host", _leaf(ca, ["wrong.example"]))
        self.expired = write("expired", _leaf(ca, ["localhost"], ["127.0.0.1"], expired=True))
        self.untrusted = write("untrusted", _leaf(other, ["localhost"], ["127.0.0.1"]))
