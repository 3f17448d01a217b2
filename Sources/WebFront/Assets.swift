/// The stylesheet and the kiosk's script, served from memory (no files to install, no npm).
enum Assets {
    static let site = StaticAsset(name: "site.css", contentType: "text/css; charset=utf-8", body: css)
    static let kiosk = StaticAsset(name: "kiosk.js", contentType: "text/javascript; charset=utf-8", body: kioskJS)
    static let curtain = StaticAsset(name: "curtain.js", contentType: "text/javascript; charset=utf-8", body: curtainJS)
    static let all = [site, kiosk, curtain]

    static let css = """
        :root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #fafafa; }
        header { display: flex; flex-wrap: wrap; gap: .4em 1.5em; align-items: baseline; padding: .6em 1em; background: #243b53; color: #fff; }
        header > strong, header .languages, #time-zone { white-space: nowrap; }
        header a { color: #d9e2ec; margin-right: 1em; text-decoration: none; white-space: nowrap; }
        header a[aria-current] { color: #fff; font-weight: bold; border-bottom: 2px solid #fff; }
        main { padding: 1em 2em; }
        table { border-collapse: collapse; margin: .5em 0 1.5em; }
        th, td { border-bottom: 1px solid #ccc; padding: .3em .8em; text-align: left; }
        tr.overdue, p.overdue { background: #ffe3e3; color: #8a1c1c; font-weight: bold; }
        .filters { display: flex; flex-wrap: wrap; gap: 1em; align-items: center; margin-bottom: 1em; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3em 1.5em; }
        dt { font-weight: bold; }
        .empty { color: #666; }
        body.kiosk { margin: 0; height: 100vh; overflow: hidden; }
        #outcome { height: 100vh; display: flex; flex-direction: column; justify-content: center; align-items: center;
                   text-align: center; padding: 0 5vw; box-sizing: border-box; transition: background .3s; }
        #headline { font-size: 6vw; font-weight: bold; line-height: 1.2; text-wrap: balance; }
        :lang(ja) #headline { word-break: auto-phrase; }
        #detail { font-size: 3vw; margin-top: 1em; }
        .nowrap { white-space: nowrap; }
        .tone-idle { background: #f0f4f8; color: #334e68; }
        .tone-success { background: #2f9e44; color: #fff; }
        .tone-refusal { background: #c92a2a; color: #fff; }
        .tone-info { background: #1971c2; color: #fff; }
        form.inline { display: inline; }
        table.week { table-layout: fixed; width: 100%; }
        table.week td { vertical-align: top; }
        table.week ul { list-style: none; margin: 0; padding: 0; }
        table.week li { margin-bottom: .4em; }
        .curtain-panel { max-width: 48em; }
        .curtain-track { position: relative; height: 2.5em; background: #d9e2ec; border-radius: .3em; overflow: hidden; margin: .5em 0; }
        .curtain-fill { height: 100%; width: 0; background: #486581; transition: width .5s linear; }
        .curtain-target { position: absolute; top: 0; bottom: 0; width: 3px; margin-left: -1px; background: #f0b429; display: none; }
        .curtain-panel[data-motion="opening"] .curtain-target, .curtain-panel[data-motion="closing"] .curtain-target { display: block; }
        .curtain-buttons button { font-size: 1.2em; padding: .4em 1.2em; margin: .2em .4em .2em 0; }
        .curtain-group { margin: .3em 0; }
        .curtain-group strong { display: inline-block; min-width: 12em; }
        .curtain-group button { font-size: 1.2em; padding: .4em 1.2em; margin: .2em .4em .2em 0; }
        p.lockout { background: #fff3bf; color: #5c3c00; padding: .5em .8em; font-weight: bold; }
        p.error { color: #8a1c1c; font-weight: bold; }
        .schedule-row { display: block; margin: .5em 0; }
        .schedule-row label { margin-right: 1em; }
        body.kiosk #presence { position: fixed; right: 1.5vw; top: 1.5vw; font-size: 2vw; background: rgba(0,0,0,.55);
                   color: #fff; padding: .4em .8em; border-radius: .4em; }
        body.kiosk #stocktake { position: fixed; left: 1.5vw; top: 1.5vw; max-width: 64vw; font-size: 2vw; font-weight: bold;
                   background: #f0b429; color: #1b1b1b; padding: .4em .8em; border-radius: .4em; text-wrap: balance; }
        :lang(ja) #stocktake { word-break: auto-phrase; }
        .print-only { display: none; }
        /* Printing (a stocktake's report; "Save as PDF"): the document alone, on A4, with page numbers. */
        svg.chart { max-width: 100%; height: auto; display: block; margin: .5em 0; font: 12px system-ui, sans-serif; }
        svg.chart text { fill: #222; }
        svg.chart .axis { stroke: #999; }
        .bar.lent, .key.lent { fill: #3b6fb6; background: #3b6fb6; }
        .bar.overdue, .key.overdue { fill: #c0392b; background: #c0392b; }
        .bar.available, .key.available { fill: #2e8b57; background: #2e8b57; }
        .bar.broken, .key.broken { fill: #999; background: #999; }
        .bar.lends, .key.lends { fill: #3b6fb6; background: #3b6fb6; }
        .bar.busiest { fill: #6c4fb6; }
        svg.chart .position { fill: none; stroke: #b8860b; stroke-width: 2; }
        .key.position { background: #b8860b; }
        .bar.stay, .key.stay { fill: #2e8b57; background: #2e8b57; }
        svg.chart .unrecorded { fill: #eee; }
        svg.chart .tick { stroke: #ddd; }
        svg.chart .now { stroke: #c0392b; stroke-dasharray: 3 2; }
        .legend .key { display: inline-block; width: .9em; height: .9em; margin: 0 .3em 0 .8em; vertical-align: -.1em; }
        p.summary { max-width: 60em; }
        @media print {
          @page { size: A4; margin: 15mm 12mm 18mm;
                  @bottom-center { content: counter(page) " / " counter(pages); font-size: 9pt; color: #555; } }
          :root { background: #fff; font-size: 10pt; }
          header, nav, form, button, .no-print, #notice { display: none !important; }
          .print-only { display: block; }
          main { padding: 0; }
          h1 { font-size: 16pt; margin: 0 0 .4em; }
          h2 { font-size: 12pt; margin: 1em 0 .3em; break-after: avoid; }
          h3 { font-size: 11pt; margin: .8em 0 .2em; break-after: avoid; }
          table { width: 100%; margin: .2em 0 .8em; }
          thead { display: table-header-group; }
          tr { break-inside: avoid; }
          th, td { padding: .15em .5em; }
          a { color: inherit; text-decoration: none; }
        }
        body.kiosk #curtain { position: fixed; right: 1.5vw; bottom: 1.5vw; font-size: 2vw; background: rgba(0,0,0,.55);
                   color: #fff; padding: .4em .8em; border-radius: .4em; }
        """

