"""The store contract tests' name for `store_urls` (a store URL of each kind per test, and the
clock they move by hand), which the long-running tests share from tests/."""

from helpers.store_urls import KINDS, SHARED, Clock, UrlMaker, make_url

__all__ = ["KINDS", "SHARED", "Clock", "UrlMaker", "make_url"]
