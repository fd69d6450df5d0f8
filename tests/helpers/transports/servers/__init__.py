"""The servers the transport tests run as processes or mount on uvicorn."""
