import Foundation
import struct RoomBridgeCore.CurtainState
import struct RoomBridgeCore.LendingOutcome
import struct RoomBridgeCore.PresenceChangeEvent
import struct RoomBridgeCore.PresenceState
import struct RoomBridgeCore.PresentBeacon
import struct RoomBridgeCore.StocktakeStatus

/// What the kiosk shows for one lending outcome: the pure mapping from the daemon's
/// `LendingOutcome` (plus the facts looked up for it) to a coloured, localised message.
public struct KioskMessage: Codable, Sendable, Equatable {
    /// success (green, rising beep), refusal (red, low beep), info (blue, no sound), idle.
    public enum Tone: String, Codable, Sendable { case success, refusal, info, idle }
    public var tone: Tone
    public var headline: String
    public var detail: String?
    /// When set, the page counts down to this time (ISO 8601) in `{seconds}` and returns to
    /// idle when it passes.
    public var countdownUntil: String?
    /// The outcome's kind, for the page and for tests ("lent", "unknownTag", …).
    public var kind: String
}

/// Facts about an outcome that the outcome itself does not carry, read from the daemon when
/// the event arrives: the device's model and due date for a lend, the session's end for a badge.
public struct OutcomeFacts: Codable, Sendable, Equatable {
    public var model: String?
    public var dueAt: Date?
    public var sessionExpiresAt: String?
    /// For a presence event: who is present after it (nil when not known, e.g. in a replay).
    public var presence: PresenceState?
    /// For a curtain event: every curtain after it (nil when not known, e.g. in a replay).
    public var curtains: [CurtainState]?
    /// For a tap counted or noted as unexpected: the open stocktake after it (nil when not known).
    public var stocktake: StocktakeStatus?

    public init(model: String? = nil, dueAt: Date? = nil, sessionExpiresAt: String? = nil, presence: PresenceState? = nil,
                curtains: [CurtainState]? = nil, stocktake: StocktakeStatus? = nil) {
        self.stocktake = stocktake
        self.model = model
        self.dueAt = dueAt
        self.sessionExpiresAt = sessionExpiresAt
        self.presence = presence
        self.curtains = curtains
    }
}

public enum KioskView {
    /// The message for an outcome.
    public static func message(for outcome: LendingOutcome, facts: OutcomeFacts, _ l: Localizer) -> KioskMessage {
        let device = outcome.deviceId ?? "?"
        let user = outcome.userName ?? outcome.userId ?? "?"
        func make(_ tone: KioskMessage.Tone, _ headline: String, _ detail: String? = nil, until: String? = nil) -> KioskMessage {
            KioskMessage(tone: tone, headline: headline, detail: detail, countdownUntil: until, kind: outcome.kind.rawValue)
        }
        switch outcome.kind {
        case .lent:
            let args = ["model": facts.model ?? device, "device": device, "user": user]
            if let booked = outcome.bookedFrom {
                return make(.success, l.t("kiosk.lentBooked", args.merging(["due": l.moment(booked, from: outcome.at)]) { a, _ in a }))
            }
            if let due = facts.dueAt {
                return make(.success, l.t("kiosk.lentDue", args.merging(["due": l.day(due)]) { a, _ in a }))
            }
            return make(.success, l.t("kiosk.lent", args))
        case .returned:
            return make(.success, l.t("kiosk.returned"), l.t("kiosk.returnedDetail", ["device": device, "user": user]))
        case .armed:
            // The countdown's `{seconds}` is filled in by the page, so only when the session's end is known.
            guard let until = facts.sessionExpiresAt else { return make(.info, l.t("kiosk.armedNoCountdown", ["user": user])) }
            return make(.info, l.t("kiosk.armed", ["user": user]), until: until)
        case .disarmed:
            return make(.info, l.t("kiosk.disarmed"))
        case .badgeRequired:
            return make(.refusal, l.t("kiosk.badgeRequired"), l.t("kiosk.badgeRequiredDetail", ["device": device]))
        case .refused:
            switch outcome.refusal {
            case .deviceBroken: return make(.refusal, l.t("kiosk.refused.deviceBroken", ["device": device]))
            case .deviceDisposed: return make(.refusal, l.t("kiosk.refused.deviceDisposed", ["device": device]))
            case .alreadyLent: return make(.info, l.t("kiosk.refused.alreadyLent", ["device": device, "user": user]))
            case .alreadyReturned: return make(.info, l.t("kiosk.refused.alreadyReturned", ["device": device]))
            case .limitReached: return make(.refusal, l.t("kiosk.refused.limitReached", ["user": user]))
            case .unregisteredTag:
                return make(.refusal, l.t("kiosk.refused.unregisteredTag"), l.t("kiosk.refused.unregisteredTagDetail", ["device": device]))
            case .booked:
                let from = outcome.bookedFrom.map { l.moment($0, from: outcome.at) } ?? "?"
                return make(.refusal, l.t("kiosk.refused.booked", ["device": device, "user": outcome.bookedFor ?? user, "from": from]),
                            l.t("kiosk.refused.bookedDetail"))
            case .stocktake: return make(.info, l.t("kiosk.refused.stocktake"))
            case nil: return make(.refusal, l.t("kiosk.refused", ["device": device]))
            }
        case .unknownTag:
            return make(.refusal, l.t("kiosk.unknownTag"), outcome.uid?.hex)
        case .unknownDevice:
            return make(.refusal, l.t("kiosk.unknownDevice"), l.t("kiosk.unknownDeviceDetail", ["device": device]))
        case .failed:
            return make(.refusal, l.t("kiosk.failed"))
        case .counted:
            let args = ["model": outcome.model ?? device, "device": device]
            return make(outcome.reason == "again" ? .info : .success, l.t(outcome.reason == "again" ? "kiosk.countedAgain" : "kiosk.counted", args))
        case .unexpected:
            return make(.refusal, l.t("kiosk.unexpected"), outcome.uid?.hex)
        }
    }

