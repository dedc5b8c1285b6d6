"""Runs through the official Python client: wait, stream, background create and join, conflicts."""

from __future__ import annotations

import pytest
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import ConflictError


def said(content: str) -> dict:
    return {"messages": [{"role": "user", "content": content}]}


def contents(values: dict) -> list[str]:
    return [m["content"] for m in values["messages"]]


def test_wait_returns_the_final_values_and_settles_the_thread(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    result = client.runs.wait(thread["thread_id"], "echo", input=said("from python"))
    assert contents(result) == ["from python", "echo: from python"]
    assert client.threads.get(thread["thread_id"])["status"] == "idle"
    runs = client.runs.list(thread["thread_id"])
    assert [r["status"] for r in runs] == ["success"]


def test_stateless_wait(client: SyncLangGraphClient) -> None:
    result = client.runs.wait(None, "agent", input=said("add 4 and 5"))
    assert result["messages"][-1]["content"] == "The answer is 9."


def test_stream_yields_metadata_then_requested_modes(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    parts = list(
        client.runs.stream(thread["thread_id"], "echo", input=said("stream"), stream_mode=["values", "updates"])
    )
    assert parts[0].event == "metadata"
    assert {p.event for p in parts} == {"metadata", "values", "updates"}
    updates = [p.data for p in parts if p.event == "updates"]
    assert updates[-1]["echo"]["messages"][0]["content"] == "echo: stream"


def test_background_create_then_join(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], "slow", input=said("bg"))
    assert run["thread_id"] == thread["thread_id"]
    result = client.runs.join(thread["thread_id"], run["run_id"])
    assert contents(result) == ["bg", "first: bg", "second: first: bg"]
    assert client.runs.get(thread["thread_id"], run["run_id"])["status"] == "success"


def test_reject_while_busy_is_a_conflict(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], "slow", input=said("busy"))
    with pytest.raises(ConflictError):
        client.runs.create(thread["thread_id"], "slow", input=said("no"), multitask_strategy="reject")
    client.runs.join(thread["thread_id"], run["run_id"])
    assert client.runs.get(thread["thread_id"], run["run_id"])["status"] == "success"


def test_interrupt_and_resume(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "interrupt", input=said("draft"))
    assert client.threads.get(thread["thread_id"])["status"] == "interrupted"
    resumed = client.runs.wait(thread["thread_id"], "interrupt", command={"resume": "yes"})
    assert resumed["approved"] is True
