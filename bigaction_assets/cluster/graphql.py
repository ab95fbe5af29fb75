"""The few questions the cluster asks Dagster's webserver over GraphQL, the API its UI uses."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from bigaction_assets.cluster.layout import LOCATION_NAME

REPOSITORY = "__repository__"  # the one repository of a `@dg.definitions` code location
SELECTOR = {"repositoryLocationName": LOCATION_NAME, "repositoryName": REPOSITORY}

WORKSPACE = """query {
  workspaceOrError { __typename ... on Workspace { locationEntries {
    name loadStatus locationOrLoadError { __typename ... on PythonError { message } }
  } } }
}"""

AUTOMATION = """query ($selector: RepositorySelector!) {
  sensorsOrError(repositorySelector: $selector) {
    __typename ... on Sensors { results { name sensorState { id status } } }
  }
  schedulesOrError(repositorySelector: $selector) {
    __typename ... on Schedules { results { name scheduleState { id status } } }
  }
}"""

RELOAD = """mutation ($name: String!) {
  reloadRepositoryLocation(repositoryLocationName: $name) { __typename }
}"""

STOP_SENSOR = """mutation ($id: String) {
  stopSensor(id: $id) { __typename ... on PythonError { message } }
}"""

STOP_SCHEDULE = """mutation ($id: String) {
  stopRunningSchedule(id: $id) { __typename ... on PythonError { message } }
}"""

DAEMONS = (
    """query { instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } } }"""
)


class GraphQLError(RuntimeError):
    """The webserver answered with errors, or not at all."""


def graphql(url: str, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `data` of one GraphQL request to the webserver at `url`."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(
        f"{url}/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            answer = json.loads(reply.read())
    except (urllib.error.URLError, OSError) as exc:
        raise GraphQLError(f"Dagster's webserver at {url} did not answer: {exc}") from exc
    if answer.get("errors"):
        raise GraphQLError(f"{url}: {answer['errors']}")
    return answer["data"]


def location_loaded(url: str) -> bool:
    """Whether the code location has loaded; raises with Python's message if it failed to.

    A code server still loading the definitions is unreachable for ~10 s: the webserver is asked
    to look again until it answers."""
    data = graphql(url, WORKSPACE)["workspaceOrError"]
    if data["__typename"] != "Workspace":
        return False
    for entry in data["locationEntries"]:
        if entry["name"] != LOCATION_NAME or entry["loadStatus"] != "LOADED":
            continue
        loaded = entry["locationOrLoadError"] or {}
        if loaded.get("__typename") == "PythonError":
            if "DagsterUserCodeUnreachableError" in loaded["message"]:
                graphql(url, RELOAD, {"name": LOCATION_NAME})
                return False
            raise GraphQLError(f"the code location failed to load: {loaded['message']}")
        return True
    return False


def pause_automation(url: str) -> list[str]:
    """Stops every running sensor and schedule, so only the runs submitted to the cluster run
    (a sensor would otherwise start its own runs of the same partitions); returns their names."""
    data = graphql(url, AUTOMATION, {"selector": SELECTOR})
    paused = []
    for kind, state_key, mutation in (
        ("sensorsOrError", "sensorState", STOP_SENSOR),
        ("schedulesOrError", "scheduleState", STOP_SCHEDULE),
    ):
        for item in data[kind].get("results", []):
            if item[state_key]["status"] == "RUNNING":
                result = graphql(url, mutation, {"id": item[state_key]["id"]})
                outcome = next(iter(result.values()))
                if outcome["__typename"] == "PythonError":
                    raise GraphQLError(f"could not stop {item['name']}: {outcome['message']}")
                paused.append(item["name"])
    return sorted(paused)


def daemons_healthy(url: str) -> bool:
    """Whether every daemon the instance needs (the run queue among them) has a fresh heartbeat."""
    statuses = graphql(url, DAEMONS)["instance"]["daemonHealth"]["allDaemonStatuses"]
    return bool(statuses) and all(s["healthy"] for s in statuses if s["required"])
