"""A deployed graph used from Python LangGraph through `RemoteGraph` (PyPI `langgraph`), as a
graph of its own and as a node of a local graph: invoke, stream, state, history, interrupts and
the thread protocol's `astream_events(version="v3")`."""

from __future__ import annotations

import asyncio

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command
from langgraph_sdk.client import SyncLangGraphClient


def said(content: str) -> dict:
    return {"messages": [{"role": "user", "content": content}]}


def contents(values: dict) -> list[str]:
    return [m["content"] if isinstance(m, dict) else m.content for m in values["messages"]]


def on_thread(client: SyncLangGraphClient) -> dict:
    return {"configurable": {"thread_id": client.threads.create()["thread_id"]}}


def test_invoke_stream_state_and_history(base_url: str, client: SyncLangGraphClient) -> None:
    remote = RemoteGraph("echo", url=base_url, api_key=None)
    assert contents(remote.invoke(said("alone"))) == ["alone", "echo: alone"]
    config = on_thread(client)
    remote.invoke(said("one"), config=config)
    parts = list(remote.stream(said("two"), config=config, stream_mode=["values", "updates"]))
    assert {p.event for p in parts} == {"values", "updates"}
    state = remote.get_state(config)
    assert contents(state.values) == ["one", "echo: one", "two", "echo: two"]
    assert state.next == ()
    history = list(remote.get_state_history(config, limit=3))
    assert len(history) == 3 and history[0].config == state.config
    updated = remote.update_state(config, said("by hand"), as_node="echo")
    assert contents(remote.get_state(updated).values)[-1] == "by hand"
    assert [n.id for n in remote.get_graph().nodes.values()] == ["__start__", "echo", "__end__"]


def test_subgraph_namespaces_and_interrupts(base_url: str, client: SyncLangGraphClient) -> None:
    nested = RemoteGraph("nested", url=base_url, api_key=None)
    chunks = list(nested.stream(said("go"), stream_mode="updates", subgraphs=True))
    namespaces = {ns for ns, _ in chunks}
    assert () in namespaces and any(ns and ns[0].startswith("inner:") for ns in namespaces)

    approval = RemoteGraph("interrupt", url=base_url, api_key=None)
    config = on_thread(client)
    paused = approval.invoke(said("draft it"), config=config)
    assert paused["__interrupt__"][0]["value"] == {"question": "Approve the draft?"}
    assert approval.get_state(config).next == ("review",)
    done = approval.invoke(Command(resume="yes"), config=config)
    assert contents(done)[-1] == "Review: yes" and done["approved"] is True


def test_as_a_node_of_a_local_graph(base_url: str) -> None:
    remote = RemoteGraph("echo", url=base_url, api_key=None)
    local = StateGraph(MessagesState).add_node("remote", remote).add_edge(START, "remote").compile()
    assert contents(local.invoke(said("node"))) == ["node", "echo: node"]
    chunks = list(local.stream(said("inside"), stream_mode="updates", subgraphs=True))
    assert any(ns and ns[0].startswith("remote:") for ns, _ in chunks)


def test_astream_events_v3(base_url: str, client: SyncLangGraphClient) -> None:
    remote = RemoteGraph("echo", url=base_url, api_key=None)
    nested = RemoteGraph("nested", url=base_url, api_key=None)

    async def drive() -> tuple[object, list[list[str]], list[tuple[str, ...]]]:
        async with await remote.astream_events(said("v3"), config=on_thread(client), version="v3") as run:
            output = await asyncio.wait_for(run.output(), 15)
        snapshots: list[list[str]] = []
        async with await remote.astream_events(said("seen"), config=on_thread(client), version="v3") as run:
            async for values in run.values:
                snapshots.append(contents(values) if values.get("messages") else [])
                if snapshots[-1] == ["seen", "echo: seen"] and len(snapshots) > 1:
                    break
        paths: list[tuple[str, ...]] = []
        async with await nested.astream_events(said("n"), config=on_thread(client), version="v3") as run:
            async for sub in run.subgraphs:
                paths.append(tuple(sub.path))
            await asyncio.wait_for(run.output(), 15)
        return output, snapshots, paths

    output, snapshots, paths = asyncio.run(asyncio.wait_for(drive(), 60))
    assert contents(output) == ["v3", "echo: v3"]
    # The first snapshot is the thread's state when the projection opened (read over REST, so
    # the run may already be over); the protocol's `values` events follow in order.
    assert ["seen"] in snapshots[1:]
    assert snapshots[-1] == ["seen", "echo: seen"]
    assert len(paths) == 1 and paths[0][0].startswith("inner:")
