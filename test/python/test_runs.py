"""Runs through the official Python client: wait, stream, background create and join, conflicts."""

from __future__ import annotations

import httpx
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


def refused(status: int, call) -> None:
    """The call fails with this HTTP status (runs.wait raises httpx's error itself)."""
    with pytest.raises(httpx.HTTPStatusError) as excinfo:
        call()
    assert excinfo.value.response.status_code == status


def test_a_checkpoint_the_thread_lacks_is_refused_and_nothing_runs(client: SyncLangGraphClient) -> None:
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "echo", input=said("one"))
    unknown = "1f1eada5-0000-6000-8000-000000000000"
    refused(404, lambda: client.runs.wait(thread_id, "echo", input=said("two"), checkpoint_id=unknown))
    refused(422, lambda: client.runs.wait(thread_id, "echo", input=said("two"), checkpoint_id="not-one"))
    refused(404, lambda: client.threads.update_state(thread_id, said("two"), checkpoint_id=unknown))
    assert contents(client.threads.get_state(thread_id)["values"]) == ["one", "echo: one"]
    assert len(client.runs.list(thread_id)) == 1
    # A checkpoint the thread has still forks, given as the state names it.
    first = client.threads.get_history(thread_id, limit=2)[1]
    forked = client.runs.wait(thread_id, "echo", input=said("two"), checkpoint=first["checkpoint"])
    assert contents(forked) == ["one", "two", "echo: two"]


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


def test_resume_with_a_send(client: SyncLangGraphClient) -> None:
    """`goto` as the SDK's Send ({node, input}): the review ends, then `draft` runs again."""
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "interrupt", input=said("draft"))
    send = {"node": "draft", "input": said("again")}
    result = client.runs.wait(thread["thread_id"], "interrupt", command={"resume": "yes", "goto": send})
    assert "__error__" not in result
    assert contents(client.threads.get_state(thread["thread_id"])["values"]) == [
        "draft",
        "Draft ready for review.",
        "Review: yes",
        "Draft ready for review.",
    ]
    assert client.threads.get(thread["thread_id"])["status"] == "interrupted"


def test_stream_modes_in_the_official_shapes(client: SyncLangGraphClient) -> None:
    parts = list(client.runs.stream(None, "agent", input=said("hello there"), stream_mode=["messages", "events"]))
    partials = [p.data[0]["content"] for p in parts if p.event == "messages/partial"]
    assert partials[-1] == "You said: hello there"
    complete = [m for p in parts if p.event == "messages/complete" for m in p.data]
    assert [m["type"] for m in complete] == ["human", "ai"]
    assert "on_chat_model_stream" in {p.data["event"] for p in parts if p.event == "events"}

    thread = client.threads.create()
    checkpoints = [
        p.data
        for p in client.runs.stream(thread["thread_id"], "echo", input=said("save"), stream_mode="checkpoints")
        if p.event == "checkpoints"
    ]
    assert [c["metadata"]["step"] for c in checkpoints] == [-1, 0, 1]
    assert checkpoints[-1]["checkpoint"]["thread_id"] == thread["thread_id"]
    assert checkpoints[-1]["parent_config"]["configurable"]["checkpoint_id"] == checkpoints[1]["checkpoint"]["checkpoint_id"]


def test_thread_stream_replays_every_run(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    first = client.runs.create(thread["thread_id"], "echo", input=said("one"))
    second = client.runs.create(thread["thread_id"], "echo", input=said("two"))
    client.runs.join(thread["thread_id"], second["run_id"])
    started: list[str] = []
    for part in client.threads.join_stream(thread["thread_id"], last_event_id="-", stream_mode="lifecycle"):
        started.append(part.data["run_id"])
        if len(started) == 2:
            break
    assert started == [first["run_id"], second["run_id"]]


def test_feedback_keys_need_a_traced_runtime(client: SyncLangGraphClient) -> None:
    """This suite's runtime traces nothing: feedback URLs would point nowhere, so keys are refused."""
    thread_id = client.threads.create()["thread_id"]
    stream = lambda: list(client.runs.stream(thread_id, "echo", input=said("x"), feedback_keys=["helpful"]))  # noqa: E731
    refused(422, stream)
    assert client.runs.list(thread_id) == []


def test_run_list_select_and_join_stream_modes(client: SyncLangGraphClient) -> None:
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "echo", input=said("pick"), stream_mode=["values", "updates"])
    client.runs.join(thread_id, run["run_id"])
    # `select` (repeated query parameters from this SDK) keeps only the fields it names.
    listed = client.runs.list(thread_id, select=["run_id", "status"])
    assert listed == [{"run_id": run["run_id"], "status": "success"}]
    refused(422, lambda: client.runs.list(thread_id, select=["nope"]))
    # A join with `stream_mode` gets only those modes (and the run's metadata).
    events = [p.event for p in client.runs.join_stream(thread_id, run["run_id"], stream_mode="updates")]
    assert "updates" in events and "values" not in events
    assert set(events) <= {"metadata", "updates"}
    everything = [p.event for p in client.runs.join_stream(thread_id, run["run_id"])]
    assert {"values", "updates"} <= set(everything)


def test_state_and_history_select(client: SyncLangGraphClient) -> None:
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "echo", input=said("sel"))
    full = client.threads.get_state(thread_id)
    # `values.<key>` keeps that key of the values and nothing else of the snapshot.
    assert client.threads.get_state(thread_id, select=["values.messages"]) == {
        "values": {"messages": full["values"]["messages"]}
    }
    picked = client.threads.get_state(thread_id, select=["next", "checkpoint"])
    assert set(picked) <= {"next", "checkpoint", "checkpoint_id"}
    assert picked["checkpoint"] == full["checkpoint"] and picked["next"] == []
    # At a checkpoint (POST /state/checkpoint), and by its id (GET /state/{id}).
    first = client.threads.get_history(thread_id, limit=3)[-1]
    at = client.threads.get_state(thread_id, checkpoint=first["checkpoint"], select=["metadata"])
    assert at == {"metadata": first["metadata"]}
    by_id = client.threads.get_state(
        thread_id, checkpoint_id=first["checkpoint"]["checkpoint_id"], select=["created_at"]
    )
    assert by_id == {"created_at": first["created_at"]}
    history = client.threads.get_history(thread_id, limit=2, select=["checkpoint"])
    assert len(history) == 2 and all(set(h) == {"checkpoint", "checkpoint_id"} for h in history)
    refused(422, lambda: client.threads.get_state(thread_id, select=["nope"]))
