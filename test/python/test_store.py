"""The store through the official Python client: items, search, namespaces, and a graph using it."""

from __future__ import annotations

import uuid

from langgraph_sdk.client import SyncLangGraphClient


def fresh(label: str) -> list[str]:
    return [label, uuid.uuid4().hex[:8]]


def test_put_get_delete(client: SyncLangGraphClient) -> None:
    ns = fresh("py-crud")
    client.store.put_item(ns, key="k", value={"text": "hello", "n": 1})
    item = client.store.get_item(ns, key="k")
    assert item is not None
    assert item["namespace"] == ns
    assert item["value"] == {"text": "hello", "n": 1}
    assert item["created_at"] and item["updated_at"]
    client.store.put_item(ns, key="k", value={"text": "bye"}, ttl=60)
    assert client.store.get_item(ns, key="k", refresh_ttl=False)["value"] == {"text": "bye"}
    client.store.delete_item(ns, key="k")
    assert client.store.get_item(ns, key="k") is None


def test_search_and_namespaces(client: SyncLangGraphClient) -> None:
    root, ident = fresh("py-search")
    client.store.put_item([root, ident, "a"], key="1", value={"kind": "x", "n": 1})
    client.store.put_item([root, ident, "a"], key="2", value={"kind": "y", "n": 2})
    client.store.put_item([root, ident, "b", "deep"], key="3", value={"kind": "x", "n": 3})

    found = client.store.search_items([root, ident], filter={"kind": "x"})
    assert sorted(i["key"] for i in found["items"]) == ["1", "3"]
    # SearchItem's score is a required key, None without a query.
    assert all(i["score"] is None for i in found["items"])
    ranged = client.store.search_items([root, ident], filter={"n": {"$gt": 1}}, limit=1)
    assert len(ranged["items"]) == 1
    assert ranged["items"][0]["value"]["n"] in (2, 3)

    listed = client.store.list_namespaces(prefix=[root, ident])
    assert listed["namespaces"] == [[root, ident, "a"], [root, ident, "b", "deep"]]
    shallow = client.store.list_namespaces(prefix=[root, ident], max_depth=3)
    assert shallow["namespaces"] == [[root, ident, "a"], [root, ident, "b"]]
    assert client.store.list_namespaces(prefix=[root, ident], suffix=["deep"])["namespaces"] == [
        [root, ident, "b", "deep"]
    ]


def test_a_graph_reads_what_the_client_wrote(client: SyncLangGraphClient) -> None:
    user = f"py-{uuid.uuid4().hex[:8]}"
    client.store.put_item(["memories", user], key="seed", value={"fact": "speaks French"})
    result = client.runs.wait(
        None,
        "memory",
        input={"messages": [{"role": "user", "content": "remember plays chess"}]},
        config={"configurable": {"user_id": user}},
    )
    assert result["messages"][-1]["content"] == "I remember: plays chess; speaks French"
    facts = client.store.search_items(["memories", user])["items"]
    assert sorted(i["value"]["fact"] for i in facts) == ["plays chess", "speaks French"]