    static let curtainJS = """
        "use strict";
        // The curtain page: applies each curtain state from /events to its panel (position bar,
        // texts, lockout, which buttons may be used). Each panel is one curtain (data-curtain: its
        // name in the daemon); an event for a curtain without a panel, or removing one, reloads the page.
        (function () {
          const panels = Array.from(document.querySelectorAll("section.curtain-panel"));
          if (panels.length === 0) return;
          function panelFor(id) {
            if (panels.length === 1 && (!id || !panels[0].dataset.curtain)) return panels[0];
            return panels.find(function (p) { return p.dataset.curtain === id; });
          }
          function draw(panel) {
            panel.querySelector(".curtain-fill").style.width = (Number(panel.dataset.position) || 0) + "%";
            panel.querySelector(".curtain-target").style.left = (Number(panel.dataset.target) || 0) + "%";
          }
          function apply(panel, c) {
            panel.dataset.position = c.position == null ? "" : String(c.position);
            panel.dataset.target = c.target == null ? "" : String(c.target);
            panel.dataset.motion = c.motion;
            panel.dataset.connection = c.connection;
            panel.querySelector(".curtain-status").textContent = c.status;
            panel.querySelector(".curtain-position").textContent = c.positionText;
            panel.querySelector(".lockout").hidden = !c.lockedOut;
            const error = panel.querySelector(".curtain-error");
            error.hidden = !c.lastError; error.textContent = c.lastError || "";
            const admin = panel.dataset.admin === "1";
            for (const b of panel.querySelectorAll("button[data-motion]")) b.disabled = !(admin && c.usable);
            draw(panel);
          }
          function update(id, c) {
            const panel = panelFor(id);
            if (!panel || !c) { if (panel || c) location.reload(); return; }
            apply(panel, c);
          }
          panels.forEach(draw);
          // The events speak the page's language (a kiosk opened as /kiosk?lang=ja gets Japanese outcomes).
          const events = new EventSource("/events?lang=" + encodeURIComponent(document.documentElement.lang || "en"));
          events.addEventListener("snapshot", function (e) {
            const s = JSON.parse(e.data);
            const states = s.curtainStates || (s.curtainState ? [s.curtainState] : []);
            for (const c of states) update(c.id, c);
            document.body.dataset.live = "1";
          });
          events.addEventListener("curtain", function (e) {
            const m = JSON.parse(e.data);
            update(m.id || (m.state && m.state.id), m.state);
          });
          events.addEventListener("offline", function () {
            document.body.dataset.live = "0";
            for (const panel of panels) {
              panel.querySelector(".curtain-status").textContent = panel.dataset.offlineText;
              for (const b of panel.querySelectorAll("button[data-motion]")) b.disabled = true;
            }
          });
        })();
        """

