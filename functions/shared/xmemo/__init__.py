"""XMemo: hosted memory for AI agents.

The package is the Lambda layer's code. Handlers, the CLI, the local gateway and the
tests import it the same way; nothing here does I/O at import time.

numpy's OpenBLAS gets one thread unless the environment says otherwise (set here, before
any module of the package imports numpy): its idle workers spin, and after the vector
leg's product they burned about 16 ms of CPU per recall at 100k memories, on a machine
whose two cores the embedding model and the other requests need
(docs/embedded-store-scale.md). The products it runs here take well under a millisecond
on one thread.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
