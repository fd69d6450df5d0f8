"""An HTTPS host for a Client ID Metadata Document, with a certificate the test makes.

`certificates(folder)` writes a test certificate authority and a leaf certificate for
127.0.0.1 signed by it (`cryptography`; the CA is what the authorization server is told to
trust, NODE_EXTRA_CA_CERTS for node-oidc-provider). `python cimd_host.py CERT KEY` serves
`GET /client.json` over TLS on a free port of 127.0.0.1 and prints the document's URL, which is
also its `client_id`: a native public client with the loopback redirect URI (any port)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import sys
from pathlib import Path
from typing import Any

__all__ = ["certificates"]


def certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(CA certificate, leaf certificate, leaf key) files in `folder`, made now."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpkit test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(hours=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=2))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def _serve(cert: str, key: str) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    url = f"https://127.0.0.1:{sock.getsockname()[1]}/client.json"
    document = json.dumps({
        "client_id": url, "client_name": "mcpkit CLI", "application_type": "native",
        "redirect_uris": ["http://127.0.0.1/callback"], "response_types": ["code"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none"}).encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        found = scope["path"] == "/client.json"
        body = document if found else b'{"error": "not_found"}'
        await send({"type": "http.response.start", "status": 200 if found else 404,
                    "headers": [(b"content-type", b"application/json"),
                                (b"cache-control", b"max-age=60")]})
        await send({"type": "http.response.body", "body": body})

    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off",
                                           ssl_certfile=cert, ssl_keyfile=key))
    print(url, flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2])
