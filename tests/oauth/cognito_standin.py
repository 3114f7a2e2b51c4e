"""Cognito's hosted-login token endpoint, as far as the authorization server uses it, on
127.0.0.1 (no Cognito can run here): codes it "issued" at login are redeemable once, by
the interactive client, with the redirect URI and the PKCE verifier of that login;
refresh tokens give new access tokens and are not rotated, as Cognito's are not."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


class CognitoStandIn:
    def __init__(self, client_id: str, callback: str):
        self.client_id, self.callback = client_id, callback
        self.codes: dict[str, str] = {}  # code -> code_challenge of its login
        self.refresh_tokens: set[str] = set()
        self.requests: list[dict[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                owner.requests.append(form)
                status, body = owner.token(form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def login(self, code_challenge: str) -> str:
        """The person logged in at the hosted UI: a code bound to that login's challenge."""
        code = secrets.token_urlsafe(16)
        self.codes[code] = code_challenge
        return code

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("client_id") != self.client_id:
            return 400, {"error": "invalid_client"}
        if form.get("grant_type") == "authorization_code":
            challenge = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge is None or computed != challenge or form.get("redirect_uri") != self.callback:
                return 400, {"error": "invalid_grant"}
            refresh = secrets.token_urlsafe(24)
            self.refresh_tokens.add(refresh)
            return 200, {"access_token": "cognito-access-" + secrets.token_hex(4), "id_token": "cognito-id",
                         "refresh_token": refresh, "expires_in": 3600, "token_type": "Bearer"}
        if form.get("grant_type") == "refresh_token" and form.get("refresh_token") in self.refresh_tokens:
            return 200, {"access_token": "cognito-access-" + secrets.token_hex(4), "id_token": "cognito-id",
                         "expires_in": 3600, "token_type": "Bearer"}
        return 400, {"error": "invalid_grant"}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
