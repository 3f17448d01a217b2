/// Where the daemon keeps the schedule of a curtain that keeps none itself (SwitchBot, AM43), so that
/// it survives a restart. Keyed by the curtain's configured name.
public protocol CurtainScheduleStore: Sendable {
    /// The schedule kept for `curtain`, nil when none was set.
    func keptSchedule(curtain: String) async throws -> CurtainSchedule?
    /// Stores `schedule` for `curtain`, replacing the previous one; durable when it returns.
    func keepSchedule(_ schedule: CurtainSchedule, curtain: String) async throws
}

extension CurtainSchedule {
    /// Minutes after midnight of the opening and closing times, as the stores keep them.
    public var storedMinutes: (open: Int, close: Int) {
        (openTime.hour * 60 + openTime.minute, closeTime.hour * 60 + closeTime.minute)
    }

    /// A schedule read back from a store; nil when a minute count is out of range.
    public init?(storedOpen open: Int, openEnabled: Bool, close: Int, closeEnabled: Bool) {
        guard (0..<1440).contains(open), (0..<1440).contains(close) else { return nil }
        self.init(openTime: CurtainTime(unchecked: open / 60, open % 60), openEnabled: openEnabled,
                  closeTime: CurtainTime(unchecked: close / 60, close % 60), closeEnabled: closeEnabled)
    }
}
