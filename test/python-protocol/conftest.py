"""Fixtures for the thread protocol tests: the official sync client at GRAPHDOCK_URL (server A;
GRAPHDOCK_URL_B is server B, another process on the same database)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient


def _url(name: str) -> str:
    url = os.environ.get(name)
    if not url:
        pytest.fail(f"{name} must point at a running Graphdock server")
    return url


@pytest.fixture(scope="session")
def client() -> Iterator[SyncLangGraphClient]:
    with get_sync_client(url=_url("GRAPHDOCK_URL"), api_key=None, timeout=30.0) as sdk:
        yield sdk
