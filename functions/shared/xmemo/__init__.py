"""XMemo: hosted memory for AI agents.

The package is the Lambda layer's code. Handlers, the CLI, the local gateway and the
tests import it the same way; nothing here does I/O at import time.
"""

__version__ = "0.1.0"
