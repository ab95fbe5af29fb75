"""`control.up` when a port it picked is taken before its server binds it.

The cluster picks its ports when it is first set up and its servers bind them seconds later;
anything else on the machine that binds a port of its own meanwhile may get one of them. Here
the servers are small Python processes on the ports `up` gives them (no Dagster, PostgreSQL or
Redis), and the test holds the webserver's port itself before `up` starts.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bigaction_assets.cluster import backing, control, graphql, processes
from bigaction_assets.cluster.layout import (
    LOWEST_PORT,
    ClusterLayout,
    ClusterState,
    ephemeral_range,
    free_ports,
)
from bigaction_assets.cluster.store_settings import CLUSTER_LAKE_ENV, LOCAL

# binds its port (exits with Python's "Address already in use" if it cannot) and answers every
# GET with 200, as the webserver answers /server_info
WEB = """
import http.server, sys
class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ok).serve_forever()
"""
IDLE = "import time; time.sleep(600)"


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClusterLayout]:
    layout = ClusterLayout(data_dir=tmp_path / "cluster", landing=tmp_path / "landing")
    layout.data_dir.mkdir(parents=True)
    for name in ("install_packages", "start_postgres", "start_redis"):
        monkeypatch.setattr(backing, name, lambda *_args: None)
    monkeypatch.setattr(processes, "create_dagster_tables", lambda *_args: None)
    monkeypatch.setattr(graphql, "location_loaded", lambda _url: True)
    monkeypatch.setattr(graphql, "pause_automation", lambda _url: None)
    monkeypatch.setattr(graphql, "daemons_healthy", lambda _url: True)
    monkeypatch.setattr(control, "workers_answering", lambda *_args: True)

    def commands(_layout: ClusterLayout, state: ClusterState) -> dict[str, list[str]]:
        found = {
            "code-server": [sys.executable, "-c", WEB, str(state.ports.code_server)],
            "webserver": [sys.executable, "-c", WEB, str(state.ports.webserver)],
            "daemon": [sys.executable, "-c", IDLE],
        }
        return found | {name: [sys.executable, "-c", IDLE] for name in processes.worker_names()}

    monkeypatch.setattr(processes, "commands", commands)
    yield layout
    everything = ["code-server", "webserver", "daemon", *processes.worker_names()]
    processes.stop(layout, everything, timeout=5)


def up(layout: ClusterLayout) -> ClusterState:
    return control.up(layout, {"PATH": os.environ.get("PATH", ""), CLUSTER_LAKE_ENV: LOCAL})


def test_free_ports_are_all_different() -> None:
    ports = free_ports(50)
    assert len(set(ports)) == 50


def test_the_cluster_picks_its_ports_below_the_range_the_kernel_hands_out() -> None:
    """Outgoing connections and servers of port 0 get theirs from the ephemeral range: one of
    them took the webserver's port between its pick and its bind in a fresh clone's suite."""
    low, high = ephemeral_range()
    assert low > LOWEST_PORT + 100, "this machine's ephemeral range leaves no room below it"
    ports = free_ports(100)
    assert all(LOWEST_PORT <= port < low for port in ports), ports
    # a connection made now is given a port the cluster does not pick
    with socket.create_server(("127.0.0.1", 0)) as server, socket.socket() as client:
        client.connect(server.getsockname())
        assert low <= client.getsockname()[1] <= high


def test_a_port_someone_holds_is_never_picked() -> None:
    with socket.socket() as holder:
        held = free_ports(1, candidates=range(LOWEST_PORT, ephemeral_range()[0]))[0]
        holder.bind(("127.0.0.1", held))
        holder.listen()
        others = free_ports(3, candidates=range(held - 1, held + 3))
        assert held not in others and len(set(others)) == 3
        for _ in range(20):  # the pick is random: the held one never comes up
            assert held not in free_ports(1, candidates=range(held, held + 2))
        with pytest.raises(OSError, match="fewer than 1 free ports"):
            free_ports(1, candidates=range(held, held + 1))


def test_a_webserver_port_taken_meanwhile_moves_both_servers_and_the_cluster_starts(
    layout: ClusterLayout, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        first = ClusterState.fresh(LOCAL)
        picked = dataclasses.replace(first.ports, webserver=port)
        dataclasses.replace(first, ports=picked).save(layout.state_file)

        state = up(layout)

    assert state.ports.webserver != port
    assert state.ports.code_server != picked.code_server
    assert control._serving(state.webserver_url)
    # what the next `up`, `down` and the workspace read: the ports served on
    assert ClusterState.load(layout.state_file) == state
    workspace = yaml.safe_load(layout.workspace.read_text())
    assert workspace["load_from"][0]["grpc_server"]["port"] == state.ports.code_server
    assert "the webserver's port was taken meanwhile" in capsys.readouterr().out
    log = (layout.logs / "webserver.log").read_text()
    assert "address already in use" in log.lower()


def test_a_server_that_stops_for_another_reason_fails_the_start_at_once(
    layout: ClusterLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_layout: ClusterLayout, state: ClusterState) -> dict[str, list[str]]:
        names = ["code-server", "daemon", *processes.worker_names()]
        found = {name: [sys.executable, "-c", IDLE] for name in names}
        return found | {"webserver": [sys.executable, "-c", "raise SystemExit('bad settings')"]}

    monkeypatch.setattr(processes, "commands", broken)
    state = ClusterState.fresh(LOCAL)
    state.save(layout.state_file)
    with pytest.raises(backing.ServiceError, match="bad settings"):
        up(layout)
    assert ClusterState.load(layout.state_file) == state, "no port moved for that"
