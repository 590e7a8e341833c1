"""kinesalite and dynalite (npm) as local servers, run like the embedded moto server.

They are installed by ``npm ci --prefix tests/npm`` (the README's test command does it);
``serve.js`` binds them to 127.0.0.1 on a free port and exits when our stdin closes.
"""

from __future__ import annotations

import os
import shutil

from kinesis_dstream.local import LocalAWS

#: tests/npm: package.json and the lock file stay where `npm ci --prefix tests/npm` installs.
NPM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "npm")


class NodeServer(LocalAWS):
    """``kinesalite`` or ``dynalite`` in a child node process; same API as LocalAWS."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.label = f"{name} (npm)"

    def command(self, port: int) -> list:
        node = shutil.which("node")
        if node is None or not os.path.isdir(os.path.join(NPM_DIR, "node_modules", self.name)):
            raise RuntimeError(
                f"{self.label} is not installed: run `npm ci --prefix tests/npm` "
                "(needs Node.js on PATH)"
            )
        return [node, os.path.join(NPM_DIR, "serve.js"), self.name, str(port)]