    /// The message while roombridged cannot be reached.
    public static func offline(_ l: Localizer) -> KioskMessage {
        KioskMessage(tone: .refusal, headline: l.t("kiosk.offline"), detail: nil, countdownUntil: nil, kind: "offline")
    }

    /// The stocktake banner while one is open: what to do and how many devices are counted so far.
    public static func stocktake(_ s: StocktakeStatus, _ l: Localizer) -> String {
        l.t("kiosk.stocktake", ["counted": l.number(s.counted)])
    }

    /// Who is here, by the person's name ("Here: Aiko Tanaka, Pixel 8"), or nil when nobody is (or presence is off).
    public static func presence(_ p: PresenceState?, _ l: Localizer) -> String? {
        guard let p, p.status == .scanning else { return nil }
        let here = p.regions.filter { !$0.beacons.isEmpty }.map(\.label)
        return here.isEmpty ? nil : l.t("kiosk.presence", ["names": here.joined(separator: l.t("kiosk.presenceSeparator"))])
    }

    /// The curtain's state in words, or nil when no curtain is configured.
    public static func curtain(_ c: CurtainState, _ l: Localizer) -> String? {
        state(of: c, l).map { l.t("kiosk.curtain", ["state": $0]) }
    }

    /// The curtains' states in words: one curtain as ``curtain(_:_:)``, several each by its name; nil when none
    /// is configured.
    public static func curtains(_ cs: [CurtainState], _ l: Localizer) -> String? {
        guard cs.count > 1 else { return cs.first.flatMap { curtain($0, l) } }
        let states = cs.compactMap { c in state(of: c, l).map { l.t("kiosk.curtainNamed", ["name": c.id ?? "?", "state": $0]) } }
        return states.isEmpty ? nil : l.t("kiosk.curtains", ["states": states.joined(separator: l.t("kiosk.presenceSeparator"))])
    }

    /// One curtain's connection, motion or position in words (with the wall switch when it moves it).
    static func state(of c: CurtainState, _ l: Localizer) -> String? {
        let state: String
        switch (c.connection, c.motion) {
        case (.disabled, _): return nil
        case (.connected, .opening), (.standby, .opening): state = l.t("curtain.opening")
        case (.connected, .closing), (.standby, .closing): state = l.t("curtain.closing")
        case (.connected, _), (.standby, _):
            switch c.position {
            case 100?: state = l.t("curtain.open")
            case 0?: state = l.t("curtain.closed")
            case let p?: state = l.t("curtain.position", ["percent": l.number(p)])
            case nil: state = l.t("common.none")
            }
        case (.searching, _): state = l.t("curtain.searching")
        case (.connecting, _): state = l.t("curtain.connecting")
        case (.disconnected, _): state = l.t("curtain.disconnected")
        }
        return c.manualOperationActive ? state + " — " + l.t("curtain.manual") : state
    }
}

extension PresenceState {
    /// The state after `change`, as the kiosk follows it between snapshots: a beacon entering (with the names the
    /// daemon looked up just then) or leaving a region, or a new scanning status. A beacon is the same beacon by
    /// its identity (UUID, major, minor), whatever its RSSI and distance now.
    func applying(_ change: PresenceChangeEvent) -> PresenceState {
        var p = self
        if change.kind == .status, let status = change.status { p.status = status }
        guard let name = change.region, let i = p.regions.firstIndex(where: { $0.name == name }) else { return p }
        func same(_ a: PresentBeacon, _ b: PresentBeacon) -> Bool { (a.uuid, a.major, a.minor) == (b.uuid, b.major, b.minor) }
        switch change.kind {
        case .entered:
            if change.userName != nil { p.regions[i].userName = change.userName }
            if change.deviceModel != nil { p.regions[i].deviceModel = change.deviceModel }
            if let b = change.beacon, !p.regions[i].beacons.contains(where: { same($0, b) }) { p.regions[i].beacons.append(b) }
        case .exited:
            p.regions[i].beacons.removeAll { b in change.beacon.map { same($0, b) } ?? true }
        case .proximityChanged, .status:
            break
        }
        return p
    }
}
