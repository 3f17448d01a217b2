"""A whole window at once (issue 27 §3): curtain groups of the configuration ([curtain.groups]) driven over Varlink,
roombridgectl and the web page, and the adapter's connection budget (curtain.connections): a group of two SwitchBot
curtains on one adapter with a budget of one link both move, the second in line behind the first, never two links at
once. The SwitchBot tests run against curtains that keep advertising while connected and curtains that stop."""
import re

import pytest

from conftest import eventually
from test_curtain import BlueZSim, call, ctl, curtain, ok
from test_curtain_pair import LEFT, RIGHT, curtains, settled, wait_curtains

# Long enough that, without giving the link up early for the curtain in line, the second curtain would wait for it.
HOLD = 60


def outcomes(reply):
    return [(o["curtain"], o["outcome"]) for o in ok(reply)["parameters"]["outcomes"]]


def config(profile, groups='window = ["left", "right"]', curtain_keys=""):
    return ('[log]\nlevel = "debug"\n' + f"[curtain]\n{curtain_keys}" + f"[curtain.groups]\n{groups}\n"
            + "".join(f'[curtains.{n}]\naddress = "{a}"\nprofile = "{profile}"\n'
                      for n, a in (("left", LEFT), ("right", RIGHT))))


# --- SwitchBot curtains on demand, one link at a time ---------------------------------------------------------------

@pytest.fixture(params=["on", "off"], ids=["keeps-advertising", "stops-advertising"])
def switchbots(request, tmpdir_path):
    s = BlueZSim(tmpdir_path, "--profile", "switchbot", "--speed", "20", "--advertise-while-connected", request.param,
                 "--curtain", f"switchbot@{RIGHT}@50")
    yield s
    s.close()


def peak_links(sim):
    return int(re.search(r"peak-links=(\d+)", sim.status()).group(1))


def test_a_group_command_moves_both_curtains_with_a_budget_of_one_link(daemon_factory, switchbots, tmpdir_path):
    (tmpdir_path / "roombridged.toml").write_text(
        config("switchbot", curtain_keys=f"connections = 1\nhold = {HOLD}\n"))
    d = daemon_factory("--curtain-enabled", env={"DBUS_SYSTEM_BUS_ADDRESS": switchbots.address})
    # At start each curtain connects for its first state: one after the other, and released for the next in line.
    wait_curtains(d, lambda cs: all(c["connection"] in ("connected", "standby") and c.get("position") is not None
                                    for c in cs.values()), timeout=30, what="both curtains' first state")
    assert peak_links(switchbots) == 1

    # Both at once, in parallel: the first connects, the second waits in line, then connects and moves.
    reply = curtain(d, "MoveTo", name="window", position=30)
    assert outcomes(reply) == [("left", "moving"), ("right", "moving")], reply
    assert "waiting for a connection slot: 1 of 1 in use" in d.stderr_path.read_text()
    cs = wait_curtains(d, lambda cs: all(c["motion"] == "idle" and c.get("position") == 30 for c in cs.values()),
                       timeout=30, what="both curtains at 30%")
    assert not any(c["manual"] for c in cs.values()), cs  # the daemon's own moves, never taken for a pull
    for address in (LEFT, RIGHT):
        assert re.search(r"status=idle at 30%", switchbots.ctl("device", address, "status"))
    assert peak_links(switchbots) == 1, "two links at once with curtain.connections = 1"

    # A curtain's own command still works alone, taking the one link from the other's hold.
    ok(curtain(d, "Open", name="left"))
    wait_curtains(d, lambda cs: settled_anyhow(cs["left"], 100), timeout=30, what="left open")
    assert peak_links(switchbots) == 1


def settled_anyhow(c, position):
    """Idle at `position`, linked or released (an on-demand curtain may be either)."""
    return c["motion"] == "idle" and c.get("position") == position and c["connection"] in ("connected", "standby")


# --- Groups of our own controllers: Varlink, roombridgectl and the web page ------------------------------------------

@pytest.fixture
def sim(tmpdir_path):
    s = BlueZSim(tmpdir_path, "--curtain", f"roombridge@{RIGHT}@50")
    yield s
    s.close()


@pytest.fixture
def grouped(daemon_factory, sim, tmpdir_path):
    (tmpdir_path / "roombridged.toml").write_text(config("roombridge"))
    # A short idle timeout: roombridge-web's command link is closed between clicks (the seam the kiosk met first).
    d = daemon_factory("--curtain-enabled", "--socket-idle-timeout", "2",
                       env={"DBUS_SYSTEM_BUS_ADDRESS": sim.address})
    wait_curtains(d, lambda cs: settled(cs["left"], 0) and settled(cs["right"], 50), timeout=20,
                  what="both curtains connected")
    return d


