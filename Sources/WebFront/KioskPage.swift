import Foundation
import struct RoomBridgeCore.StateSnapshot
import Varlink

/// The kiosk: one large, colour-coded message fed by Server-Sent Events from `/events`.
enum KioskPage {
    static func render(_ l: Localizer, idleSeconds: Int) -> String {
        """
        <!doctype html>
        <html lang="\(l.language.rawValue)"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(l.t("kiosk.title"))) — \(HTML.escape(l.t("app.name")))</title>
        <link rel="stylesheet" href="\(Assets.site.path)"></head>
        <body class="kiosk">
        <div id="outcome" class="tone-idle" data-kind="idle" data-idle-seconds="\(idleSeconds)"
             data-idle-text="\(HTML.escape(l.t("kiosk.idle")))" aria-live="assertive">
          <div id="headline">\(HTML.escape(l.t("kiosk.idle")))</div>
          <div id="detail"></div>
        </div>
        <div id="stocktake" role="status" hidden></div>
        <div id="curtain" hidden></div>
        <div id="presence" hidden></div>
        <script src="\(Assets.kiosk.path)"></script>
        </body></html>
        """
    }

    /// The JSON a kiosk receives for a snapshot: the curtain corner and, while a badge
    /// session is armed, its countdown.
    struct Snapshot: Encodable {
        var curtain: String?
        /// The curtain page's panel (nil: no curtain configured); with several curtains, the first's.
        var curtainState: CurtainLive?
        /// Every curtain's panel, each named by its `id`.
        var curtainStates: [CurtainLive]
        /// Who is here (nil: nobody, or presence is off).
        var presence: String?
        var message: KioskMessage?
        /// The stocktake banner (nil: no stocktake is open).
        var stocktake: String?
    }

    static func snapshot(_ state: StateSnapshot, _ l: Localizer) -> Snapshot {
        var message: KioskMessage?
        if let armed = state.lending.armed {
            message = KioskMessage(tone: .info, headline: l.t("kiosk.armed", ["user": armed.userName]),
                                   detail: nil, countdownUntil: WireTime.string(armed.expiresAt), kind: "armed")
        }
        return Snapshot(curtain: KioskView.curtains(state.allCurtains, l), curtainState: CurtainView.live(state.curtain, l),
                        curtainStates: state.allCurtains.compactMap { CurtainView.live($0, l) },
                        presence: KioskView.presence(state.presence, l), message: message,
                        stocktake: state.lending.stocktake.map { KioskView.stocktake($0, l) })
    }

    /// A curtain event: the kiosk corner's text (every curtain) and the panel of the curtain `id` (nil when a reload
    /// removed it).
    struct CurtainText: Encodable { var text: String?; var state: CurtainLive?; var id: String? }
    /// A presence event: the kiosk's other corner (nil: nobody is here).
    struct PresenceText: Encodable { var text: String? }
    /// A stocktake event, or a tap it counted: the banner (nil: none is open any more).
    struct StocktakeText: Encodable { var text: String? }

    /// One hub message as Server-Sent Events text for a browser speaking `l`'s language.
    /// `id:` is the daemon event's `seq`, so a reconnecting browser's `Last-Event-ID` says
    /// where to resume.
    static func sse(_ message: HubMessage, _ l: Localizer) -> String {
        switch message {
        case .snapshot(let state):
            return frame(id: Int(state.seq), event: "snapshot", data: json(snapshot(state, l)))
        case .offline:
            return frame(id: nil, event: "offline", data: json(KioskView.offline(l)))
        case .event(let event, let facts):
            if let notice = event.stocktake {
                let text = notice.change == .started ? KioskView.stocktake(notice.status, l) : nil
                return frame(id: event.seq, event: "stocktake", data: json(StocktakeText(text: text)))
            }
            if let outcome = event.lending {
                let shown = frame(id: event.seq, event: "outcome", data: json(KioskView.message(for: outcome, facts: facts, l)))
                guard event.countsInStocktake else { return shown }
                // The banner's count after the tap.
                return shown + frame(id: event.seq, event: "stocktake",
                                     data: json(StocktakeText(text: facts.stocktake.map { KioskView.stocktake($0, l) })))
            }
            if let curtain = event.curtain {
                let text = KioskView.curtains(facts.curtains ?? [curtain], l)
                return frame(id: event.seq, event: "curtain",
                             data: json(CurtainText(text: text, state: CurtainView.live(curtain, l), id: curtain.id)))
            }
            if event.presence != nil, let presence = facts.presence {
                return frame(id: event.seq, event: "presence", data: json(PresenceText(text: KioskView.presence(presence, l))))
            }
            // Other kinds only move the browser's Last-Event-ID along.
            return "id: \(event.seq)\n\n"
        }
    }

    private static func frame(id: Int?, event: String, data: String) -> String {
        (id.map { "id: \($0)\n" } ?? "") + "event: \(event)\ndata: \(data)\n\n"
    }

    private static func json(_ value: some Encodable) -> String {
        (try? String(decoding: JSONValueEncoder().encode(value).serializedBytes(), as: UTF8.self)) ?? "{}"
    }
}
