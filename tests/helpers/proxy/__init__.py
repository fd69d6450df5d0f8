"""The upstreams and hostile peers the proxy tests put behind the proxy."""
