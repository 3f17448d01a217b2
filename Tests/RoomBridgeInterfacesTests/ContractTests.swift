import CurtainProtocol
import Foundation
import Lending
import NDEF
import RoomBridgeAPI
import RoomBridgeCore
import RoomBridgeInterfaces
import Testing
import Varlink

/// Every IDL type of every interface has its Swift type, with the same field names and the same
/// optionality, and every Swift wire type listed here is an IDL type: the two cannot drift.
@Suite struct ContractTests {
    /// The interfaces' descriptions, by interface.
    static var descriptions: [String] { InterfaceIDL.all }

    /// The Swift type of each IDL type, by IDL name (an IDL type shared by several interfaces is one Swift type).
    static var swiftTypes: [String: any Decodable.Type] { [
        "Reader": ReaderStatus.self,
        "TagRecord": TagRecord.self,
        "DeviceTag": DeviceTagRecord.self,
        "Tap": Tap.self,
        "TagRemoval": TagRemoval.self,
        "TagWrite": TagWriteStatus.self,
        "ScheduleEntry": CurtainSchedule.Entry.self,
        "CurtainRequest": CurtainRequest.self,
        "Curtain": CurtainState.self,
        "CurtainOutcome": CurtainOutcome.self,
        "BatteryNotice": BatteryNotice.self,
        "CurtainGroup": CurtainGroup.self,
        "LendingArm": LendingArm.self,
        "Session": LendingArm.self,  // the former name of LendingArm in io.roombridge.Lending
        "LendingOutcome": LendingOutcome.self,
        "Lending": StateSnapshot.LendingState.self,
        "OutboxNotice": OutboxNotice.self,
        "Overdue": OverdueNotice.self,
        "BookingNotice": BookingNotice.self,
        "Booking": Booking.self,
        "Stocktake": Stocktake.self,
        "MonthlyReport": MonthlyLendingReport.self,
        "DeviceCount": MonthlyLendingReport.DeviceCount.self,
        "Holding": MonthlyLendingReport.Holding.self,
        "Borrower": MonthlyLendingReport.Borrower.self,
        "Dashboard": LendingDashboard.self,
        "GroupLoad": LendingDashboard.GroupLoad.self,
        "DayLoad": LendingDashboard.DayLoad.self,
        "IdleDevice": LendingDashboard.IdleDevice.self,
        "StocktakeEntry": StocktakeEntry.self,
        "StocktakeReport": StocktakeReport.self,
        "StocktakeStatus": StocktakeStatus.self,
        "StocktakeNotice": StocktakeNotice.self,
        "Counters": StateSnapshot.Counters.self,
        "PresentBeacon": PresentBeacon.self,
        "PresenceRegion": PresenceRegionState.self,
        "Presence": PresenceState.self,
        "PresenceChange": PresenceChangeEvent.self,
        "Database": DatabaseState.self,
        "State": StateSnapshot.self,
        "Configuration": DaemonSetup.self,
        "Timeline": Timeline.self,
        "TimelinePoint": Timeline.PositionPoint.self,
        "CurtainTrack": Timeline.CurtainTrack.self,
        "Stay": Timeline.Stay.self,
        "PresenceTrack": Timeline.PresenceTrack.self,
        "Rental": Rental.self,
        "Group": DeviceGroup.self,
        "Device": DeviceRecord.self,
        "LogEntry": DeviceLogEntry.self,
        "User": User.self,
        "Badge": Badge.self,
        "TagBinding": TagBinding.self,
        "ImportProblem": ImportProblem.self,
        "TargetCounts": OutboxAPI.TargetCounts.self,
        "Entry": OutboxAPI.Entry.self,
        "DeviceFields": InventoryAPI.DeviceFields.self,
    ] }

    /// IDL types without a Decodable Swift type, and why.
    static let unmapped: [String: String] = [
        // Coded by hand: one payload field per kind (checked by the Watch tests).
        "Event": "one payload per kind",
    ]

    /// Fields the daemon adds to a type's Codable form when it answers, by IDL type.
    static let computed: [String: Set<String>] = [
        "Rental": ["overdue"],  // WireCoding.encode(_:now:)
    ]

    typealias IDLType = (interface: String, name: String, fields: [VarlinkField])

