"""docs/deploy.md and examples/deploy say what the scale-out tests run: every directive of the
tests' location and upstream blocks (tests/scaleout/nginx.py) is in the guide's nginx block and
in the example's nginx.conf, with the same value; the example's compose file runs three
replicas on one store behind that nginx, each killed only after its `--grace`, and the guide
shows its lines; the guide's Kubernetes manifest waits for its preStop and its grace."""

from __future__ import annotations

import re
from typing import Any

import yaml
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


# -- stopping: the compose file and the Kubernetes manifest wait longer than the drain --------

EXAMPLE = ROOT / "examples" / "deploy"


def _grace(command: list[str]) -> float:
    assert "--grace" in command, f"a replica without --grace: {command}"
    return float(command[command.index("--grace") + 1])


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLE / "compose.yaml").read_text())
    return loaded


def test_the_example_nginx_conf_is_the_tested_one_over_the_compose_replicas() -> None:
    conf = (EXAMPLE / "nginx.conf").read_text()
    documented = {(name, value.strip()) for name, value in DIRECTIVES.findall(conf)}
    tested = {(name, value.strip()) for name, value in DIRECTIVES.findall(CONFIG)
              if name != "proxy_pass" and not name.endswith("_temp_path")}
    assert tested and tested <= documented, tested - documented
    upstream = set(re.findall(r"^\s*server\s+([\w-]+):8000\b", conf, re.M))
    replicas = {name for name, service in _compose()["services"].items()
                if service.get("command", [])[:2] == ["mcpkit", "run"]}
    assert upstream == replicas and len(replicas) == 3, (upstream, replicas)


def test_the_compose_replicas_share_the_store_and_are_killed_only_after_their_grace() -> None:
    services = _compose()["services"]
    replicas = [s for s in services.values() if s.get("command", [])[:2] == ["mcpkit", "run"]]
    stores = {s["environment"]["MCPKIT_STORE"] for s in replicas}
    assert len(replicas) == 3 and len(stores) == 1, stores
    (store,) = stores
    database = services["postgres"]["environment"]
    assert store == (f"postgresql://{database['POSTGRES_USER']}:{database['POSTGRES_PASSWORD']}"
                     f"@postgres:5432/{database['POSTGRES_DB']}")
    for replica in replicas:
        wait = replica["stop_grace_period"]
        assert wait.endswith("s") and float(wait[:-1]) > _grace(replica["command"]) + 2, wait
        assert "/readyz" in " ".join(replica["healthcheck"]["test"])
    assert "./nginx.conf:/etc/nginx/conf.d/default.conf:ro" in services["nginx"]["volumes"]
    assert (EXAMPLE / "Dockerfile").is_file()


def _guide_blocks(language: str) -> list[str]:
    guide = (ROOT / "docs" / "deploy.md").read_text()
    return re.findall(rf"```{language}\n(.*?)```", guide, re.S)


def test_the_guides_compose_lines_are_the_files() -> None:
    shown = next(b for b in _guide_blocks("yaml") if "mcp-a: &replica" in b)
    lines = set((EXAMPLE / "compose.yaml").read_text().splitlines())
    for line in shown.splitlines():
        assert line in lines, f"docs/deploy.md shows a line compose.yaml lacks: {line!r}"


def test_the_kubernetes_example_waits_for_its_prestop_and_its_grace() -> None:
    manifest = next(b for b in _guide_blocks("yaml") if "kind: Deployment" in b)
    deployment = next(d for d in yaml.safe_load_all(manifest) if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    needed = float(pre_stop[1]) + _grace(container["args"])
    assert pod["terminationGracePeriodSeconds"] > needed + 2, (pod, needed)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
