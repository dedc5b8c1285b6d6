"""The thread protocol through the official Python SDK's `client.threads.stream()`, over SSE and
WebSocket: every channel, interrupts answered with `thread.run.respond`, the final output, and a
reconnect to another server process with `since`."""

from __future__ import annotations

import os
import time

import httpx
import pytest
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.stream.transport import (
    SyncProtocolSseTransport,
    SyncProtocolWebSocketTransport,
)

ALL = ["lifecycle", "values", "updates", "messages", "tools", "custom", "checkpoints", "tasks", "input"]
TERMINAL = {"completed", "failed", "interrupted"}


def is_root_end(event: dict) -> bool:
    params = event["params"]
    return (
        event["method"] == "lifecycle"
        and params["namespace"] == []
        and params["data"]["event"] in TERMINAL
    )


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def read(transport: str, thread_id: str, params: dict, until=None, url=None) -> list[dict]:
    """Events of `POST|GET /threads/{id}/stream/events` through the SDK's own transport."""
    transport_class = (
        SyncProtocolSseTransport if transport == "sse" else SyncProtocolWebSocketTransport
    )
    with httpx.Client(base_url=url or os.environ["GRAPHDOCK_URL"], timeout=30.0) as http:
        protocol = transport_class(client=http, thread_id=thread_id)
        handle = protocol.open_event_stream(params)
        seen = []
        try:
            for event in handle.events:
                if "method" not in event:
                    continue  # the WebSocket's reply to its subscribe command
                seen.append(event)
                if (until or is_root_end)(event):
                    break
        finally:
            handle.close()
            protocol.close()
    return seen


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_every_channel_then_respond_to_the_interrupt(
    client: SyncLangGraphClient, transport: str
) -> None:
    with client.threads.stream(assistant_id="agent", transport=transport) as thread:
        result = thread.run.start(input={"messages": [{"role": "user", "content": "add"}]})
        assert isinstance(result["run_id"], str)
        # The SDK's lifecycle watcher sees the subgraph's question (`thread.output` waits for
        # completion, which comes after the answer).
        wait_for(lambda: thread.interrupted)
        values = client.threads.get_state(thread.thread_id)["values"]
        assert [m["type"] for m in values["messages"]] == ["human", "ai", "tool"]

        # The SDK's transport replays the run's events from the log. (A subscription of the
        # session that started the run ends at the first pause its own lifecycle watcher sees,
        # which may come before the subscription's first event.)
        seen = read(transport, thread.thread_id, {"channels": ALL})
        methods = {e["method"] for e in seen}
        assert {
            "lifecycle", "values", "updates", "messages", "tools", "custom",
            "checkpoints", "tasks", "input.requested",
        } <= methods
        assert seen[0]["params"]["data"] == {"event": "running", "graph_name": "agent"}
        assert seen[-1]["params"]["data"]["event"] == "interrupted"
        seqs = [e["seq"] for e in seen]
        assert seqs == sorted(seqs)
        asked = next(e for e in seen if e["method"] == "input.requested")
        assert asked["params"]["namespace"][0].startswith("review:")
        assert [i["interrupt_id"] for i in thread.interrupts] == [
            asked["params"]["data"]["interrupt_id"]
        ]
        finished = [
            e["params"]["data"] for e in seen
            if e["method"] == "tools" and e["params"]["data"]["event"] == "tool-finished"
        ]
        assert finished[0]["tool_call_id"] == "call_add"
        deltas = [
            e for e in seen
            if e["method"] == "messages" and e["params"]["data"]["event"] == "content-block-delta"
        ]
        assert "".join(e["params"]["data"]["delta"]["text"] for e in deltas) == "Adding two numbers."
        # Subgraph namespaces: the custom event from inside `review` carries its namespace.
        nested = [e for e in seen if e["method"] == "custom" and e["params"]["namespace"]]
        assert nested[0]["params"]["namespace"][0].startswith("review:")

        thread.run.respond("yes")
        output = thread.output
        assert output["answer"] == "yes"
    # An ordinary thread: both runs are in its runs list, and it is idle.
    assert client.threads.get(thread.thread_id)["status"] == "idle"
    assert len(client.runs.list(thread.thread_id)) == 2


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_filters_by_namespace_and_depth(client: SyncLangGraphClient, transport: str) -> None:
    with client.threads.stream(assistant_id="agent", transport=transport) as thread:
        thread.run.start(input={"messages": []})
        wait_for(lambda: thread.interrupted)
        rooted = read(transport, thread.thread_id, {"channels": ["lifecycle", "custom"], "depth": 0})
        inside = read(
            transport,
            thread.thread_id,
            {"channels": ["custom", "input"], "namespaces": [["review"]]},
            until=lambda e: e["method"] == "input.requested",
        )
        assert all(e["params"]["namespace"] == [] for e in rooted)
        assert [e["params"]["data"]["step"] for e in rooted if e["method"] == "custom"] == ["tool"]
        assert [e["method"] for e in inside] == ["custom", "input.requested"]
        assert all(e["params"]["namespace"][0].startswith("review:") for e in inside)


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_reconnect_to_the_other_server_with_since(
    client: SyncLangGraphClient, transport: str
) -> None:
    with client.threads.stream(assistant_id="slow", transport=transport) as first:
        events = first.subscribe(["custom", "lifecycle"])
        first.run.start(input={"ticks": 12})
        seen = []
        for event in events:
            seen.append(event)
            if sum(1 for e in seen if e["method"] == "custom") == 4:
                break
        cursor = seen[-1]["seq"]
    # Another process, the same thread: the SDK's transport reconnects with the cursor as `since`.
    rest = read(
        transport,
        first.thread_id,
        {"channels": ["custom", "lifecycle"], "since": cursor},
        url=os.environ["GRAPHDOCK_URL_B"],
    )
    ticks = [e["params"]["data"]["payload"]["tick"] for e in seen + rest if e["method"] == "custom"]
    assert ticks == list(range(12))
    assert all(e["seq"] > cursor for e in rest)
