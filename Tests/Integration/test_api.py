"""The HTTP API (/api/v1) end to end: the real roombridged behind the real roombridge-web, tokens made by
`roombridge-web token add`, requests with a plain HTTP client, and schemathesis against the OpenAPI document
the server serves (issue 29 §1)."""
import datetime
import json
import os
import shutil
import stat
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import binary, eventually
from test_lending import ctl
from test_web import seed, web_factory  # noqa: F401 (fixture)


def make_token(path, name, scope):
    r = subprocess.run([binary("roombridge-web"), "token", "add", name, "--scope", scope, "--file", str(path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def call(web, method, path, token=None, body=None, language="en"):
    """(status, headers, parsed JSON body) of one request."""
    headers = {"Accept-Language": language}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(web.base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, e.headers, json.loads(e.read() or b"null")


@pytest.fixture
def api(daemon, web_factory, tmpdir_path):
    seed(daemon)
    tokens = tmpdir_path / "web-tokens"
    read = make_token(tokens, "dashboard", "read")
    write = make_token(tokens, "desk-bot", "write")
    web = web_factory(daemon, "--api-tokens", str(tokens))
    return web, tokens, read, write


def test_tokens_are_kept_hashed_and_listed_by_name(api):
    web, tokens, read, write = api
    text = tokens.read_text()
    assert read not in text and write not in text, "the file keeps hashes, never the tokens"
    assert stat.S_IMODE(os.stat(tokens).st_mode) == 0o600
    listed = subprocess.run([binary("roombridge-web"), "token", "list", "--file", str(tokens)],
                            capture_output=True, text=True, timeout=30).stdout.split("\n")
    assert "dashboard  read" in listed and "desk-bot  write" in listed
    again = subprocess.run([binary("roombridge-web"), "token", "add", "dashboard", "--file", str(tokens)],
                           capture_output=True, text=True, timeout=30)
    assert again.returncode != 0 and "exists" in again.stderr


def test_reads_need_a_token_and_answer_what_varlink_answers(api, daemon):
    web, _, read, _ = api
    status, headers, problem = call(web, "GET", "/api/v1/devices")
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert headers["Content-Type"] == "application/problem+json"
    assert problem["status"] == 401 and "token add" in problem["detail"]
    assert call(web, "GET", "/api/v1/devices", token="rbt_not-a-token")[0] == 401

    status, _, body = call(web, "GET", "/api/v1/devices?isLent=true", token=read)
    assert status == 200 and [d["id"] for d in body["devices"]] == ["D-0001"]
    assert body["devices"][0]["rental"]["userId"] == "U-0001"
    status, _, body = call(web, "GET", "/api/v1/devices/D-0002", token=read)
    assert status == 200 and body["device"]["status"] == "broken" and body["device"]["note"] == "cracked screen"
    status, _, body = call(web, "GET", "/api/v1/users/U-0002", token=read)
    assert status == 200 and body["user"]["name"] == "Grace Hopper"
    status, _, body = call(web, "GET", "/api/v1/state", token=read)
    assert status == 200 and body["state"]["timeZone"]

    # Errors are problems, with the daemon's typed name and the sentence in the request's language.
    status, _, problem = call(web, "GET", "/api/v1/devices/D-9999", token=read, language="ja")
    assert status == 404 and problem["error"] == "io.roombridge.Inventory.NoSuchDevice"
    assert "D-9999" in problem["detail"] and any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in problem["detail"])
    status, _, problem = call(web, "GET", "/api/v1/devices?limit=many", token=read)
    assert status == 400 and problem["parameters"] == {"parameter": "limit"}
    status, _, problem = call(web, "GET", "/api/v1/devices?colour=red", token=read)
    assert status == 400 and "colour" in problem["detail"]


def test_changes_need_a_write_token_and_record_its_name(api, daemon):
    web, _, read, write = api
    status, _, problem = call(web, "POST", "/api/v1/return", token=read, body={"deviceId": "D-0001"})
    assert status == 403 and "--scope write" in problem["detail"]
    assert call(web, "GET", "/api/v1/rentals", token=read)[2]["rentals"][0]["deviceId"] == "D-0001", "nothing returned"

    status, _, body = call(web, "POST", "/api/v1/return", token=write, body={"deviceId": "D-0001"})
    assert status == 200 and body["rental"]["returnedAt"]
    assert "token:desk-bot" in body["rental"]["returnedBy"]
    status, _, body = call(web, "POST", "/api/v1/lend", token=write, body={"deviceId": "D-0001", "userId": "U-0002"})
    assert status == 200 and body["rental"]["userId"] == "U-0002" and "token:desk-bot" in body["rental"]["lentBy"]
    # A refusal the daemon makes is a conflict, said as the page says it.
    status, _, problem = call(web, "POST", "/api/v1/lend", token=write, body={"deviceId": "D-0001", "userId": "U-0001"})
    assert status == 409 and problem["error"].endswith(".AlreadyLent"), problem
    # The token cannot pass itself off as someone else.
    status, _, problem = call(web, "POST", "/api/v1/return", token=write, body={"deviceId": "D-0001", "actor": "admin"})
    assert status == 400 and "actor" in problem["detail"]

    status, _, body = call(web, "PATCH", "/api/v1/devices/D-0002", token=write, body={"fields": {"status": "normal"}})
    assert status == 200 and body["device"]["status"] == "normal"
    log = call(web, "GET", "/api/v1/devices/D-0002/log", token=read)[2]["entries"]
    assert "token:desk-bot" in log[0]["actor"]


def test_each_token_is_rate_limited_on_its_own(daemon, web_factory, tmpdir_path):
    tokens = tmpdir_path / "web-tokens"
    a = make_token(tokens, "a", "read")
    b = make_token(tokens, "b", "read")
    web = web_factory(daemon, "--api-tokens", str(tokens), "--api-burst", "3", "--api-per-second", "0.1")
    assert [call(web, "GET", "/api/v1/groups", token=a)[0] for _ in range(3)] == [200, 200, 200]
    status, headers, problem = call(web, "GET", "/api/v1/groups", token=a)
    assert status == 429 and int(headers["Retry-After"]) >= 1 and problem["status"] == 429
    assert call(web, "GET", "/api/v1/groups", token=b)[0] == 200, "another token has its own bucket"


def test_the_document_describes_every_route_and_is_served_without_a_token(api):
    web = api[0]
    with urllib.request.urlopen(web.base + "/api/v1/openapi.json", timeout=10) as r:
        doc = json.loads(r.read())
    assert doc["openapi"] == "3.1.0"
    ops = {(verb, path) for path, item in doc["paths"].items() for verb in item}
    for verb, path in [("get", "/api/v1/devices"), ("get", "/api/v1/devices/{id}"), ("post", "/api/v1/lend"),
                       ("post", "/api/v1/curtains/{name}/move"), ("get", "/api/v1/presence")]:
        assert (verb, path) in ops
    # Every operation is a route of the server: with a read token each answers JSON or a problem (a change: 403),
    # never the router's own "no such route".
    _, _, read, _ = api
    for verb, path in sorted(ops - {("get", "/api/v1/events")}):  # the stream: its own test
        status, headers, _ = call(web, verb.upper(), path.replace("{id}", "D-0001").replace("{name}", "curtain"), token=read)
        assert headers["Content-Type"] in ("application/json", "application/problem+json"), (verb, path, status)
        assert verb == "get" or status == 403, (verb, path, status)
    lend = doc["paths"]["/api/v1/lend"]["post"]
    body = lend["requestBody"]["content"]["application/json"]["schema"]
    assert set(body["required"]) == {"deviceId", "userId"} and "actor" not in body["properties"]
    assert doc["components"]["schemas"]["Rental"]["properties"]["overdue"] == {"type": "boolean"}


def test_schemathesis_finds_no_server_error_and_no_reply_the_document_does_not_allow(daemon, web_factory, tmpdir_path):
    seed(daemon)
    tokens = tmpdir_path / "web-tokens"
    write = make_token(tokens, "schemathesis", "write")
    web = web_factory(daemon, "--api-tokens", str(tokens), "--api-burst", "100000")
    st = shutil.which("schemathesis") or shutil.which("st")
    assert st, "schemathesis is installed by scripts/install-deps.sh"
    r = subprocess.run(
        [st, "run", web.base + "/api/v1/openapi.json", "--max-examples", "8", "--seed", "1",
         "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
         "--header", f"Authorization: Bearer {write}", "--exclude-path", "/api/v1/events"],
        capture_output=True, text=True, timeout=600, cwd=tmpdir_path)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def home_assistant_config(secrets):
    """docs/web.md's Home Assistant block, as Home Assistant loads it (`!secret NAME` from `secrets`)."""
    import re
    import pathlib
    import yaml
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text()
    block = re.search(r"### Home Assistant\n.*?```yaml\n(.*?)```", doc, re.S).group(1)

    class Loader(yaml.SafeLoader):
        pass
    Loader.add_constructor("!secret", lambda loader, node: secrets[loader.construct_scalar(node)])
    return yaml.load(block, Loader=Loader)


def test_the_home_assistant_configuration_reads_who_is_here_what_is_lent_and_moves_the_curtain(
        daemon_factory, tmpdir_path, web_factory):
    """Exactly the requests docs/web.md's configuration makes, with a plain HTTP client, and its templates
    evaluated by Jinja2 (Home Assistant's template engine) on the replies."""
    import jinja2
    from test_curtain import BlueZSim, call as vcall, ok
    from test_presence import ALICE, NEAR, add_beacon, presence_daemon, region, wait_presence
    sim = BlueZSim(tmpdir_path)
    try:
        d = presence_daemon(daemon_factory, tmpdir_path, sim, "--curtain-enabled")
        eventually(lambda: ok(vcall(d, "io.roombridge.Curtain.GetState"))["parameters"]["curtain"]["connection"]
                   == "connected", what="curtain connected")
        ctl(d, "users", "add", "u-alice", "--name", "Alice Liddell")
        ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
        ctl(d, "lend", "--device", "D-0001", "--user", "u-alice")
        add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:31")
        wait_presence(d, lambda p: region(p, "alice")["beacons"], "alice present")

        tokens = tmpdir_path / "web-tokens"
        secrets = {"roombridge_read": "Bearer " + make_token(tokens, "home-assistant", "read"),
                   "roombridge_write": "Bearer " + make_token(tokens, "home-assistant-commands", "write")}
        web = web_factory(d, "--api-tokens", str(tokens))
        config = home_assistant_config(secrets)
        env = jinja2.Environment()

        def fetch(url, method="GET", headers=None, data=None):
            req = urllib.request.Request(url.replace("http://roombridge.local:8080", web.base), data=data,
                                         method=method.upper(), headers=headers or {})
            with urllib.request.urlopen(req, timeout=10) as r:
                assert r.status == 200
                return json.loads(r.read())

        def sensors():
            values = {}
            for rest in config["rest"]:
                value_json = fetch(rest["resource"], headers=rest["headers"])
                for sensor in rest["sensor"]:
                    values[sensor["name"]] = env.from_string(sensor["value_template"]).render(value_json=value_json)
            return values

        values = sensors()
        assert values == {"Who is here": "Alice Liddell", "Curtain position": "0", "Devices lent": "1"}

        move = config["rest_command"]["curtain_move"]
        headers = dict(move["headers"], **{"Content-Type": move["content_type"]})
        fetch(move["url"], move["method"], headers, env.from_string(move["payload"]).render(position=40).encode())
        eventually(lambda: sensors()["Curtain position"] == "40", timeout=30, poll=0.25,
                   what="the curtain at 40 % through the sensor")
        command = config["rest_command"]["curtain_open"]
        fetch(command["url"], command["method"], command["headers"])
        eventually(lambda: sensors()["Curtain position"] == "100", timeout=30, poll=0.25,
                   what="the curtain open through the sensor")
    finally:
        sim.close()


def test_the_event_stream_sends_the_state_then_every_event_as_watch_sends_it(api):
    web, _, read, write = api
    assert call(web, "GET", "/api/v1/events")[0] == 401
    req = urllib.request.Request(web.base + "/api/v1/events", headers={"Authorization": f"Bearer {read}"})
    stream = urllib.request.urlopen(req, timeout=20)
    assert stream.headers["Content-Type"].startswith("text/event-stream")

    def next_event():
        fields = {}
        while True:
            line = stream.readline().decode().rstrip("\n")
            if not line:
                if "event" in fields:
                    return fields
                continue
            key, _, value = line.partition(": ")
            fields[key] = value
    first = next_event()
    assert first["event"] == "state" and json.loads(first["data"])["timeZone"]
    assert call(web, "POST", "/api/v1/return", token=write, body={"deviceId": "D-0001"})[0] == 200
    event = next_event()
    while event["event"] != "lending":
        event = next_event()
    data = json.loads(event["data"])
    assert data["kind"] == "lending" and data["lending"]["kind"] == "returned" and data["lending"]["deviceId"] == "D-0001"
    assert int(event["id"]) == data["seq"] > int(first["id"])
    stream.close()


def test_an_import_and_the_history_csv_as_the_pages_do_them(api):
    web, _, read, write = api
    csv_text = "id,name\nU-0100,Katherine Johnson\nU-0101,Dorothy Vaughan\n"
    status, _, report = call(web, "POST", "/api/v1/import", token=write, body={"kind": "users", "csv": csv_text, "dryRun": True})
    assert status == 200 and report["added"] == ["U-0100", "U-0101"] and report["written"] is False
    assert call(web, "GET", "/api/v1/users/U-0100", token=read)[0] == 404, "a dry run writes nothing"
    status, _, report = call(web, "POST", "/api/v1/import", token=write, body={"kind": "users", "csv": csv_text})
    assert status == 200 and report["written"] is True
    assert call(web, "GET", "/api/v1/users/U-0100", token=read)[2]["user"]["name"] == "Katherine Johnson"
    status, _, export = call(web, "GET", "/api/v1/history/export?format=csv", token=read)
    assert status == 200 and export["count"] == 1 and "D-0001" in export["text"] and "Ada Lovelace" in export["text"]


def test_bookings_stocktakes_and_the_monthly_report_as_the_pages_do_them(api):
    web, _, read, write = api
    now = datetime.datetime.now(datetime.timezone.utc)
    starts = (now + datetime.timedelta(days=2)).strftime("%Y-%m-%dT%H:00:00Z")
    ends = (now + datetime.timedelta(days=2, hours=2)).strftime("%Y-%m-%dT%H:00:00Z")
    booking = {"deviceId": "D-0002", "userId": "U-0002", "startsAt": starts, "endsAt": ends}
    assert call(web, "POST", "/api/v1/bookings", token=read, body=booking)[0] == 403
    status, _, body = call(web, "POST", "/api/v1/bookings", token=write, body=booking)
    assert status == 200 and body["booking"]["state"] == "booked" and body["booking"]["bookedBy"].startswith("web:token:desk-bot "), body
    number = body["booking"]["id"]
    # The same slot again: the daemon's refusal, as a conflict with its sentence.
    status, _, problem = call(web, "POST", "/api/v1/bookings", token=write, body={**booking, "userId": "U-0001"})
    assert status == 409 and problem["error"] == "io.roombridge.Lending.BookingOverlaps", problem
    assert "already booked for Grace Hopper" in problem["detail"], problem
    status, _, body = call(web, "GET", "/api/v1/bookings?deviceId=D-0002", token=read)
    assert status == 200 and [b["id"] for b in body["bookings"]] == [number], body
    # A path parameter is read as its field's type: an int, or a 400 that names it.
    status, _, problem = call(web, "POST", "/api/v1/bookings/seven/cancel", token=write)
    assert status == 400 and problem["parameters"] == {"parameter": "id"}, problem
    status, _, body = call(web, "POST", f"/api/v1/bookings/{number}/cancel", token=write)
    assert status == 200 and body["booking"]["state"] == "cancelled", body
    assert call(web, "POST", f"/api/v1/bookings/{number}/cancel", token=write)[0] == 409, "only a booked booking cancels"
    assert call(web, "POST", "/api/v1/bookings/999/cancel", token=write)[0] == 404

    # A stocktake of everything with no taps: D-0001 is lent (to Ada), D-0002 is missing.
    status, _, body = call(web, "POST", "/api/v1/stocktakes", token=write, body={"scope": "all"})
    assert status == 200 and body["stocktake"]["startedBy"].startswith("web:token:desk-bot "), body
    number = body["stocktake"]["id"]
    assert call(web, "POST", "/api/v1/stocktakes", token=write, body={"scope": "all"})[0] == 409, "one at a time"
    status, _, body = call(web, "POST", f"/api/v1/stocktakes/{number}/close", token=write)
    assert status == 200, body
    lists = {(e["list"], e["deviceId"]) for e in body["report"]["entries"]}
    assert lists == {("lent", "D-0001"), ("missing", "D-0002")}, lists
    assert call(web, "GET", f"/api/v1/stocktakes/{number}", token=read)[2]["report"]["entries"] == body["report"]["entries"]
    status, _, body = call(web, "GET", f"/api/v1/stocktakes/{number}/export?format=csv", token=read)
    assert status == 200 and body["count"] == 2 and "D-0002" in body["text"] and "Ada Lovelace" in body["text"], body
    assert [s["id"] for s in call(web, "GET", "/api/v1/stocktakes", token=read)[2]["stocktakes"]] == [number]

    # This month's report has Ada's lend of D-0001.
    month = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m")
    status, _, body = call(web, "GET", f"/api/v1/reports/monthly/{month}?timeZone=UTC", token=read)
    assert status == 200 and body["report"]["lends"] == 1, body
    assert body["report"]["borrowers"][0]["userName"] == "Ada Lovelace", body
    assert call(web, "GET", "/api/v1/reports/monthly/2026-13", token=read)[0] == 400


def test_groups_tags_and_the_outbox_as_roombridgectl_does_them(api):
    web, _, read, write = api
    status, _, _ = call(web, "POST", "/api/v1/groups", token=write, body={"group": {"id": "tablets", "name": "Tablets", "sortOrder": 5}})
    assert status == 200
    status, _, _ = call(web, "PUT", "/api/v1/groups", token=write, body={"group": {"id": "tablets", "name": "Tablets and e-readers", "sortOrder": 5}})
    assert status == 200
    groups = {g["id"]: g["name"] for g in call(web, "GET", "/api/v1/groups", token=read)[2]["groups"]}
    assert groups["tablets"] == "Tablets and e-readers", groups
    status, _, problem = call(web, "DELETE", "/api/v1/groups/android-phone", token=write)
    assert status == 409, problem  # a group with devices stays
    assert call(web, "DELETE", "/api/v1/groups/tablets", token=write)[0] == 200
    assert "tablets" not in {g["id"] for g in call(web, "GET", "/api/v1/groups", token=read)[2]["groups"]}

    status, _, body = call(web, "POST", "/api/v1/devices/D-0002/tags", token=write, body={"uid": "04A1B2C3D4E5F6"})
    assert status == 200 and body["binding"]["deviceId"] == "D-0002", body
    assert [b["uid"] for b in call(web, "GET", "/api/v1/devices/D-0002/tags", token=read)[2]["bindings"]] == ["04A1B2C3D4E5F6"]
    assert call(web, "DELETE", "/api/v1/tags/04A1B2C3D4E5F6", token=write)[0] == 200
    assert call(web, "GET", "/api/v1/devices/D-0002/tags", token=read)[2]["bindings"] == []

    status, _, body = call(web, "GET", "/api/v1/outbox", token=read)
    assert status == 200 and body["targets"] == [], body
    assert call(web, "GET", "/api/v1/outbox/entries", token=read)[2]["entries"] == []
    status, _, problem = call(web, "POST", "/api/v1/outbox/42/retry", token=write)
    assert status == 404, problem
