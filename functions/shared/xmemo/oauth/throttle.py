"""Slowing down password guessing at the login form, per account and per client address.

After `free` wrong passwords within the window, each further attempt must wait (1 s,
doubling, at most `max_delay`); at `lockout` wrong passwords the account (or address)
waits the whole window. A waiting attempt is refused before the password is checked,
so it neither reveals nor costs anything. Accounts are counted by the name typed,
whether or not such a user exists, so the answers say nothing about who exists.

Each wrong password writes one log line: the account as a digest prefix (a password
typed into the name field must not reach the log), the address, the count and the wait."""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from .state import StateStore, digest

logger = logging.getLogger("xmemo.oauth")
FAILURES, WAIT = "login_failures", "login_wait"
ADDRESS_FACTOR = 5  # an address (NAT, an office) may carry several people's mistakes


@dataclass(frozen=True)
class ThrottlePolicy:
    free: int = 3  # wrong passwords per account before any wait
    lockout: int = 10  # wrong passwords per account within `window` that lock it for `window`
    window: int = 900  # seconds
    base_delay: int = 1
    max_delay: int = 60

    def wait_after(self, failures: int, factor: int = 1) -> int:
        """Seconds to wait after the `failures`-th wrong password (0: none)."""
        if failures >= self.lockout * factor:
            return self.window
        over = failures - self.free * factor
        return 0 if over <= 0 else min(self.max_delay, self.base_delay * 2 ** (over - 1))


def account_label(name: str) -> str:
    """How an account appears in keys and logs: a digest of the normalized name."""
    return digest(name.strip().lower())[:16]


class LoginThrottle:
    def __init__(self, store: StateStore, policy: ThrottlePolicy = ThrottlePolicy(), clock=time.time):
        self.store, self.policy, self._clock = store, policy, clock

    def _keys(self, account: str, address: str) -> tuple[tuple[str, int], tuple[str, int]]:
        return (f"account:{account_label(account)}", 1), (f"address:{address}", ADDRESS_FACTOR)

    def wait(self, account: str, address: str) -> int:
        """Seconds before this account may try again from this address (0: now)."""
        now = self._clock()
        waits = [(item or {}).get("until", 0) - now for item in (self.store.get(WAIT, k) for k, _ in self._keys(account, address))]
        return max(0, math.ceil(max(waits)))

    def failed(self, account: str, address: str) -> int:
        """Count a wrong password for both; the wait it imposes (seconds)."""
        waits = []
        for key, factor in self._keys(account, address):
            failures = self.store.count(FAILURES, key, self.policy.window)
            wait = self.policy.wait_after(failures, factor)
            if wait:
                self.store.put(WAIT, key, {"until": self._clock() + wait}, wait)
            waits.append((wait, failures))
        wait = max(w for w, _ in waits)
        locked = " locked" if wait >= self.policy.window else ""
        logger.warning("login failed: account=%s address=%s failures=%d/%d wait=%ds%s", account_label(account), address,
                       waits[0][1], waits[1][1], wait, locked)
        return wait

    def succeeded(self, account: str) -> None:
        """A right password ends the account's count (never the address's)."""
        key = f"account:{account_label(account)}"
        self.store.take(FAILURES, key)
        self.store.take(WAIT, key)
