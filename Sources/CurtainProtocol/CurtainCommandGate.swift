/// The client-side decision applied before writing a command.
public enum CurtainCommandGate {
    /// Validates `command`, applies manual priority against the latest STATUS, and returns the bytes to write.
    ///
    /// While `status` says a wall-switch motion is in progress (ST ≠ 0 and FL bit0), OPEN/CLOSE/STOP/MOVE_TO
    /// throw ``CurtainError/manualOperationActive``; SET_SCHEDULE and SYNC are always allowed.
    public static func prepare(_ command: CurtainCommand, status: CurtainStatus?) throws(CurtainError) -> [UInt8] {
        do throws(CurtainCommandError) {
            try command.validate()
        } catch {
            throw .invalidCommand(error)
        }
        if command.drivesMotor, let status, status.isManualMotionActive {
            throw .manualOperationActive
        }
        do throws(CurtainCommandError) {
            return try command.encode()
        } catch {
            throw .invalidCommand(error)
        }
    }
}
