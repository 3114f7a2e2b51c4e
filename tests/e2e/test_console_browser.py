"""The memory console in a real browser: Debian's headless chromium, driven by Selenium
through the system chromedriver, against a real local gateway.

One person (alice) signs in with the link `make run` prints, finds a memory both ways,
opens it, packs a small budget (checked against the API's own answer), supersedes a
memory, forgets one and a filtered set after confirming, and exports; another person's
(bob's) memories never appear. Each screen is saved to bench-out/console/ (docs/console.md
shows a committed copy from one run, docs/console/)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import xmemo_command

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.e2e

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = Path("/usr/bin/chromium")
SHOTS = ROOT / "bench-out" / "console"
LAPTOP, PHONE = (1280, 900), (390, 844)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMEDRIVER.exists() and CHROMIUM.exists()):
        pytest.fail("chromium and chromium-driver are missing: `make test` installs them (apt-get)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)  # with the driver's path below, Selenium Manager is never asked
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
                 f"--window-size={LAPTOP[0]},{LAPTOP[1]}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    downloads = tmp_path_factory.mktemp("downloads")
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    driver.downloads = downloads
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def people(gateway):
    """Alice's memories (what she should see) and bob's (what she must never see)."""
    alice, bob = f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}"
    tokens = {"alice": gateway.token(alice), "bob": gateway.token(bob)}
    writes = {
        "alice": [
            {"content": "We deploy the billing service with blue-green deployments every Tuesday.", "type": "decision", "location": "billing/decisions"},
            {"content": "The billing database runs PostgreSQL 16 on port 5433.", "type": "fact", "location": "billing/infra"},
            {"content": "Staging admin login for billing: password=hunter2-rotate-me (rotate monthly).", "type": "note", "location": "billing/ops"},
            {"content": "Billing invoices are generated nightly at 02:00 UTC by the invoice worker, which reads "
                        "usage records, applies the price book, writes PDF invoices to the archive bucket and "
                        "emails customers; failures page the billing on-call.", "type": "procedure", "location": "billing/runbooks"},
            {"content": "Billing support hours are 9 to 17 CET; outside them the billing on-call handles only outages.", "type": "note", "location": "billing/support"},
            {"content": "Prefer small pull requests for the billing repository.", "type": "preference", "location": "billing/process"},
        ],
        "bob": [{"content": "Bob's zebra-marker plan: move billing to another vendor.", "type": "decision", "location": "bob/secret"}],
    }
    refs: dict[str, list[str]] = {}
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        for who, items in writes.items():
            for body in items:
                reply = client.post("/v1/memories", json=body, headers={"Authorization": f"Bearer {tokens[who]}"})
                assert reply.status_code == 201, reply.text
                refs.setdefault(who, []).append(reply.json()["memory"]["reference"])
    return {"tokens": tokens, "refs": refs, "url": gateway.url}


def api(people, method, path, who="alice", headers=None, **kw):
    """The REST API (or /mcp) as the console calls it: with that person's own token."""
    with httpx.Client(base_url=people["url"], timeout=30) as client:
        headers = {"Authorization": f"Bearer {people['tokens'][who]}", **(headers or {})}
        return client.request(method, path, headers=headers, **kw)


def wait(driver, condition, timeout=20):
    return WebDriverWait(driver, timeout).until(condition)


def shot(driver, name):
    """The whole page (the window grows to its height for the picture) into bench-out/console/."""
    size = driver.get_window_size()
    height = driver.execute_script("return document.documentElement.scrollHeight + window.outerHeight - window.innerHeight")
    driver.set_window_size(size["width"], max(size["height"], min(height, 2600)))
    driver.save_screenshot(str(SHOTS / f"{name}.png"))
    driver.set_window_size(size["width"], size["height"])


def visible(driver, css):
    return wait(driver, EC.visibility_of_element_located((By.CSS_SELECTOR, css)))


def tab(driver, name):
    driver.find_element(By.CSS_SELECTOR, f'#tabs button[data-view="{name}"]').click()
    visible(driver, f"#view-{name}")


def no_bob(driver, people):
    assert "zebra-marker" not in driver.page_source
    assert people["refs"]["bob"][0] not in driver.page_source