def test_groups_are_listed_and_a_refusal_is_one_curtains_outcome(grouped, sim):
    got = ok(curtain(grouped, "GetState", name="window"))["parameters"]
    assert got["groups"] == [{"name": "window", "curtains": ["left", "right"]}]
    assert got["curtain"]["id"] == "left"

    # "all" is every curtain without being declared.
    assert outcomes(curtain(grouped, "Open", name="all")) == [("left", "moving"), ("right", "moving")]
    wait_curtains(grouped, lambda cs: settled(cs["left"], 100) and settled(cs["right"], 100), what="both open")

    # One curtain gone: the group still moves the other, and the reply says which did not and why.
    sim.ctl("device", RIGHT, "vanish")
    wait_curtains(grouped, lambda cs: cs["right"]["connection"] != "connected", what="right gone")
    reply = ok(curtain(grouped, "Close", name="window"))
    [left, right] = reply["parameters"]["outcomes"]
    assert (left["curtain"], left["outcome"]) == ("left", "moving"), left
    assert (right["curtain"], right["outcome"], right["error"]) == ("right", "unreachable", "io.roombridge.Curtain.NotConnected")
    assert right["message"], right
    wait_curtains(grouped, lambda cs: settled(cs["left"], 0), what="left closed")

    # An unknown name lists the curtains and the groups; nothing moves.
    writes = sim.writes()
    refused = curtain(grouped, "Open", name="door")
    assert refused["error"] == "io.roombridge.Curtain.InvalidParameter", refused
    assert refused["parameters"]["message"].endswith("the configured ones are: left, right; the groups: window")
    assert sim.writes() == writes


def test_roombridgectl_drives_a_group_and_shows_each_curtain(grouped, sim):
    r = ctl(grouped, "curtain", "move", "40", "--name", "window")
    assert r.returncode == 0, r.stderr
    assert [line.split() for line in r.stdout.splitlines()] == [["left", "moving"], ["right", "moving"]], r.stdout
    wait_curtains(grouped, lambda cs: settled(cs["left"], 40) and settled(cs["right"], 40), what="both at 40")

    r = ctl(grouped, "curtain", "open", "--name", "window", "--wait")
    assert r.returncode == 64 and "--wait follows one curtain, and window is none" in r.stderr, r.stderr
    assert curtains(grouped)["left"]["lastRequest"]["kind"] == "moveTo", "nothing was sent"

    sim.ctl("device", RIGHT, "vanish")
    wait_curtains(grouped, lambda cs: cs["right"]["connection"] != "connected", what="right gone")
    r = ctl(grouped, "curtain", "close", "--name", "window")
    assert r.returncode == 5, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["left", "moving"] and lines[1].startswith("right  unreachable: "), r.stdout
    assert "right did not take Close" in r.stderr, r.stderr


