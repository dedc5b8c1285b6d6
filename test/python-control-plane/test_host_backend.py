"""The official control-plane client of the LangGraph CLI (langgraph_cli.host_backend) against
`graphdock api`: the quick-start flow a CI pipeline runs with `langgraph deploy`."""

from __future__ import annotations

import os
import uuid

import pytest
from langgraph_cli.host_backend import HostBackendClient, HostBackendError


@pytest.fixture(scope="module")
def client() -> HostBackendClient:
    return HostBackendClient(
        os.environ["CONTROL_PLANE_URL"],
        os.environ["CONTROL_PLANE_API_KEY"],
        os.environ["CONTROL_PLANE_TENANT_ID"],
    )


@pytest.fixture(scope="module")
def listener_id() -> str:
    return os.environ["CONTROL_PLANE_LISTENER_ID"]


def test_quick_start_create_read_poll_patch(client: HostBackendClient, listener_id: str) -> None:
    name = f"py-{uuid.uuid4().hex[:8]}"
    created = client.create_deployment(
        name=name,
        source="external_docker",
        source_config={"listener_id": listener_id, "listener_config": {"k8s_namespace": "agents"}},
        source_revision_config={"image_uri": "registry.local/agent:1"},
    )
    assert created["name"] == name
    assert created["secrets"] == []
    deployment = client.get_deployment(created["id"])
    assert deployment["latest_revision_id"] == created["latest_revision_id"]
    revision = client.get_revision(created["id"], created["latest_revision_id"])
    assert revision["status"] == "CREATING"

    updated = client.update_deployment(
        created["id"],
        "registry.local/agent:2",
        revision_source="external_docker",
        secrets=[{"name": "OPENAI_API_KEY", "value": "sk-py"}],
    )
    assert updated["latest_revision_id"] != created["latest_revision_id"]
    assert updated["source_revision_config"]["image_uri"] == "registry.local/agent:2"
    newest = client.list_revisions(created["id"], limit=1)
    assert [r["id"] for r in newest] == [updated["latest_revision_id"]]

    found = client.list_deployments(name_contains=name)
    assert [d["id"] for d in found] == [created["id"]]
    client.delete_deployment(created["id"])
    with pytest.raises(HostBackendError) as missing:
        client.get_deployment(created["id"])
    assert missing.value.status_code == 404


def test_errors_carry_status_and_detail(client: HostBackendClient, listener_id: str) -> None:
    with pytest.raises(HostBackendError) as reserved:
        client.create_deployment(
            name="reserved",
            source="external_docker",
            source_config={"listener_id": listener_id, "listener_config": {"k8s_namespace": "agents"}},
            source_revision_config={"image_uri": "registry.local/agent:1"},
            secrets=[{"name": "POSTGRES_URI", "value": "x"}],
        )
    assert reserved.value.status_code == 422
    assert "reserved" in str(reserved.value)
    with pytest.raises(HostBackendError) as no_listener:
        client.create_deployment(
            name="no-listener",
            source="external_docker",
            source_config={},
            source_revision_config={"image_uri": "registry.local/agent:1"},
        )
    # The CLI recognises this text to ask the user for a listener.
    assert "listener_id' is required" in str(no_listener.value)
