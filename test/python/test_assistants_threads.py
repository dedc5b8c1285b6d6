"""The official Python client (langgraph-sdk) against a Graphdock server: assistants and threads.

Every call goes through the SDK's public methods, exactly as an application would make it.
Each test tags what it creates with a unique metadata value so that searches and counts
only see that test's rows.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError

# The server registers one assistant per graph, with an id derived from the graph id.
SYSTEM_ASSISTANT_NAMESPACE = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
# Every graph of the example config the server runs.
GRAPH_IDS = tuple(json.loads((Path(__file__).parents[2] / "examples" / "langgraph.json").read_text())["graphs"])
SYSTEM_METADATA = {"created_by": "system"}


def system_assistant_id(graph_id: str) -> str:
    return str(uuid.uuid5(SYSTEM_ASSISTANT_NAMESPACE, graph_id))


def is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


HI_SUPERSTEPS: list[dict[str, Any]] = [
    {
        "updates": [
            {
                "values": {"messages": [{"role": "user", "content": "hi"}]},
                "as_node": "__start__",
            }
        ]
    }
]


def create_echo_thread(client: SyncLangGraphClient, tag: str) -> dict[str, Any]:
    """A thread on graph `echo` whose state holds one human message, written at step 0."""
    return client.threads.create(
        metadata={"suite": tag}, graph_id="echo", supersteps=HI_SUPERSTEPS
    )


def message_summary(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["type"], m["content"]) for m in messages]


# --------------------------------------------------------------------------------------------
# Assistants
# --------------------------------------------------------------------------------------------


def test_search_finds_one_system_assistant_per_graph(client: SyncLangGraphClient) -> None:
    found = client.assistants.search(metadata=SYSTEM_METADATA, limit=100)

    assert sorted(a["graph_id"] for a in found) == sorted(GRAPH_IDS)
    for assistant in found:
        graph_id = assistant["graph_id"]
        assert assistant["assistant_id"] == system_assistant_id(graph_id)
        assert assistant["metadata"] == SYSTEM_METADATA
        assert assistant["name"] == graph_id
        assert assistant["version"] == 1


def test_search_by_graph_id_returns_that_graphs_system_assistant(
    client: SyncLangGraphClient,
) -> None:
    found = client.assistants.search(graph_id="interrupt", metadata=SYSTEM_METADATA)

    assert [a["assistant_id"] for a in found] == [system_assistant_id("interrupt")]


def test_get_system_assistant_by_id(client: SyncLangGraphClient) -> None:
    assistant = client.assistants.get(system_assistant_id("agent"))

    assert assistant["assistant_id"] == system_assistant_id("agent")
    assert assistant["graph_id"] == "agent"
    assert assistant["metadata"] == SYSTEM_METADATA


def test_assistant_lifecycle_create_update_versions_set_latest_delete(
    client: SyncLangGraphClient, tag: str
) -> None:
    created = client.assistants.create(
        graph_id="echo",
        config={"configurable": {"model": "first"}},
        metadata={"suite": tag, "stage": "created"},
        name="py-sdk-assistant",
        description="first version",
    )
    assistant_id = created["assistant_id"]
    assert is_uuid(assistant_id)
    assert assistant_id not in {system_assistant_id(g) for g in GRAPH_IDS}
    assert created["graph_id"] == "echo"
    assert created["version"] == 1
    assert created["name"] == "py-sdk-assistant"
    assert created["description"] == "first version"
    assert created["metadata"] == {"suite": tag, "stage": "created"}
    assert created["config"]["configurable"] == {"model": "first"}

    fetched = client.assistants.get(assistant_id)
    assert fetched["assistant_id"] == assistant_id
    assert fetched["version"] == 1
    assert fetched["name"] == "py-sdk-assistant"
    assert fetched["metadata"] == {"suite": tag, "stage": "created"}

    # An update writes a new version and makes it the latest; metadata is merged.
    updated = client.assistants.update(
        assistant_id,
        metadata={"stage": "updated"},
        name="py-sdk-assistant-v2",
        description="second version",
    )
    assert updated["assistant_id"] == assistant_id
    assert updated["version"] == 2
    assert updated["name"] == "py-sdk-assistant-v2"
    assert updated["description"] == "second version"
    assert updated["metadata"] == {"suite": tag, "stage": "updated"}
    assert updated["config"]["configurable"] == {"model": "first"}
    assert client.assistants.get(assistant_id)["version"] == 2

    versions = client.assistants.get_versions(assistant_id)
    assert [v["version"] for v in versions] == [2, 1]
    assert [v["name"] for v in versions] == ["py-sdk-assistant-v2", "py-sdk-assistant"]
    assert versions[1]["metadata"] == {"suite": tag, "stage": "created"}
    assert all(v["assistant_id"] == assistant_id for v in versions)
    assert [v["version"] for v in client.assistants.get_versions(assistant_id, limit=1)] == [2]
    assert [
        v["version"] for v in client.assistants.get_versions(assistant_id, limit=1, offset=1)
    ] == [1]

    # Pointing "latest" back at version 1 brings back its name and metadata.
    rolled_back = client.assistants.set_latest(assistant_id, 1)
    assert rolled_back["assistant_id"] == assistant_id
    assert rolled_back["version"] == 1
    assert rolled_back["name"] == "py-sdk-assistant"
    latest = client.assistants.get(assistant_id)
    assert latest["version"] == 1
    assert latest["name"] == "py-sdk-assistant"
    assert latest["metadata"] == {"suite": tag, "stage": "created"}
    assert [a["version"] for a in client.assistants.search(metadata={"suite": tag})] == [1]

    client.assistants.delete(assistant_id)
    with pytest.raises(NotFoundError) as excinfo:
        client.assistants.get(assistant_id)
    assert excinfo.value.status_code == 404
    assert client.assistants.search(metadata={"suite": tag}) == []


def test_assistant_count(client: SyncLangGraphClient, tag: str) -> None:
    assert client.assistants.count(metadata=SYSTEM_METADATA) == len(GRAPH_IDS)
    assert client.assistants.count(graph_id="echo", metadata=SYSTEM_METADATA) == 1

    assert client.assistants.count(metadata={"suite": tag}) == 0
    client.assistants.create(graph_id="echo", metadata={"suite": tag}, name="count-echo")
    client.assistants.create(graph_id="agent", metadata={"suite": tag}, name="count-agent")

    assert client.assistants.count(metadata={"suite": tag}) == 2
    assert client.assistants.count(metadata={"suite": tag}, graph_id="agent") == 1


def test_assistant_search_sorts_and_pages(client: SyncLangGraphClient, tag: str) -> None:
    for name in ("bravo", "alpha", "charlie"):
        client.assistants.create(graph_id="echo", metadata={"suite": tag}, name=name)

    def names(**kwargs: Any) -> list[str]:
        return [a["name"] for a in client.assistants.search(metadata={"suite": tag}, **kwargs)]

    assert names(sort_by="name", sort_order="asc") == ["alpha", "bravo", "charlie"]
    assert names(sort_by="name", sort_order="desc") == ["charlie", "bravo", "alpha"]
    assert names(sort_by="name", sort_order="asc", limit=2) == ["alpha", "bravo"]
    assert names(sort_by="name", sort_order="asc", limit=2, offset=2) == ["charlie"]
    assert names(sort_by="created_at", sort_order="asc") == ["bravo", "alpha", "charlie"]


def test_create_assistant_with_existing_id(client: SyncLangGraphClient, tag: str) -> None:
    assistant_id = str(uuid.uuid4())
    first = client.assistants.create(
        graph_id="echo", assistant_id=assistant_id, metadata={"suite": tag}, name="original"
    )
    assert first["assistant_id"] == assistant_id

    with pytest.raises(ConflictError) as excinfo:
        client.assistants.create(
            graph_id="echo", assistant_id=assistant_id, if_exists="raise", name="duplicate"
        )
    assert excinfo.value.status_code == 409

    kept = client.assistants.create(
        graph_id="echo", assistant_id=assistant_id, if_exists="do_nothing", name="ignored"
    )
    assert kept["assistant_id"] == assistant_id
    assert kept["name"] == "original"
    assert kept["version"] == 1


def test_get_graph_of_echo_assistant(client: SyncLangGraphClient) -> None:
    graph = client.assistants.get_graph(system_assistant_id("echo"))

    assert {node["id"] for node in graph["nodes"]} == {"__start__", "echo", "__end__"}
    assert {(edge["source"], edge["target"]) for edge in graph["edges"]} == {
        ("__start__", "echo"),
        ("echo", "__end__"),
    }


def test_get_schemas_of_echo_assistant(client: SyncLangGraphClient) -> None:
    schemas = client.assistants.get_schemas(system_assistant_id("echo"))

    assert schemas["graph_id"] == "echo"
    for key in ("input_schema", "output_schema", "state_schema", "config_schema"):
        assert key in schemas, key
    # The echo graph's state is MessagesAnnotation: a single `messages` channel.
    assert "messages" in schemas["state_schema"]["properties"]


def test_unknown_assistant_is_not_found(client: SyncLangGraphClient) -> None:
    with pytest.raises(NotFoundError) as excinfo:
        client.assistants.get(str(uuid.uuid4()))
    assert isinstance(excinfo.value, httpx.HTTPStatusError)
    assert excinfo.value.response.status_code == 404


# --------------------------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------------------------


def test_create_and_get_thread_with_metadata(client: SyncLangGraphClient, tag: str) -> None:
    created = client.threads.create(metadata={"suite": tag, "owner": "py-sdk"})

    assert is_uuid(created["thread_id"])
    assert created["metadata"] == {"suite": tag, "owner": "py-sdk"}
    assert created["status"] == "idle"
    assert created["created_at"]
    assert created["updated_at"]

    fetched = client.threads.get(created["thread_id"])
    assert fetched["thread_id"] == created["thread_id"]
    assert fetched["metadata"] == {"suite": tag, "owner": "py-sdk"}
    assert fetched["status"] == "idle"


def test_create_thread_with_explicit_id_and_if_exists(
    client: SyncLangGraphClient, tag: str
) -> None:
    thread_id = str(uuid.uuid4())
    created = client.threads.create(thread_id=thread_id, metadata={"suite": tag, "n": 1})
    assert created["thread_id"] == thread_id

    kept = client.threads.create(
        thread_id=thread_id, if_exists="do_nothing", metadata={"suite": tag, "n": 2}
    )
    assert kept["thread_id"] == thread_id
    assert kept["metadata"] == {"suite": tag, "n": 1}

    with pytest.raises(ConflictError) as excinfo:
        client.threads.create(thread_id=thread_id, if_exists="raise")
    assert isinstance(excinfo.value, httpx.HTTPStatusError)
    assert excinfo.value.response.status_code == 409

    # Without if_exists the platform's default is to raise as well.
    with pytest.raises(ConflictError):
        client.threads.create(thread_id=thread_id)

    assert client.threads.get(thread_id)["metadata"] == {"suite": tag, "n": 1}


def test_create_thread_with_supersteps_prefills_state(
    client: SyncLangGraphClient, tag: str
) -> None:
    thread = create_echo_thread(client, tag)
    thread_id = thread["thread_id"]
    # The SDK sends graph_id inside the thread's metadata.
    assert thread["metadata"] == {"suite": tag, "graph_id": "echo"}

    state = client.threads.get_state(thread_id)
    assert message_summary(state["values"]["messages"]) == [("human", "hi")]
    # Written as __start__, so the echo node is due next; nothing has run it.
    assert list(state["next"]) == ["echo"]
    assert state["checkpoint"]["thread_id"] == thread_id
    assert state["checkpoint"]["checkpoint_ns"] == ""
    assert is_uuid(state["checkpoint"]["checkpoint_id"])
    assert state["metadata"]["step"] == 0

    fetched = client.threads.get(thread_id)
    assert message_summary(fetched["values"]["messages"]) == [("human", "hi")]


def test_update_thread_metadata_merges(client: SyncLangGraphClient, tag: str) -> None:
    created = client.threads.create(metadata={"suite": tag, "keep": "yes", "change": "before"})

    updated = client.threads.update(
        created["thread_id"], metadata={"change": "after", "added": 3}
    )

    expected = {"suite": tag, "keep": "yes", "change": "after", "added": 3}
    assert updated["thread_id"] == created["thread_id"]
    assert updated["metadata"] == expected
    assert updated["updated_at"] >= created["updated_at"]
    assert client.threads.get(created["thread_id"])["metadata"] == expected


def test_search_threads_by_metadata_status_sort_and_page(
    client: SyncLangGraphClient, tag: str
) -> None:
    ids = []
    for i in range(3):
        parity = "even" if i % 2 == 0 else "odd"
        thread = client.threads.create(metadata={"suite": tag, "index": i, "parity": parity})
        ids.append(thread["thread_id"])

    def found(**kwargs: Any) -> list[str]:
        return [t["thread_id"] for t in client.threads.search(**kwargs)]

    assert sorted(found(metadata={"suite": tag})) == sorted(ids)
    assert sorted(found(metadata={"suite": tag, "parity": "even"})) == sorted([ids[0], ids[2]])
    assert found(metadata={"suite": tag, "index": 1}) == [ids[1]]
    assert sorted(found(metadata={"suite": tag}, status="idle")) == sorted(ids)
    assert found(metadata={"suite": tag}, status="busy") == []

    by_age = {"metadata": {"suite": tag}, "sort_by": "created_at"}
    assert found(**by_age, sort_order="asc") == ids
    assert found(**by_age, sort_order="desc") == ids[::-1]
    assert found(**by_age, sort_order="asc", limit=2) == ids[:2]
    assert found(**by_age, sort_order="asc", limit=2, offset=1) == ids[1:]
    assert found(**by_age, sort_order="asc", limit=2, offset=3) == []

    assert sorted(found(ids=[ids[0], ids[2]])) == sorted([ids[0], ids[2]])


def test_search_threads_extracts_paths_whatever_select_keeps(
    client: SyncLangGraphClient, tag: str
) -> None:
    thread_id = client.threads.create(metadata={"suite": tag, "graph_id": "echo"})["thread_id"]
    client.runs.wait(thread_id, "echo", input={"messages": [{"role": "user", "content": "hello"}]})
    extract = {
        "last": "values.messages[-1].content",
        "first_type": "values.messages[0].type",
        "suite": "metadata.suite",
        "missing": "values.messages[9].content",
        "private": "metadata._hidden",
    }
    [thread] = client.threads.search(metadata={"suite": tag}, extract=extract)
    assert thread["extracted"] == {
        "last": "echo: hello",
        "first_type": "human",
        "suite": tag,
        "missing": None,
        "private": None,
    }
    assert thread["values"]["messages"][0]["content"] == "hello"
    # The paths are followed even where select leaves their column out, which stays out.
    [narrow] = client.threads.search(metadata={"suite": tag}, select=["thread_id"], extract=extract)
    assert narrow == {"thread_id": thread_id, "extracted": thread["extracted"]}
    # Without extract, no such field.
    assert "extracted" not in client.threads.search(metadata={"suite": tag})[0]


def test_search_threads_refuses_bad_extracts(client: SyncLangGraphClient) -> None:
    for extract in (
        {"x": "runs.status"},
        {"not-an-identifier": "values.a"},
        {"status": "values.a"},
        {"x": ""},
        {f"k{i}": "values.a" for i in range(11)},
    ):
        with pytest.raises(httpx.HTTPStatusError) as excinfo:
            client.threads.search(extract=extract)
        assert excinfo.value.response.status_code == 422, extract


def test_count_threads(client: SyncLangGraphClient, tag: str) -> None:
    assert client.threads.count(metadata={"suite": tag}) == 0
    for i in range(3):
        client.threads.create(metadata={"suite": tag, "index": i})

    assert client.threads.count(metadata={"suite": tag}) == 3
    assert client.threads.count(metadata={"suite": tag, "index": 2}) == 1
    assert client.threads.count(metadata={"suite": tag}, status="idle") == 3
    assert client.threads.count(metadata={"suite": tag}, status="busy") == 0


def test_update_state_then_get_state_and_history(client: SyncLangGraphClient, tag: str) -> None:
    thread_id = create_echo_thread(client, tag)["thread_id"]
    before = client.threads.get_state(thread_id)

    response = client.threads.update_state(
        thread_id,
        {"messages": [{"role": "assistant", "content": "written by hand"}]},
        as_node="echo",
    )
    written = response["checkpoint"]
    assert written["thread_id"] == thread_id
    assert is_uuid(written["checkpoint_id"])
    assert written["checkpoint_id"] != before["checkpoint"]["checkpoint_id"]

    state = client.threads.get_state(thread_id)
    assert state["checkpoint"]["checkpoint_id"] == written["checkpoint_id"]
    assert message_summary(state["values"]["messages"]) == [
        ("human", "hi"),
        ("ai", "written by hand"),
    ]
    assert list(state["next"]) == []
    assert state["metadata"]["step"] == 1
    assert state["parent_checkpoint"]["checkpoint_id"] == before["checkpoint"]["checkpoint_id"]

    # History is newest first; each snapshot names its checkpoint and step.
    history = client.threads.get_history(thread_id)
    assert [s["checkpoint"]["checkpoint_id"] for s in history] == [
        written["checkpoint_id"],
        before["checkpoint"]["checkpoint_id"],
    ]
    assert [s["metadata"]["step"] for s in history] == [1, 0]
    assert [len(s["values"]["messages"]) for s in history] == [2, 1]
    assert history[0]["parent_checkpoint"]["checkpoint_id"] == history[1]["checkpoint"][
        "checkpoint_id"
    ]

    newest_only = client.threads.get_history(thread_id, limit=1)
    assert [s["checkpoint"]["checkpoint_id"] for s in newest_only] == [written["checkpoint_id"]]

    # The older checkpoint can still be read by id.
    old = client.threads.get_state(thread_id, checkpoint=history[1]["checkpoint"])
    assert old["checkpoint"]["checkpoint_id"] == before["checkpoint"]["checkpoint_id"]
    assert message_summary(old["values"]["messages"]) == [("human", "hi")]

    # The thread row reflects the latest state.
    thread = client.threads.get(thread_id)
    assert message_summary(thread["values"]["messages"]) == [
        ("human", "hi"),
        ("ai", "written by hand"),
    ]


def test_copy_thread_keeps_state_and_history_but_is_independent(
    client: SyncLangGraphClient, tag: str
) -> None:
    original_id = create_echo_thread(client, tag)["thread_id"]
    original_state = client.threads.get_state(original_id)

    copied = client.threads.copy(original_id)
    assert copied is not None
    copy_id = copied["thread_id"]
    assert is_uuid(copy_id)
    assert copy_id != original_id
    assert copied["metadata"]["suite"] == tag
    assert copied["metadata"]["graph_id"] == "echo"

    copy_state = client.threads.get_state(copy_id)
    assert copy_state["values"] == original_state["values"]
    assert list(copy_state["next"]) == ["echo"]
    assert copy_state["checkpoint"]["thread_id"] == copy_id
    assert len(client.threads.get_history(copy_id)) == len(client.threads.get_history(original_id))

    # Writing to the copy leaves the original untouched.
    client.threads.update_state(
        copy_id,
        {"messages": [{"role": "assistant", "content": "only in the copy"}]},
        as_node="echo",
    )
    assert message_summary(client.threads.get_state(copy_id)["values"]["messages"]) == [
        ("human", "hi"),
        ("ai", "only in the copy"),
    ]
    assert message_summary(client.threads.get_state(original_id)["values"]["messages"]) == [
        ("human", "hi")
    ]
    assert sorted(t["thread_id"] for t in client.threads.search(metadata={"suite": tag})) == sorted(
        [original_id, copy_id]
    )


def test_delete_thread(client: SyncLangGraphClient, tag: str) -> None:
    thread_id = create_echo_thread(client, tag)["thread_id"]

    client.threads.delete(thread_id)

    with pytest.raises(NotFoundError) as excinfo:
        client.threads.get(thread_id)
    assert excinfo.value.status_code == 404
    assert client.threads.search(metadata={"suite": tag}) == []
    assert client.threads.count(metadata={"suite": tag}) == 0
    with pytest.raises(NotFoundError):
        client.threads.delete(thread_id)


def test_unknown_thread_maps_to_not_found(client: SyncLangGraphClient) -> None:
    missing = str(uuid.uuid4())

    with pytest.raises(NotFoundError) as excinfo:
        client.threads.get(missing)
    error = excinfo.value
    assert isinstance(error, httpx.HTTPStatusError)
    assert error.response.status_code == 404
    assert error.status_code == 404

    with pytest.raises(NotFoundError):
        client.threads.get_state(missing)
    with pytest.raises(NotFoundError):
        client.threads.update(missing, metadata={"x": 1})
    with pytest.raises(NotFoundError):
        client.threads.get_history(missing)