    static func idlTypes() throws -> [IDLType] {
        var types: [IDLType] = []
        for text in descriptions {
            let def = try VarlinkInterfaceDefinition(parsing: text)
            for (name, type) in def.types.sorted(by: { $0.key < $1.key }) {
                guard case .struct(let fields) = type else { continue }
                types.append((def.name, name, fields))
            }
        }
        return types
    }

    /// Every enum value the interfaces declare, a time of day and a UUID: the strings a placeholder may need.
    static func strings(_ types: [IDLType]) -> [String] {
        func values(_ type: VarlinkType) -> [String] {
            switch type {
            case .enum(let v): v
            case .optional(let t), .array(let t), .dictionary(let t): values(t)
            case .struct(let fields): fields.flatMap { values($0.type) }
            default: []
            }
        }
        return ["00:00", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"] + Set(types.flatMap { $0.fields.flatMap { values($0.type) } }).sorted()
    }

    @Test func everyIDLTypeHasItsSwiftTypeWithTheSameFields() throws {
        let types = try Self.idlTypes()
        for (interface, name, fields) in types where Self.unmapped[name] == nil {
            guard let swift = Self.swiftTypes[name] else {
                Issue.record("\(interface).\(name) has no Swift type in ContractTests.swiftTypes")
                continue
            }
            var idl: [String: Bool] = [:]
            for f in fields {
                if case .optional = f.type { idl[f.name] = true } else { idl[f.name] = false }
            }
            for extra in Self.computed[name] ?? [] { idl[extra] = nil }
            let shape: [String: Bool]
            do { shape = try WireShape.of(swift, strings: Self.strings(types)) } catch {
                Issue.record("\(interface).\(name): cannot read the shape of \(swift): \(error)")
                continue
            }
            #expect(shape == idl, "\(interface).\(name) vs \(swift): only in Swift \(shape.filter { idl[$0.key] != $0.value }.sorted { $0.key < $1.key }), only in the IDL \(idl.filter { shape[$0.key] != $0.value }.sorted { $0.key < $1.key })")
        }
    }

    @Test func everySwiftWireTypeIsAnIDLType() throws {
        let names = Set(try Self.idlTypes().map(\.name))
        for name in Self.swiftTypes.keys {
            #expect(names.contains(name), "\(name) is listed as a wire type but no interface declares it")
        }
        for name in Self.unmapped.keys {
            #expect(names.contains(name), "\(name) is listed as unmapped but no interface declares it")
        }
    }

    /// The fields of a list of IDL fields, name → optional.
    static func shape(_ fields: [VarlinkField]) -> [String: Bool] {
        var shape: [String: Bool] = [:]
        for f in fields {
            if case .optional = f.type { shape[f.name] = true } else { shape[f.name] = false }
        }
        return shape
    }

    /// Every method a client calls through `RoomBridgeAPI` is a method of its interface, with the same
    /// parameters and reply fields, and the same optionality.
    @Test func everyClientMethodMatchesItsIDLMethod() throws {
        let types = try Self.idlTypes()
        var methods: [String: VarlinkMethodDefinition] = [:]
        for text in Self.descriptions {
            let def = try VarlinkInterfaceDefinition(parsing: text)
            for (name, method) in def.methods { methods["\(def.name).\(name)"] = method }
        }
        func check<M: VarlinkMethod>(_: M.Type) throws {
            guard let idl = methods[M.name] else {
                Issue.record("\(M.name) is declared in RoomBridgeAPI but no interface has it")
                return
            }
            let parameters = try WireShape.of(M.Parameters.self, strings: Self.strings(types))
            let reply = try WireShape.of(M.Reply.self, strings: Self.strings(types))
            #expect(parameters == Self.shape(idl.input), "\(M.name) parameters: Swift \(parameters.sorted { $0.key < $1.key }), IDL \(Self.shape(idl.input).sorted { $0.key < $1.key })")
            #expect(reply == Self.shape(idl.output), "\(M.name) reply: Swift \(reply.sorted { $0.key < $1.key }), IDL \(Self.shape(idl.output).sorted { $0.key < $1.key })")
        }
        #expect(RoomBridgeAPI.methods.count >= 20)
        for method in RoomBridgeAPI.methods { try check(method) }
    }

    /// The shape reader itself: it sees required and optional keys, and nothing nested.
    @Test func wireShapeReadsKeysAndOptionality() throws {
        #expect(try WireShape.of(LendingArm.self)
                == ["userId": false, "userName": false, "reader": true, "armedAt": false, "expiresAt": false])
    }
}