# ---------------------------------------------------------------------------------------
def test_the_page_is_served_with_a_strict_policy(gateway):
    page = httpx.get(f"{gateway.url}/console")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert "require-trusted-types-for 'script'" in csp and "frame-ancestors 'none'" in csp
    script = httpx.get(f"{gateway.url}/console/app.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    for missing in ("/console/nothing.js", "/console/..%2Fapi.py", "/console/index.html"):
        assert httpx.get(f"{gateway.url}{missing}").status_code == 404, missing
    assert httpx.get(f"{gateway.url}/console/config.json").json()["login"] is None  # locally: a token


def sign_in_from_the_printed_link_then_browse(browser, people):
    browser.get(f"{people['url']}/console#token={people['tokens']['alice']}")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody tr button.ref")) == 6)
    assert browser.execute_script("return location.hash") == ""  # the token left the address bar
    assert browser.execute_script("return localStorage.length + sessionStorage.length") == 0
    shown = {b.text for b in browser.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")}
    assert shown == set(people["refs"]["alice"])
    no_bob(browser, people)
    # each row says what its memory is, not only where it is
    contents = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#browse-table tbody td.content")]
    assert "The billing database runs PostgreSQL 16 on port 5433." in contents
    shot(browser, "1-browse")
    # narrowing by what a memory says
    browser.find_element(By.ID, "browse-narrow").send_keys("postgresql")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")) == 1)
    assert browser.find_element(By.CSS_SELECTOR, "#browse-table tbody button.ref").text == people["refs"]["alice"][1]
    browser.find_element(By.ID, "browse-narrow").clear()
    browser.find_element(By.ID, "browse-narrow").send_keys(Keys.SPACE, Keys.BACKSPACE)  # clear() fires no input event
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")) == 6)
    # narrowing the loaded page (no API call): by location
    browser.find_element(By.ID, "browse-narrow").send_keys("billing/infra")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")) == 1)
    assert browser.find_element(By.CSS_SELECTOR, "#browse-table tbody button.ref").text == people["refs"]["alice"][1]
    browser.find_element(By.ID, "browse-narrow").clear()
    browser.find_element(By.ID, "browse-narrow").send_keys(Keys.SPACE, Keys.BACKSPACE)  # clear() fires no input event
    # a filter goes to the API: only the decision is left
    browser.find_element(By.CSS_SELECTOR, '#browse-form select[name="type"]').send_keys("decision")
    browser.find_element(By.CSS_SELECTOR, "#browse-form button[type=submit]").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody tr")) == 1)
    assert browser.find_element(By.CSS_SELECTOR, "#browse-table tbody button.ref").text == people["refs"]["alice"][0]


def find_a_memory_both_ways_with_matched_terms_highlighted(browser, people):
    tab(browser, "find")
    box = browser.find_element(By.ID, "find-query")
    box.clear()
    box.send_keys("deploy billing", Keys.ENTER)
    target = people["refs"]["alice"][0]
    for column in ("#find-recall", "#find-search"):
        hit = wait(browser, EC.visibility_of_element_located((By.CSS_SELECTOR, f'{column} li.hit[data-reference="{target}"]')))
        marks = {m.text.lower() for m in hit.find_elements(By.TAG_NAME, "mark")}
        assert {"deploy", "billing"} <= marks, (column, marks)
    strict = browser.find_elements(By.CSS_SELECTOR, "#find-search li.hit")
    assert [h.get_attribute("data-reference") for h in strict] == [target]  # every term must match
    recall_marks = {m.text.lower() for m in browser.find_elements(By.CSS_SELECTOR, f'#find-recall li.hit[data-reference="{target}"] mark')}
    assert "deployments" in recall_marks  # another word form, marked in the tolerant column only
    no_bob(browser, people)
    shot(browser, "2-find")


def open_a_memory_with_its_redaction_marks(browser, people):
    secret_ref = people["refs"]["alice"][2]
    tab(browser, "inspect")
    field = browser.find_element(By.ID, "inspect-reference")
    field.clear()
    field.send_keys(secret_ref, Keys.ENTER)
    article = visible(browser, f'article.memory[data-reference="{secret_ref}"]')
    expected = api(people, "GET", f"/v1/memories/{secret_ref}").json()["memory"]
    assert article.find_element(By.CSS_SELECTOR, 'dd[data-field="content_sha256"]').text == expected["content_sha256"]
    assert article.find_element(By.CSS_SELECTOR, 'dd[data-field="boundary"]').text == expected["boundary"]
    assert [m.text for m in article.find_elements(By.CSS_SELECTOR, "mark.redaction")] == ["[REDACTED:password]"]
    assert "password" in article.find_element(By.CSS_SELECTOR, 'dd[data-field="redactions"]').text
    assert "hunter2" not in browser.page_source


def supersede_then_inspect_the_chain(browser, people):
    old = people["refs"]["alice"][1]
    browser.find_element(By.ID, "inspect-reference").clear()
    browser.find_element(By.ID, "inspect-reference").send_keys(old, Keys.ENTER)
    visible(browser, f'article.memory[data-reference="{old}"]')
    browser.find_element(By.XPATH, "//button[contains(., 'Supersede with a correction')]").click()
    content = visible(browser, "#supersede-form textarea[name=content]")
    assert content.get_attribute("value") == "The billing database runs PostgreSQL 16 on port 5433."
    content.clear()
    content.send_keys("The billing database runs PostgreSQL 16 on port 5434 since the migration.")
    browser.find_element(By.CSS_SELECTOR, "#supersede-form button[type=submit]").click()
    new_ref_button = visible(browser, "#supersede-result button.ref")
    new = new_ref_button.text
    assert new != old
    assert api(people, "GET", f"/v1/memories/{new}").json()["memory"]["supersedes"] == old
    assert api(people, "GET", f"/v1/memories/{old}").status_code == 404  # superseded: no longer returned
    new_ref_button.click()
    article = visible(browser, f'article.memory[data-reference="{new}"]')
    chain = article.find_element(By.CSS_SELECTOR, "ul.chain").text
    assert f"replaced {old}" in chain and "current version" in chain
    shot(browser, "3-inspect")
    people["refs"]["alice"][1] = new


def a_small_budget_shows_the_apis_own_numbers_and_public_text(browser, people):
    tab(browser, "budget")
    form = browser.find_element(By.ID, "budget-form")
    for name, value in (("query", "billing on-call invoices"), ("max_tokens", "40"), ("max_items", "8")):
        box = form.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    visible(browser, "#budget-public")
    args = {"query": "billing on-call invoices", "max_tokens": 40, "max_items": 8}
    pack = api(people, "POST", "/v1/context", json=args).json()
    summary = {d.get_attribute("data-field"): int(d.text) for d in browser.find_elements(By.CSS_SELECTOR, "#budget-summary dd[data-field]")}
    assert summary == {k: pack["budget"][k] for k in ("used_tokens", "used_items", "shortened", "dropped")}
    assert pack["budget"]["dropped"] + pack["budget"]["shortened"] > 0  # the budget is small enough to bite
    items = [(li.get_attribute("data-reference"), int(li.get_attribute("data-tokens")))
             for li in browser.find_elements(By.CSS_SELECTOR, "#budget-items > li")]
    assert items == [(i["reference"], i["tokens"]) for i in pack["items"]]
    shortened = browser.find_elements(By.CSS_SELECTOR, "#budget-items .badge")
    assert len(shortened) == pack["budget"]["shortened"]
    rpc = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall_context", "arguments": args}}
    public = api(people, "POST", "/mcp", json=rpc, headers={"Accept": "application/json"})
    text = public.json()["result"]["content"][0]["text"]
    assert browser.find_element(By.ID, "budget-public").text == text.strip()
    assert f"used_tokens={pack['budget']['used_tokens']}/40" in text
    reasons = browser.find_element(By.ID, "budget-reasons").text
    skipped = pack["retrieval_plan"]["diversity"]["skipped"]
    if pack["budget"]["dropped"] - skipped:
        assert f"{pack['budget']['dropped'] - skipped} " in reasons
    if skipped:
        assert f"{skipped} near-duplicate" in reasons
    no_bob(browser, people)
    shot(browser, "4-budget")


def forget_one_only_after_confirming(browser, people):
    target = people["refs"]["alice"][5]
    tab(browser, "inspect")
    browser.find_element(By.ID, "inspect-reference").clear()
    browser.find_element(By.ID, "inspect-reference").send_keys(target, Keys.ENTER)
    visible(browser, f'article.memory[data-reference="{target}"]')
    browser.find_element(By.ID, "forget-one").click()
    visible(browser, "#confirm")
    assert target in browser.find_element(By.ID, "confirm-text").text
    browser.find_element(By.ID, "confirm-cancel").click()
    wait(browser, EC.invisibility_of_element_located((By.ID, "confirm")))
    assert api(people, "GET", f"/v1/memories/{target}").status_code == 200  # cancelled: still there
    browser.find_element(By.ID, "forget-one").click()
    visible(browser, "#confirm")
    browser.find_element(By.ID, "confirm-ok").click()
    visible(browser, "#forget-one-result")
    assert api(people, "GET", f"/v1/memories/{target}").status_code == 404


def forget_by_filter_shows_the_count_first(browser, people):
    notes = api(people, "GET", "/v1/memories", params={"type": "note"}).json()["memories"]
    assert len(notes) == 2
    tab(browser, "correct")
    browser.find_element(By.CSS_SELECTOR, '#forget-form select[name="type"]').send_keys("note")
    browser.find_element(By.CSS_SELECTOR, "#forget-form button[type=submit]").click()
    visible(browser, "#confirm")
    assert "Forget 2 memories matching type=note" in browser.find_element(By.ID, "confirm-text").text
    shot(browser, "5-correct-confirm")
    browser.find_element(By.ID, "confirm-ok").click()
    wait(browser, EC.text_to_be_present_in_element((By.ID, "forget-result"), "Deleted: 2"))
    assert api(people, "GET", "/v1/memories", params={"type": "note"}).json()["memories"] == []
    assert api(people, "GET", f"/v1/memories/{people['refs']['bob'][0]}", who="bob").status_code == 200  # bob's untouched


def export_what_is_visible_as_json_lines(browser, people):
    browser.find_element(By.ID, "export-button").click()
    visible_now = api(people, "GET", "/v1/memories", params={"limit": 100}).json()["memories"]
    wait(browser, EC.text_to_be_present_in_element((By.ID, "export-result"), f"Exported {len(visible_now)} memories."))
    deadline = time.monotonic() + 20
    while not (files := list(browser.downloads.glob("*.jsonl"))) and time.monotonic() < deadline:
        time.sleep(0.1)
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert lines == visible_now
    shot(browser, "5-correct")


def another_persons_reference_is_not_found(browser, people):
    tab(browser, "inspect")
    browser.find_element(By.ID, "inspect-reference").clear()
    browser.find_element(By.ID, "inspect-reference").send_keys(people["refs"]["bob"][0], Keys.ENTER)
    wait(browser, EC.text_to_be_present_in_element((By.ID, "alert"), "404 not_found"))
    assert not browser.find_elements(By.CSS_SELECTOR, "article.memory")
    no_bob(browser, people)


def keyboard_reaches_the_sections(browser, people):
    tab(browser, "browse")
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-view="browse"]').send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert focused.get_attribute("data-view") == "find"
    focused.send_keys(Keys.ENTER)
    visible(browser, "#view-find")
    focused = browser.switch_to.active_element
    focused.send_keys(Keys.TAB, Keys.TAB)  # through the rest of the tabs to Budget
    focused = browser.switch_to.active_element
    assert focused.get_attribute("data-view") == "budget"


def a_phone_width_fits_without_sideways_scrolling(browser, people):
    browser.set_window_size(*PHONE)
    try:
        tab(browser, "browse")
        browser.find_element(By.CSS_SELECTOR, '#browse-form select[name="type"]').send_keys("any")
        browser.find_element(By.CSS_SELECTOR, "#browse-form button[type=submit]").click()
        wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")) >= 3)
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        shot(browser, "6-phone-browse")
        tab(browser, "find")
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        shot(browser, "7-phone-find")
    finally:
        browser.set_window_size(*LAPTOP)


def no_policy_violation_or_script_error(browser):
    """Nothing the CSP refused, no script error: the only failed loads the page logged are
    the 404 the walkthrough asked for (another person's reference)."""
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert [m for m in severe if "404" not in m] == [], severe


def test_console_walkthrough(browser, people):
    """The steps depend on each other (what was superseded or forgotten), so they run in
    this order inside one test, whatever order the test runner picks."""
    browser.get_log("browser")  # start from an empty browser log
    sign_in_from_the_printed_link_then_browse(browser, people)
    find_a_memory_both_ways_with_matched_terms_highlighted(browser, people)
    open_a_memory_with_its_redaction_marks(browser, people)
    supersede_then_inspect_the_chain(browser, people)
    a_small_budget_shows_the_apis_own_numbers_and_public_text(browser, people)
    forget_one_only_after_confirming(browser, people)
    forget_by_filter_shows_the_count_first(browser, people)
    export_what_is_visible_as_json_lines(browser, people)
    another_persons_reference_is_not_found(browser, people)
    keyboard_reaches_the_sections(browser, people)
    a_phone_width_fits_without_sideways_scrolling(browser, people)
    no_policy_violation_or_script_error(browser)
    names = {p.stem for p in SHOTS.glob("*.png")}
    assert {"1-browse", "2-find", "3-inspect", "4-budget", "5-correct", "5-correct-confirm", "6-phone-browse", "7-phone-find"} <= names


def test_browse_pages_with_the_apis_cursor(browser, gateway):
    """30 memories, pages of 25: Next shows the other 5, Previous the first 25 again."""
    carol = f"carol-{uuid.uuid4().hex[:8]}"
    token = gateway.token(carol)
    with httpx.Client(base_url=gateway.url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as client:
        for n in range(30):
            assert client.post("/v1/memories", json={"content": f"Carol's note number {n}."}).status_code == 201
        everything = {m["reference"] for m in client.get("/v1/memories", params={"limit": 100}).json()["memories"]}

    def page():  # read in one script: the table may be re-rendered between two element lookups
        return browser.execute_script("return [...document.querySelectorAll('#browse-table tbody button.ref')].map(b => b.textContent)")

    browser.get(f"{gateway.url}/console#token={token}")
    wait(browser, lambda d: len(page()) == 25)
    first = page()
    assert not browser.find_element(By.ID, "browse-prev").is_enabled()
    browser.find_element(By.ID, "browse-next").click()
    wait(browser, lambda d: len(page()) == 5)
    assert set(first) | set(page()) == everything and not set(first) & set(page())
    assert not browser.find_element(By.ID, "browse-next").is_enabled()
    browser.find_element(By.ID, "browse-prev").click()
    wait(browser, lambda d: page() == first)


def test_the_link_make_run_prints_signs_in(browser, tmp_path):
    """`xmemo serve --print-token` (what `make run` runs) prints a console link that works."""
    env = {**os.environ, "XMEMO_DATA_DIR": str(tmp_path), "XMEMO_PORT": "0", "XMEMO_EMBEDDER": "none", "XMEMO_STORE": "sqlite"}
    env.pop("XMEMO_ISSUER", None)
    serve = subprocess.Popen([*xmemo_command(), "serve", "--quiet", "--print-token", "erin"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while not lines or lines[-1] != "Ctrl-C stops.":
            line = serve.stdout.readline()
            assert line, "".join(lines)
            lines.append(line.rstrip("\n"))
        (link,) = [m.group(1) for line in lines if (m := re.search(r"Console \(signed in as erin\): (http://127\.0\.0\.1:\d+/console#token=\S+)", line))]
        browser.get(link)
        wait(browser, EC.text_to_be_present_in_element((By.ID, "who-name"), "erin"))
        assert browser.execute_script("return location.hash") == ""
    finally:
        serve.terminate()
        serve.wait(timeout=10)


def test_temporary_memories_show_their_expiry_when_the_token_may_read_them(browser, gateway):
    dave = f"dave-{uuid.uuid4().hex[:8]}"
    token = gateway.token(dave, "memory:read", "memory:write", "memory:temporary")
    with httpx.Client(base_url=gateway.url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as client:
        assert client.post("/v1/memories", json={"content": "Dave's lasting note."}).status_code == 201
        temp = client.post("/v1/memories", json={"content": "Dave's scratch note.", "temporary": True, "ttl_seconds": 3600}).json()["memory"]
    browser.get(f"{gateway.url}/console#token={token}")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")) == 1)  # not unless asked
    browser.find_element(By.CSS_SELECTOR, '#browse-form input[name="include_temporary"]').click()
    browser.find_element(By.CSS_SELECTOR, "#browse-form button[type=submit]").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#browse-table tbody button.ref")) == 2)
    row = browser.find_element(By.XPATH, f"//tr[td/button[@data-reference='{temp['reference']}']]")
    expiry = temp["expires_at"][:19].replace("T", " ")
    assert row.find_element(By.CSS_SELECTOR, 'td[data-label="Temporary"]').text == f"yes, expires {expiry}Z"


def test_a_bad_token_goes_back_to_sign_in(browser, people):
    browser.get(f"{people['url']}/console#token=not-a-token")
    visible(browser, "#view-signin")
    assert "sign in again" in browser.find_element(By.ID, "alert").text.lower()
    assert not browser.find_element(By.ID, "tabs").is_displayed() and not browser.find_element(By.ID, "who").is_displayed()
    shot(browser, "0-sign-in")
