"""Two curtains in one room: the real roombridged drives a pair of simulated curtains on one bluez-sim adapter
([curtains.NAME] tables), each by its name, both at once with name "*", one vanishing while the other works,
the CLI's --name and status table, and a reload that removes one."""
import signal

import pytest

from conftest import Watcher, eventually
from test_curtain import BlueZSim, call, ctl, curtain, ok

LEFT = "C4:7C:8D:6A:3E:21"   # bluez-sim's first curtain
RIGHT = "C4:7C:8D:6A:3E:22"  # a further curtain on the same adapter, starting at 50% open


def pair_config(*names):
    addresses = {"left": LEFT, "right": RIGHT}
    return '[log]\nlevel = "debug"\n' + "".join(
        f'[curtains.{n}]\naddress = "{addresses[n]}"\nprofile = "roombridge"\n' for n in names)


@pytest.fixture
def pair_sim(tmpdir_path):
    s = BlueZSim(tmpdir_path, "--curtain", f"roombridge@{RIGHT}@50")
    yield s
    s.close()


def curtains(d):
    return {c["id"]: c for c in ok(curtain(d, "GetState", name="*"))["parameters"]["curtains"]}


def wait_curtains(d, predicate, timeout=15.0, what="the curtains"):
    return eventually(lambda: (cs := curtains(d)) and predicate(cs) and cs, timeout=timeout, what=what)


def settled(c, position):
    return c["connection"] == "connected" and c["motion"] == "idle" and c.get("position") == position


@pytest.fixture
def pair(daemon_factory, pair_sim, tmpdir_path):
    (tmpdir_path / "roombridged.toml").write_text(pair_config("left", "right"))
    d = daemon_factory("--curtain-enabled", env={"DBUS_SYSTEM_BUS_ADDRESS": pair_sim.address})
    wait_curtains(d, lambda cs: settled(cs["left"], 0) and settled(cs["right"], 50), timeout=20,
                  what="both curtains connected with their positions")
    return d


def test_each_curtain_by_name_and_both_at_once(pair, pair_sim):
    cs = curtains(pair)
    assert list(cs) == ["left", "right"]
    assert cs["left"]["address"] == LEFT and cs["right"]["address"] == RIGHT
    state = call(pair, "io.roombridge.State.GetState")["parameters"]["state"]
    assert [c["id"] for c in state["curtains"]] == ["left", "right"]
    assert state["curtain"]["id"] == "left"  # the single field for older clients: the first by name

    # Without a name the call is refused and says which curtains there are; nothing is written.
    writes = pair_sim.writes()
    refused = curtain(pair, "Open")
    assert refused["error"] == "io.roombridge.Curtain.InvalidParameter", refused
    assert refused["parameters"]["parameter"] == "name"
    assert "(left, right)" in refused["parameters"]["message"]
    assert pair_sim.writes() == writes

    # Open one; while it moves, move the other: each ends where it was sent, from its own events.
    w = Watcher(pair.socket_path)
    ok(curtain(pair, "Open", name="left"))
    w.wait_for(lambda e: e["kind"] == "curtain" and e["curtain"]["id"] == "left" and e["curtain"]["motion"] == "opening")
    ok(curtain(pair, "MoveTo", name="right", position=30))
    w.wait_for(lambda e: e["kind"] == "curtain" and e["curtain"]["id"] == "right" and settled(e["curtain"], 30),
               timeout=15)
    wait_curtains(pair, lambda cs: settled(cs["left"], 100), what="left open")
    assert "idle at 100%" in pair_sim.status()
    assert "idle at 30%" in pair_sim.ctl("device", RIGHT, "status")
    w.close()

    # "*" closes both.
    ok(curtain(pair, "Close", name="*"))
    cs = wait_curtains(pair, lambda cs: settled(cs["left"], 0) and settled(cs["right"], 0), what="both closed")
    assert cs["left"]["lastRequest"]["kind"] == "close" and cs["right"]["lastRequest"]["kind"] == "close"


def test_one_vanishing_leaves_the_other_working(pair, pair_sim):
    pair_sim.ctl("device", RIGHT, "vanish")
    wait_curtains(pair, lambda cs: cs["right"]["connection"] != "connected", what="right gone")
    ok(curtain(pair, "MoveTo", name="left", position=40))
    cs = wait_curtains(pair, lambda cs: settled(cs["left"], 40), what="left at 40")
    assert cs["right"]["connection"] != "connected"

    # "*" moves what it can and says which curtain could not, and why.
    reply = ok(curtain(pair, "Open", name="*"))
    [left, right] = reply["parameters"]["outcomes"]
    assert (left["curtain"], left["outcome"]) == ("left", "moving"), reply
    assert (right["curtain"], right["outcome"], right["error"]) == ("right", "unreachable", "io.roombridge.Curtain.NotConnected")
    wait_curtains(pair, lambda cs: settled(cs["left"], 100), what="left open")

    pair_sim.ctl("device", RIGHT, "reappear")
    wait_curtains(pair, lambda cs: settled(cs["right"], 50), timeout=20, what="right back")


