"""What the test modules share: the schema checks of every message (wire), the real parts a
run starts (services, real_parts), and the servers, peers and stand-ins they run."""

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
"""This folder: the helpers that run as processes are started by their path in it."""
