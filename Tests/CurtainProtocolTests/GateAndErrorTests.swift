import Testing
@testable import CurtainProtocol

@Suite struct ManualPriorityTests {
    static let manualOpening = CurtainStatus(motion: .opening, position: 30, target: 100, manual: true)
    static let manualClosing = CurtainStatus(motion: .closing, position: 30, target: 0, manual: true)
    static let manualIdle = CurtainStatus(motion: .idle, position: 30, target: 30, manual: true)
    static let remoteMoving = CurtainStatus(motion: .opening, position: 30, target: 100)
    static let scheduleMoving = CurtainStatus(motion: .closing, position: 30, target: 0, scheduled: true)

    @Test(arguments: [CurtainCommand.open, .close, .stop, .moveTo(40)], [manualOpening, manualClosing])
    func refusesMotorCommandsDuringManualMotion(command: CurtainCommand, status: CurtainStatus) {
        #expect(throws: CurtainError.manualOperationActive) { try CurtainCommandGate.prepare(command, status: status) }
    }

    @Test(arguments: [CurtainCommand.setSchedule(.disabled), .sync])
    func schedulesStillAllowedDuringManualMotion(command: CurtainCommand) throws {
        #expect(try CurtainCommandGate.prepare(command, status: Self.manualOpening) == command.encode())
    }

    @Test(arguments: [CurtainCommand.open, .close, .stop, .moveTo(40)], [manualIdle, remoteMoving, scheduleMoving])
    func acceptedOtherwise(command: CurtainCommand, status: CurtainStatus) throws {
        #expect(try CurtainCommandGate.prepare(command, status: status) == command.encode())
    }

    @Test func acceptedWithNoStatusYet() throws {
        #expect(try CurtainCommandGate.prepare(.open, status: nil) == [0x01])
    }

    @Test func badParametersRefusedFirst() {
        #expect(throws: CurtainError.invalidCommand(.positionOutOfRange(101))) {
            try CurtainCommandGate.prepare(.moveTo(101), status: nil)
        }
        // Parameter errors win over manual priority: the user learns the value is wrong either way.
        #expect(throws: CurtainError.invalidCommand(.positionOutOfRange(-3))) {
            try CurtainCommandGate.prepare(.moveTo(-3), status: Self.manualOpening)
        }
    }
}

@Suite struct BlueZErrorMappingTests {
    @Test(arguments: [
        ("org.bluez.Error.InvalidArguments", "Invalid Length", CurtainError.rejectedByDevice(.invalidLength)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x13", .rejectedByDevice(.outOfRange)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80", .rejectedByDevice(.unknownCommand)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0d", .rejectedByDevice(.invalidLength)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e", .rejectedByDevice(.attError(0x0e))),
        ("org.bluez.Error.Failed", "Not connected", .notConnected),
        ("org.bluez.Error.NotConnected", "Not Connected", .notConnected),
        ("org.bluez.Error.InProgress", "In Progress", .busy("In Progress")),
        ("org.freedesktop.DBus.Error.UnknownObject", "Method \"WriteValue\" with signature \"aya{sv}\" on interface \"org.bluez.GattCharacteristic1\" doesn't exist", .notConnected),
        ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .timeout("Did not receive a reply")),
        ("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided by any .service files", .bluetoothServiceUnavailable),
        ("org.bluez.Error.Failed", "le-connection-abort-by-local", .bluetooth(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")),
        ("org.bluez.Error.InvalidArguments", "Invalid offset", .bluetooth(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset")),
        ("org.bluez.Error.NotPermitted", "Write not permitted", .bluetooth(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")),
    ])
    func maps(name: String, message: String, expected: CurtainError) {
        #expect(CurtainError.fromBlueZ(name: name, message: message) == expected)
    }

    @Test func messagesAreReadable() {
        #expect(CurtainError.manualOperationActive.description.contains("manual operation in progress"))
        #expect(CurtainError.rejectedByDevice(.outOfRange).description.contains("out of range"))
        #expect(CurtainError.rejectedByDevice(.attError(0x0e)).description.contains("0x0e"))
        #expect(CurtainError.notConnected.description.contains("not connected"))
    }
}