def test_cli_names_a_curtain_and_lists_them_all(pair, pair_sim):
    r = ctl(pair, "curtain", "move", "60", "--name", "right", "--wait")
    assert r.returncode == 0, r.stderr
    assert "at 60% open" in r.stdout
    assert "idle at 0%" in pair_sim.status()  # left did not move

    r = ctl(pair, "curtain", "open")
    assert r.returncode != 0 and "give name" in r.stderr, r.stderr

    r = ctl(pair, "curtain", "status")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "CONNECTION", "MOTION", "POSITION", "PROFILE", "DEVICE", "NOTE"]
    assert lines[1].split()[:4] == ["left", "connected", "idle", "0%"]
    assert lines[2].split()[:4] == ["right", "connected", "idle", "60%"]
    assert lines[1].index("connected") == lines[2].index("connected"), "columns are aligned"

    r = ctl(pair, "status")
    assert r.returncode == 0, r.stderr
    assert "Curtains:" in r.stdout and "  left " in r.stdout and "  right " in r.stdout, r.stdout


def test_reload_removes_and_adds_a_curtain_and_the_other_needs_no_name(pair, pair_sim, tmpdir_path):
    (tmpdir_path / "roombridged.toml").write_text(pair_config("left"))
    w = Watcher(pair.socket_path)
    pair.proc.send_signal(signal.SIGHUP)
    e = w.wait_for(lambda e: e["kind"] == "curtain" and e["curtain"]["id"] == "right")
    assert e["curtain"]["connection"] == "disabled"
    w.close()
    eventually(lambda: "connected=false" in pair_sim.ctl("device", RIGHT, "status"), timeout=10,
               what="the removed curtain disconnected")
    assert list(curtains(pair)) == ["left"]
    assert curtains(pair)["left"]["connection"] == "connected"  # not restarted
    ok(curtain(pair, "MoveTo", position=20))  # one curtain: no name needed
    wait_curtains(pair, lambda cs: settled(cs["left"], 20), what="left at 20")

    # A reload that adds it again: it connects, and the left one is not restarted.
    (tmpdir_path / "roombridged.toml").write_text(pair_config("left", "right"))
    pair.proc.send_signal(signal.SIGHUP)
    cs = wait_curtains(pair, lambda cs: "right" in cs and settled(cs["right"], 50), timeout=20, what="right added back")
    assert settled(cs["left"], 20) and cs["left"]["lastRequest"]["position"] == 20


def shown(driver, element_id):
    """The text of the element `element_id`, or None while the page is (re)loading."""
    from test_web import MISSING, read_page
    text = read_page(lambda: next((e.text for e in driver.find_elements("id", element_id)), None))
    return None if text is MISSING else text


def test_web_page_has_a_panel_per_curtain_and_drives_each(pair, pair_sim, tmpdir_path):
    """The web curtain page (roombridge-web): one panel per curtain, each panel's buttons move its own curtain, and
    each panel follows its own curtain's events; the kiosk corner names both."""
    from test_web import Web, accounts_file, chromium_driver, open_kiosk, sign_in_browser
    web = Web(tmpdir_path, pair, "--accounts", str(accounts_file(tmpdir_path)))
    driver = chromium_driver("en")
    try:
        sign_in_browser(driver, web, "/curtain")
        left, right = driver.find_element("id", "curtain-left"), driver.find_element("id", "curtain-right")
        assert left.get_attribute("data-curtain") == "left" and right.get_attribute("data-curtain") == "right"
        assert right.find_element("tag name", "h2").text.startswith("right")
        assert driver.find_element("id", "curtain-left-position").text == "closed"
        assert driver.find_element("id", "curtain-right-position").text == "50% open"

        driver.find_element("id", "curtain-right-open").click()  # a form: the page loads again after the POST
        eventually(lambda: shown(driver, "curtain-right-position") == "open", timeout=20,
                   what="the right panel to show its curtain open")
        cs = wait_curtains(pair, lambda cs: settled(cs["right"], 100), what="right open")
        assert settled(cs["left"], 0), "the left curtain did not move"
        eventually(lambda: shown(driver, "curtain-left-position") == "closed", what="the left panel unchanged")

        # The left panel follows a move of its curtain sent elsewhere (its events, not the right's).
        ok(curtain(pair, "MoveTo", name="left", position=40))
        eventually(lambda: shown(driver, "curtain-left-position") == "40% open", timeout=20,
                   what="the left panel to follow its curtain")
        assert shown(driver, "curtain-right-position") == "open"

        open_kiosk(driver, web)
        corner = driver.find_element("id", "curtain")
        eventually(lambda: corner.text == "Curtains: left 40% open, right open", what="the kiosk corner naming both")
    finally:
        driver.quit()
        web.close()
