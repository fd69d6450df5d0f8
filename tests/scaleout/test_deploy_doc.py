"""docs/deploy.md's nginx configuration is the one the scale-out tests run: every directive of
the tests' location and upstream blocks (tests/scaleout/nginx.py) is in the guide, with the
same value, so the guide shows what was tested."""

from __future__ import annotations

import re

from nginx import CONFIG, ROOT

DIRECTIVES = re.compile(r"^\s*((?:proxy_|keepalive)\S*)\s+([^;]+);", re.M)


def test_the_guides_nginx_block_holds_every_tested_directive() -> None:
    guide = (ROOT / "docs" / "deploy.md").read_text()
    block = re.search(r"```nginx\n(.*?)```", guide, re.S)
    assert block is not None, "docs/deploy.md has no nginx block"
    documented = {name: value.strip() for name, value in DIRECTIVES.findall(block.group(1))}
    tested = {name: value.strip() for name, value in DIRECTIVES.findall(CONFIG)
              if name != "proxy_pass" and not name.endswith("_temp_path")}
    assert tested, "no directive found in the tests' configuration"
    for name, value in tested.items():
        assert documented.get(name) == value, (name, value, documented.get(name))