def test_web_page_drives_a_group_and_every_curtain(grouped, sim, tmpdir_path):
    """Each click comes after the daemon closed roombridge-web's quiet connection; the later ones also after a
    bluetoothd restart and after a restart of roombridged itself."""
    from test_curtain_pair import shown
    from test_desk_day import web_connections_closed
    from test_web import Web, accounts_file, artefact_dir, chromium_driver, sign_in_browser
    web = Web(tmpdir_path, grouped, "--accounts", str(accounts_file(tmpdir_path)))
    driver = chromium_driver("ja")
    try:
        sign_in_browser(driver, web, "/curtain")
        panel = driver.find_element("id", "curtain-groups")
        assert panel.find_element("tag name", "h2").text == "まとめて操作"
        assert driver.find_element("id", "group-window").text.startswith("window left, right")
        assert driver.find_element("id", "group-all").text.startswith("すべてのカーテン")
        driver.save_screenshot(str(artefact_dir() / "curtain-groups-ja.png"))  # for a person to look at

        web_connections_closed(grouped, web)
        driver.find_element("id", "group-window-open").click()
        wait_curtains(grouped, lambda cs: settled(cs["left"], 100) and settled(cs["right"], 100), timeout=20,
                      what="both open")
        assert all(c["lastRequest"]["by"].startswith("web:root-admin") for c in curtains(grouped).values())
        eventually(lambda: shown(driver, "curtain-left-position") == "開", timeout=20, what="the left panel open")

        # bluetoothd restarts: both curtains come back, and the group moves again.
        sim.ctl("restart-bluetoothd")
        wait_curtains(grouped, lambda cs: settled(cs["left"], 100) and settled(cs["right"], 100), timeout=30,
                      what="both back after the bluetoothd restart")
        web_connections_closed(grouped, web)
        driver.get(web.base + "/curtain")
        driver.find_element("id", "group-window-stop").click()
        wait_curtains(grouped, lambda cs: all(c["lastRequest"]["kind"] == "stop" for c in cs.values()), what="stop sent")

        # roombridged restarts under the open page: the next click reaches the new daemon.
        assert grouped.terminate() == 0
        grouped.notify.messages.clear()
        grouped.stderr.close()
        grouped.start()
        wait_curtains(grouped, lambda cs: settled(cs["left"], 100) and settled(cs["right"], 100), timeout=30,
                      what="both connected to the restarted daemon")
        driver.get(web.base + "/curtain")
        driver.find_element("id", "group-window-close").click()
        wait_curtains(grouped, lambda cs: settled(cs["left"], 0) and settled(cs["right"], 0), timeout=20,
                      what="both closed")
        driver.find_element("id", "group-window-open").click()
        wait_curtains(grouped, lambda cs: settled(cs["left"], 100) and settled(cs["right"], 100), timeout=20,
                      what="both open again")

        sim.ctl("device", RIGHT, "vanish")
        wait_curtains(grouped, lambda cs: cs["right"]["connection"] != "connected", what="right gone")
        web_connections_closed(grouped, web)
        driver.find_element("id", "group-all-close").click()
        error = eventually(lambda: shown(driver, "error"), timeout=20, what="the refusal shown")
        assert error.startswith("受け付けなかったカーテンがあります: right: "), error
        wait_curtains(grouped, lambda cs: settled(cs["left"], 0), what="left closed")
    finally:
        driver.quit()
        web.close()


# --- A battery running low ------------------------------------------------------------------------------------------

@pytest.fixture(params=["on", "off"], ids=["keeps-advertising", "stops-advertising"])
def switchbot(request, tmpdir_path):
    s = BlueZSim(tmpdir_path, "--profile", "switchbot", "--advertise-while-connected", request.param)
    yield s
    s.close()


def test_a_low_battery_is_told_once_per_threshold_on_watch_and_through_the_outbox(daemon_factory, switchbot, tmpdir_path):
    from conftest import Watcher
    from test_outbox import Receiver, configure
    receiver = Receiver()
    receiver.up()
    try:
        configure(tmpdir_path, receiver)
        config = tmpdir_path / "roombridged.toml"
        config.write_text(config.read_text() + '\n[curtain]\nprofile = "switchbot"\nhold = 1\n')
        d = daemon_factory("--curtain-enabled", env={"DBUS_SYSTEM_BUS_ADDRESS": switchbot.address})
        wait_curtains(d, lambda cs: cs["curtain"]["connection"] == "standby" and cs["curtain"].get("battery") == 87,
                      timeout=20, what="the curtain released, its battery heard")
        w = Watcher(d.socket_path)

        # 87 → 18 %: below 20 %, told once; 17 % tells nothing more; 9 % crosses 10 %.
        for percent in (18, 17, 9):
            switchbot.ctl("battery", str(percent))
            wait_curtains(d, lambda cs: cs["curtain"].get("battery") == percent, what=f"the battery at {percent} %")
        e = w.wait_for(lambda e: e["kind"] == "battery", what="the first battery event")
        assert e["battery"] == {"curtain": "curtain", "battery": 18, "threshold": 20}, e
        e = w.wait_for(lambda e: e["kind"] == "battery", what="the second battery event")
        assert e["battery"] == {"curtain": "curtain", "battery": 9, "threshold": 10}, e
        w.close()

        events = eventually(lambda: (ev := [x for x in receiver.events() if x["kind"] == "battery"]) and len(ev) == 2 and ev,
                            timeout=15, what="two battery notices delivered")
        assert [(x["curtain"], x["battery"], x["threshold"]) for x in events] == [("curtain", 18, 20), ("curtain", 9, 10)]
        assert "the curtain curtain's battery is at 9 % (at or below 10 %)" in d.stderr_path.read_text()

        # Changed: above 25 % it starts over, and the next fall below 20 % is told again.
        for percent in (100, 19):
            switchbot.ctl("battery", str(percent))
            wait_curtains(d, lambda cs: cs["curtain"].get("battery") == percent, what=f"the battery at {percent} %")
        eventually(lambda: len([x for x in receiver.events() if x["kind"] == "battery"]) == 3, timeout=15,
                   what="the third battery notice")
    finally:
        receiver.down()