    static let kioskJS = """
        "use strict";
        // The kiosk: shows each lending outcome from /events, beeps, and returns to idle.
        (function () {
          const box = document.getElementById("outcome");
          const headline = document.getElementById("headline");
          const detail = document.getElementById("detail");
          const curtain = document.getElementById("curtain");
          const idleMillis = Number(box.dataset.idleSeconds) * 1000;
          let timer = null, audio = null;

          function beep(tone) {
            try {
              audio = audio || new AudioContext();
              const notes = tone === "success" ? [[660, 0], [880, 0.12]] : [[220, 0], [180, 0.18]];
              for (const [freq, at] of notes) {
                const osc = audio.createOscillator(), gain = audio.createGain();
                osc.type = tone === "success" ? "sine" : "square";
                osc.frequency.value = freq;
                gain.gain.setValueAtTime(0.2, audio.currentTime + at);
                gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + at + 0.15);
                osc.connect(gain).connect(audio.destination);
                osc.start(audio.currentTime + at);
                osc.stop(audio.currentTime + at + 0.16);
              }
            } catch (e) { /* no sound available: the colour still tells */ }
          }

          // Sets a text, keeping hyphenated IDs ("D-0042") on one line: a line break after the
          // hyphen makes them hard to read from 2 m.
          function setText(el, text) {
            el.textContent = "";
            for (const part of text.split(/([A-Za-z]+-[0-9A-Za-z-]+)/)) {
              if (!part) continue;
              if (/^[A-Za-z]+-[0-9A-Za-z-]+$/.test(part)) {
                const span = document.createElement("span");
                span.className = "nowrap"; span.textContent = part; el.appendChild(span);
              } else {
                el.appendChild(document.createTextNode(part));
              }
            }
          }

          function idle() {
            clearInterval(timer); timer = null;
            box.className = "tone-idle"; box.dataset.kind = "idle";
            headline.textContent = box.dataset.idleText; detail.textContent = "";
          }

          function show(m, sound) {
            clearInterval(timer); timer = null;
            box.className = "tone-" + m.tone; box.dataset.kind = m.kind;
            setText(detail, m.detail || "");
            if (m.countdownUntil) {
              const until = Date.parse(m.countdownUntil);
              const tick = function () {
                const left = Math.ceil((until - Date.now()) / 1000);
                if (left <= 0) { idle(); return; }
                setText(headline, m.headline.replace("{seconds}", String(left)));
              };
              tick();
              if (box.dataset.kind !== "idle") timer = setInterval(tick, 250);
            } else {
              setText(headline, m.headline);
              if (m.kind !== "offline") timer = setTimeout(idle, idleMillis);
            }
            if (sound && (m.tone === "success" || m.tone === "refusal")) beep(m.tone);
          }

          const presence = document.getElementById("presence");
          function setPresence(text) {
            presence.hidden = !text; presence.textContent = text || "";
          }

          function setCurtain(text) {
            curtain.hidden = !text; curtain.textContent = text || "";
          }

          // The stocktake banner: shown while one is open, with the count so far.
          const stocktake = document.getElementById("stocktake");
          function setStocktake(text) {
            stocktake.hidden = !text; stocktake.textContent = text || "";
          }

          // The events speak the page's language (a kiosk opened as /kiosk?lang=ja gets Japanese outcomes).
          const events = new EventSource("/events?lang=" + encodeURIComponent(document.documentElement.lang || "en"));
          events.addEventListener("snapshot", function (e) {
            const s = JSON.parse(e.data);
            document.body.dataset.live = "1";  // live: the daemon's state has arrived
            setCurtain(s.curtain);
            setPresence(s.presence);
            setStocktake(s.stocktake);
            if (s.message) show(s.message, false); else if (box.dataset.kind === "offline") idle();
          });
          events.addEventListener("outcome", function (e) { show(JSON.parse(e.data), true); });
          events.addEventListener("curtain", function (e) { setCurtain(JSON.parse(e.data).text); });
          events.addEventListener("presence", function (e) { setPresence(JSON.parse(e.data).text); });
          events.addEventListener("stocktake", function (e) { setStocktake(JSON.parse(e.data).text); });
          events.addEventListener("offline", function (e) {
            document.body.dataset.live = "0";
            show(JSON.parse(e.data), false);
          });
          document.addEventListener("click", function () { if (audio) audio.resume(); });
        })();
        """
}
