"""A real LSP client (pygls's) driving `python -m gradguard server` over stdio, for the tests and the bench."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


class Client(LanguageClient):
    """Collects every publishDiagnostics notification, by URI, and lets a test wait for one."""

    def __init__(self) -> None:
        super().__init__("gradguard-tests", "1")
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.versions: dict[str, int | None] = {}
        self.published: asyncio.Queue[str] = asyncio.Queue()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params.diagnostics
            self.versions[params.uri] = params.version
            self.published.put_nowait(params.uri)

    async def wait_for(self, uri: str, timeout: float = 60) -> list[types.Diagnostic]:
        """The next diagnostics published for `uri`."""
        async with asyncio.timeout(timeout):
            while True:
                if await self.published.get() == uri:
                    return self.diagnostics[uri]


async def session(root: Path, body: Callable[[Client], Awaitable[T]]) -> T:
    """Start the server in `root`, initialize, run `body`, shut down."""
    client = Client()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    await client.start_io(sys.executable, "-m", "gradguard", "server", cwd=str(root), env=env)
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
            )
        )
        client.initialized(types.InitializedParams())
        return await body(client)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def run(root: Path, body: Callable[[Client], Awaitable[T]]) -> T:
    """`session` from synchronous test code."""
    return asyncio.run(session(root, body))
