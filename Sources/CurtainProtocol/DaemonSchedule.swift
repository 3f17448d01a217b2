/// The schedule kept by the daemon for curtains that keep none (``CurtainProfile/keepsSchedule`` false): when the
/// next enabled time comes, and which command it fires.
extension CurtainSchedule {
    /// The next enabled open or close strictly after `secondsOfDay` (local time, 0..<86 400): seconds until it and
    /// the command to send. Equal times fire open. Nil when both are disabled.
    public func nextFiring(afterSecondsOfDay now: Double) -> (delay: Double, command: CurtainCommand)? {
        var best: (delay: Double, command: CurtainCommand)?
        for (enabled, time, command) in [(openEnabled, openTime, CurtainCommand.open),
                                         (closeEnabled, closeTime, CurtainCommand.close)] where enabled {
            var delay = Double(time.minutesSinceMidnight * 60) - now
            if delay <= 0 { delay += 86_400 }
            if best == nil || delay < best!.delay { best = (delay, command) }
        }
        return best
    }
}
