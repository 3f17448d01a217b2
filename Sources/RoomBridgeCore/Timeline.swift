#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Today in the room, on one time axis: each curtain's position and who or what was in each presence region,
/// from the kiosk's midnight (or the daemon's start, when that was later: the daemon keeps this in memory) until
/// now. What `io.roombridge.State.GetTimeline` answers and the dashboard draws.
public struct Timeline: Sendable, Codable, Equatable {
    /// A curtain's position from one instant on (until the next point, or now).
    public struct PositionPoint: Sendable, Codable, Equatable {
        public var at: Date
        /// Percent open; nil while the position was unknown (not reported, or the curtain unreachable).
        public var position: Int?

        public init(at: Date, position: Int?) {
            self.at = at
            self.position = position
        }
    }

    /// One curtain's positions, oldest first; the first point is at ``Timeline/from`` when the position was
    /// known then.
    public struct CurtainTrack: Sendable, Codable, Equatable {
        /// The curtain's name in the configuration (``CurtainState/id``).
        public var id: String
        public var points: [PositionPoint]

        public init(id: String, points: [PositionPoint]) {
            self.id = id
            self.points = points
        }
    }

    /// A stay in a region: from an entry to the exit (nil: still there).
    public struct Stay: Sendable, Codable, Equatable {
        public var from: Date
        public var until: Date?

        public init(from: Date, until: Date?) {
            self.from = from
            self.until = until
        }
    }

    /// One region's stays, oldest first.
    public struct PresenceTrack: Sendable, Codable, Equatable {
        /// The region's name (`presence.regions`).
        public var region: String
        /// Whom or what it stands for, as a person reads it (``PresenceRegionState/label``).
        public var label: String
        public var stays: [Stay]

        public init(region: String, label: String, stays: [Stay]) {
            self.region = region
            self.label = label
            self.stays = stays
        }
    }

    /// The start of the axis: the kiosk's midnight, or the daemon's start when that was later.
    public var from: Date
    /// Now.
    public var until: Date
    /// The kiosk's time zone, in which "today" is read.
    public var timeZone: String
    /// The configured curtains, in order.
    public var curtains: [CurtainTrack]
    /// Every region that had someone (or something) in it today, by name.
    public var presence: [PresenceTrack]

    public init(from: Date, until: Date, timeZone: String, curtains: [CurtainTrack], presence: [PresenceTrack]) {
        self.from = from
        self.until = until
        self.timeZone = timeZone
        self.curtains = curtains
        self.presence = presence
    }
}

/// What ``SystemState`` keeps for ``Timeline``: curtain positions as they change and presence stays as regions
/// are entered and left, since the kiosk's midnight. Bounded: at most ``maximumPoints`` points per curtain and
/// ``maximumStays`` stays per region (the oldest go first); a day's ordinary use stays far below either.
struct TimelineRecorder: Sendable {
    static let maximumPoints = 4096
    static let maximumStays = 1024

    private let timeZone: String
    private let startedAt: Date
    /// The day being recorded (its first instant) and the next one's, worked out at the first change and again only
    /// at each midnight: the actor makes no calendar per curtain or presence event.
    private var day: (zone: TimeZone, start: Date, next: Date)?
    private var points: [String: [Timeline.PositionPoint]] = [:]
    private var stays: [String: [Timeline.Stay]] = [:]
    private var labels: [String: String] = [:]

    init(timeZone: String, startedAt: Date) {
        self.timeZone = timeZone
        self.startedAt = startedAt
    }

    /// The first instant of the day containing `t` in `zone`, and of the next day.
    static func bounds(of t: Date, in zone: TimeZone) -> (start: Date, next: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let start = calendar.startOfDay(for: t)
        return (start, calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400))
    }

    /// A curtain's state changed: a new point when its position did.
    mutating func curtain(_ state: CurtainState, at t: Date) {
        guard let id = state.id else { return }
        roll(to: t)
        let position = state.connection == .disabled ? nil : state.position
        var track = points[id] ?? []
        if let last = track.last {
            guard last.position != position else { return }
        } else if position == nil {
            return
        }
        track.append(.init(at: t, position: position))
        if track.count > Self.maximumPoints { track.removeFirst(track.count - Self.maximumPoints) }
        points[id] = track
    }

    /// A presence change: an entry opens a stay, an exit closes it; when scanning stops, every open stay ends
    /// (nobody can tell who is still there).
    mutating func presence(_ change: PresenceChangeEvent, at t: Date) {
        roll(to: t)
        switch change.kind {
        case .entered:
            guard let region = change.region else { return }
            labels[region] = change.userName ?? change.deviceModel ?? region
            var track = stays[region] ?? []
            guard track.last.map({ $0.until != nil }) ?? true else { return }
            track.append(.init(from: t, until: nil))
            if track.count > Self.maximumStays { track.removeFirst(track.count - Self.maximumStays) }
            stays[region] = track
        case .exited:
            guard let region = change.region else { return }
            close(region, at: t)
        case .status:
            guard change.status != .scanning else { return }
            for region in stays.keys { close(region, at: t) }
        case .proximityChanged:
            return
        }
    }

    private mutating func close(_ region: String, at t: Date) {
        guard var track = stays[region], let last = track.indices.last, track[last].until == nil else { return }
        track[last].until = t
        stays[region] = track
    }

    /// A new day: yesterday's points and stays go, except what still holds at midnight (the position then, the
    /// stays still open), which starts today's. Returns the day's first instant.
    @discardableResult
    private mutating func roll(to t: Date) -> Date {
        if let day, t < day.next { return day.start }
        let zone = day?.zone ?? TimeZone(identifier: timeZone) ?? TimeZone(secondsFromGMT: 0)!
        let first = day == nil
        let (start, next) = Self.bounds(of: first ? min(t, startedAt) : t, in: zone)
        day = (zone, start, next)
        if first { return roll(to: t) }  // the daemon started on an earlier day than this change
        for (id, track) in points {
            var today = Array(track.drop { $0.at < start })
            if let before = track.last(where: { $0.at < start }), today.first?.at != start, before.position != nil {
                today.insert(.init(at: start, position: before.position), at: 0)
            }
            points[id] = today
        }
        for (region, track) in stays {
            stays[region] = track.compactMap { stay in
                if let until = stay.until, until < start { return nil }
                return stay.from < start ? .init(from: start, until: stay.until) : stay
            }
        }
        return start
    }

    /// Today until `now`, for the curtains `curtainIDs` (in that order).
    mutating func timeline(now: Date, timeZone: String, curtainIDs: [String]) -> Timeline {
        let from = max(roll(to: now), startedAt)
        let curtains = curtainIDs.map { Timeline.CurtainTrack(id: $0, points: points[$0] ?? []) }
        let presence = stays.keys.sorted().compactMap { region -> Timeline.PresenceTrack? in
            guard let track = stays[region], !track.isEmpty else { return nil }
            return Timeline.PresenceTrack(region: region, label: labels[region] ?? region, stays: track)
        }
        return Timeline(from: from, until: now, timeZone: timeZone, curtains: curtains, presence: presence)
    }
}
