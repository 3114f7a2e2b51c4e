"""The person's part of an OAuth login, done over HTTP: open the authorization URL, sign in
on the gateway's login form, and follow the redirect to the client's own listener."""

from __future__ import annotations

import http.client
import re
import urllib.parse
import urllib.request


def sign_in(authorization_url: str, user: str, password: str) -> str:
    """Returns the redirect the client's listener received (with the code)."""
    url = urllib.parse.urlsplit(authorization_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("GET", f"{url.path}?{url.query}")
    form = conn.getresponse()
    page = form.read().decode()
    txn = re.search(r'name="txn" value="([^"]+)"', page)
    assert form.status == 200 and txn, (authorization_url, form.status, form.getheader("Location"), page[:500])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("POST", url.path, urllib.parse.urlencode({"txn": txn.group(1), "username": user, "password": password}),
                 {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"{url.scheme}://{url.netloc}"})
    answer = conn.getresponse()
    location = answer.getheader("Location")
    assert answer.status in (302, 303) and location, (answer.status, answer.read()[:500])
    with urllib.request.urlopen(location, timeout=30) as delivered:  # the client's own callback
        assert delivered.status == 200
    return location
