"""Crons through the official Python client: the fields it sends (timezone, end_time), search,
count, update, delete, and a cron that fires."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

YEARLY = "0 0 1 1 *"


def said(content: str) -> dict:
    return {"messages": [{"role": "user", "content": content}]}


def test_create_search_count_update_delete(client: SyncLangGraphClient, tag: str) -> None:
    end = datetime(2099, 1, 1, tzinfo=timezone.utc)
    cron = client.crons.create(
        "echo",
        schedule="0 9 * * *",
        timezone="Asia/Kolkata",
        end_time=end,
        metadata={"tag": tag},
        input=said("namaste"),
        on_run_completed="keep",
    )
    assert cron["timezone"] == "Asia/Kolkata"
    assert cron["next_run_date"].endswith("T03:30:00.000Z")
    assert cron["end_time"] == "2099-01-01T00:00:00.000Z"
    assert cron["on_run_completed"] == "keep"
    assert cron["payload"]["input"] == said("namaste")

    thread = client.threads.create()
    client.crons.create_for_thread(thread["thread_id"], "echo", schedule=YEARLY, metadata={"tag": tag})

    found = client.crons.search(metadata={"tag": tag}, sort_by="next_run_date", sort_order="asc")
    assert len(found) == 2
    assert client.crons.count(metadata={"tag": tag}) == 2
    assert client.crons.count(thread_id=thread["thread_id"]) == 1

    updated = client.crons.update(cron["cron_id"], enabled=False, end_time=None)
    assert updated["enabled"] is False
    assert updated["end_time"] is None
    assert client.crons.search(metadata={"tag": tag}, enabled=False)[0]["cron_id"] == cron["cron_id"]

    client.crons.delete(cron["cron_id"])
    with pytest.raises(NotFoundError):
        client.crons.delete(cron["cron_id"])


def test_bad_schedule_and_timezone_are_422(client: SyncLangGraphClient) -> None:
    with pytest.raises(UnprocessableEntityError):
        client.crons.create("echo", schedule="every morning")
    with pytest.raises(UnprocessableEntityError):
        client.crons.create("echo", schedule=YEARLY, timezone="Nowhere/Special")


def test_a_thread_cron_fires_until_its_end_time(client: SyncLangGraphClient) -> None:
    thread = client.threads.create()
    end = datetime.now(timezone.utc) + timedelta(seconds=3)
    cron = client.crons.create_for_thread(
        thread["thread_id"], "echo", schedule="* * * * * *", input=said("tick"), end_time=end
    )
    deadline = time.monotonic() + 30
    runs: list = []
    while time.monotonic() < deadline:
        runs = client.runs.list(thread["thread_id"], limit=100)
        if runs and all(r["status"] == "success" for r in runs) and time.time() > end.timestamp() + 1.5:
            break
        time.sleep(0.2)
    assert runs, "the cron never fired"
    for run in runs:
        assert run["kwargs"]["cron_id"] == cron["cron_id"]
        assert datetime.fromisoformat(run["kwargs"]["scheduled_for"].replace("Z", "+00:00")) <= end
    scheduled = [r["kwargs"]["scheduled_for"] for r in runs]
    assert len(set(scheduled)) == len(scheduled)
