"""The peers and servers the transport tests run."""
