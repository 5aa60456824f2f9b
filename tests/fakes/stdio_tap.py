"""Run a stdio MCP server and copy every line the client sends it to a file:

python -m tests.fakes.stdio_tap LOGFILE COMMAND [ARGS...]
"""

from __future__ import annotations

import subprocess
import sys
import threading


def main() -> int:
    log_path, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert child.stdin is not None

    def pump() -> None:
        with open(log_path, "ab", buffering=0) as log:
            for line in sys.stdin.buffer:
                log.write(line)
                child.stdin.write(line)  # type: ignore[union-attr]
                child.stdin.flush()  # type: ignore[union-attr]
        child.stdin.close()  # type: ignore[union-attr]

    threading.Thread(target=pump, daemon=True).start()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
