import CurtainProtocol
import Foundation
import RoomBridgeCore
import RoomBridgeInterfaces
import Synchronization
import Testing
import Varlink

/// `io.roombridge.Curtain` with a recording controller in place of the BlueZ client.
@Suite struct CurtainInterfaceTests {
    final class Recorder: CurtainControlling {
        let performed = Mutex<[(request: CurtainControlRequest, curtain: String)]>([])
        let failure: CurtainControlError?
        /// The curtains that fail with `failure` (nil: every one).
        let failing: Set<String>?
        init(failing failure: CurtainControlError? = nil, only failing: Set<String>? = nil) {
            self.failure = failure
            self.failing = failing
        }

        func perform(_ request: CurtainControlRequest, on curtain: String) async throws(CurtainControlError) {
            performed.withLock { $0.append((request, curtain)) }
            if let failure, failing?.contains(curtain) ?? true { throw failure }
        }
        var requests: [CurtainControlRequest] { performed.withLock { $0.map(\.request) } }
        /// The curtains each request went to, sorted (calls to several run at once).
        var curtains: [String] { performed.withLock { $0.map(\.curtain) }.sorted() }
    }

    final class Sink: VarlinkReplySink {
        let replies = Mutex<[[String: JSONValue]]>([])
        func reply(_ parameters: [String: JSONValue], continues: Bool) async throws {
            replies.withLock { $0.append(parameters) }
        }
    }

    static let root = VarlinkCallContext(peer: PeerCredentials(pid: 1, uid: 0, gid: 0))
    static let stranger = VarlinkCallContext(peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000))

    func make(_ controller: (any CurtainControlling)?, curtains: [String]? = nil) async -> (CurtainInterface, SystemState) {
        let state = SystemState(curtain: CurtainState(connection: .connected))
        if let curtains { await state.declareCurtains(curtains) }
        return (CurtainInterface(state: state, controller: controller, authorizer: Authorizer(groupName: "roombridge", gid: 900)),
                state)
    }

    /// Calls a method; returns the reply or the Varlink error.
    func call(_ iface: CurtainInterface, _ method: String, _ parameters: [String: JSONValue] = [:],
              context: VarlinkCallContext = root) async throws -> Result<[String: JSONValue], VarlinkError> {
        let sink = Sink()
        do {
            try await iface.handle(VarlinkCall(method: "io.roombridge.Curtain." + method, parameters: parameters),
                                   context: context, replies: sink)
        } catch let e as VarlinkError {
            return .failure(e)
        }
        return .success(sink.replies.withLock { $0.last ?? [:] })
    }

    @Test func idlParsesAndDeclaresEveryMethodAndError() throws {
        let idl = try VarlinkInterfaceDefinition(parsing: CurtainInterface.idl)
        #expect(idl.name == "io.roombridge.Curtain")
        for method in idl.methods.values { #expect(method.input.contains { $0.name == "name" }, "\(method.name)") }
        #expect(Set(idl.methods.keys) == ["GetState", "Open", "Close", "Stop", "MoveTo", "SetSchedule", "Sync", "Reconnect"])
        for reason in CurtainControlError.Reason.allCases {
            let name = CurtainControlError(reason, "x").varlinkError.name
            #expect(name.hasPrefix("io.roombridge.Curtain."))
            #expect(idl.errors[String(name.dropFirst("io.roombridge.Curtain.".count))] != nil)
        }
        let stateIDL = try VarlinkInterfaceDefinition(parsing: StateInterface.idl)
        #expect(stateIDL.types["Curtain"] == idl.types["Curtain"])
    }

    @Test func commandsReachTheControllerAndRecordTheRequest() async throws {
        let recorder = Recorder()
        let (iface, state) = await make(recorder)
        #expect(try await call(iface, "Open").get() == [:])
        #expect(try await call(iface, "MoveTo", ["position": .int(40)]).get() == [:])
        _ = try await call(iface, "SetSchedule", ["open": .string("07:30"), "close": .string("21:15"),
                                                  "openEnabled": .bool(true), "closeEnabled": .bool(false)]).get()
        _ = try await call(iface, "Reconnect").get()
        let open = try CurtainTime(hour: 7, minute: 30), close = try CurtainTime(hour: 21, minute: 15)
        #expect(recorder.requests == [.open, .moveTo(40),
                                      .setSchedule(open: open, openEnabled: true, close: close, closeEnabled: false),
                                      .reconnect])
        let curtain = await state.curtainState()
        #expect(curtain.lastRequest?.kind == .reconnect)
        #expect(await state.snapshot().counters.curtainRequests == 4)
    }

    @Test(arguments: [
        ("MoveTo", ["position": JSONValue.int(101)], "position"),
        ("MoveTo", ["position": JSONValue.int(-5)], "position"),
        ("MoveTo", ["position": JSONValue.string("40")], "position"),
        ("MoveTo", [:], "position"),
        ("SetSchedule", ["open": .string("24:00"), "close": .string("21:00"), "openEnabled": .bool(true), "closeEnabled": .bool(true)], "open"),
        ("SetSchedule", ["open": .string("07:00"), "close": .string("7:5"), "openEnabled": .bool(true), "closeEnabled": .bool(true)], "close"),
        ("SetSchedule", ["open": .string("07:00"), "close": .string("21:00"), "openEnabled": .bool(true)], "closeEnabled"),
    ])
    func badParametersAreRefusedBeforeTheController(method: String, parameters: [String: JSONValue], parameter: String) async throws {
        let recorder = Recorder()
        let (iface, state) = await make(recorder)
        let result = try await call(iface, method, parameters)
        guard case .failure(let e) = result else {
            Issue.record("accepted \(method) \(parameters)")
            return
        }
        #expect(e.name == "io.roombridge.Curtain.InvalidParameter")
        #expect(e.parameters["parameter"]?.stringValue == parameter)
        #expect(e.parameters["message"]?.stringValue?.isEmpty == false)
        #expect(recorder.requests.isEmpty)
        #expect(await state.curtainState().lastRequest == nil)
    }

    @Test func controllerErrorsBecomeTheirVarlinkErrors() async throws {
        for reason in CurtainControlError.Reason.allCases where reason != .disabled {
            let (iface, _) = await make(Recorder(failing: CurtainControlError(reason, "do this")))
            guard case .failure(let e) = try await call(iface, "Close") else {
                Issue.record("\(reason) not reported")
                continue
            }
            #expect(e.name == CurtainControlError(reason, "").varlinkError.name)
            #expect(e.parameters["message"] == .string("do this"))
        }
        let (iface, _) = await make(Recorder(failing: CurtainControlError(.manualOperationActive, "wall switch")))
        guard case .failure(let e) = try await call(iface, "Stop") else { throw CancellationError() }
        #expect(e.name == "io.roombridge.Curtain.ManualOperationActive")
    }

    @Test func disabledCurtainAndUnauthorisedCallers() async throws {
        let (disabled, _) = await make(nil)
        guard case .failure(let e) = try await call(disabled, "Open") else { throw CancellationError() }
        #expect(e.name == "io.roombridge.Curtain.Disabled")
        #expect(e.parameters["message"]?.stringValue?.contains("curtain.enabled") == true)
        // GetState needs no group and works when disabled.
        let reply = try await call(disabled, "GetState", context: Self.stranger).get()
        #expect(reply["curtain"]?.objectValue?["connection"] == .string("connected"))

        let recorder = Recorder()
        let (iface, state) = await make(recorder)
        guard case .failure(let denied) = try await call(iface, "Open", context: Self.stranger) else { throw CancellationError() }
        #expect(denied.name == "io.roombridge.State.PermissionDenied")
        #expect(recorder.requests.isEmpty)
        #expect(await state.curtainState().lastRequest == nil)
    }

    @Test func oneCurtainNeedsNoNameAndTakesItsOwn() async throws {
        let recorder = Recorder()
        let (iface, _) = await make(recorder)
        _ = try await call(iface, "Open").get()
        _ = try await call(iface, "Stop", ["name": .string("curtain")]).get()
        _ = try await call(iface, "Close", ["name": .string("*")]).get()
        #expect(recorder.performed.withLock { $0.map(\.curtain) } == ["curtain", "curtain", "curtain"])
    }

    @Test func severalCurtainsNeedANameAndSayWhichAreConfigured() async throws {
        let recorder = Recorder()
        let (iface, state) = await make(recorder, curtains: ["left", "right"])
        guard case .failure(let missing) = try await call(iface, "Open") else { throw CancellationError() }
        #expect(missing.name == "io.roombridge.Curtain.InvalidParameter")
        #expect(missing.parameters["parameter"] == .string("name"))
        #expect(missing.parameters["message"]?.stringValue?.contains("2 curtains are configured (left, right)") == true)
        guard case .failure(let unknown) = try await call(iface, "MoveTo", ["position": .int(30), "name": .string("middle")])
        else { throw CancellationError() }
        #expect(unknown.parameters["message"]?.stringValue?.contains("no curtain is named \"middle\"; the configured ones are: left, right") == true)
        #expect(recorder.requests.isEmpty)

        _ = try await call(iface, "MoveTo", ["position": .int(30), "name": .string("right")]).get()
        #expect(recorder.performed.withLock { $0.map(\.curtain) } == ["right"])
        #expect(await state.curtainState("right")?.lastRequest?.position == 30)
        #expect(await state.curtainState("left")?.lastRequest == nil)

        let reply = try await call(iface, "GetState", ["name": .string("right")]).get()
        #expect(reply["curtain"]?.objectValue?["id"] == .string("right"))
        #expect(reply["curtains"]?.arrayValue?.count == 2)
    }

    /// The outcomes of a group reply, as (curtain, outcome, error).
    func outcomes(_ reply: [String: JSONValue]) -> [[String]] {
        (reply["outcomes"]?.arrayValue ?? []).map { o in
            ["curtain", "outcome", "error"].map { o.objectValue?[$0]?.stringValue ?? "-" }
        }
    }

    @Test func starAndAllMoveEveryCurtainAndSayWhatEachDid() async throws {
        let recorder = Recorder()
        let (iface, state) = await make(recorder, curtains: ["left", "right"])
        #expect(outcomes(try await call(iface, "Close", ["name": .string("*")]).get())
                == [["left", "moving", "-"], ["right", "moving", "-"]])
        #expect(recorder.curtains == ["left", "right"])
        #expect(await state.snapshot().curtains.map { $0.lastRequest?.kind } == [.close, .close])
        #expect(outcomes(try await call(iface, "Stop", ["name": .string("all")]).get())
                == [["left", "done", "-"], ["right", "done", "-"]])

        // One curtain's refusal is its outcome; the call itself succeeds, and the other curtain moved.
        let partly = Recorder(failing: CurtainControlError(.notConnected, "the curtain is not connected"), only: ["left"])
        let (both, bothState) = await make(partly, curtains: ["left", "right"])
        let reply = try await call(both, "Open", ["name": .string("*")]).get()
        #expect(outcomes(reply) == [["left", "unreachable", "io.roombridge.Curtain.NotConnected"], ["right", "moving", "-"]])
        #expect(reply["outcomes"]?.arrayValue?.first?.objectValue?["message"] == .string("the curtain is not connected"))
        #expect(partly.curtains == ["left", "right"])
        #expect(await bothState.curtainState("left")?.lastRequest?.refused == "the curtain is not connected")
    }

    @Test func aGroupActsOnItsCurtainsInItsOrderAndListsItsOutcomes() async throws {
        let manual = CurtainControlError(.manualOperationActive, "someone is moving the curtain by hand")
        let recorder = Recorder(failing: manual, only: ["right"])
        let (iface, state) = await make(recorder, curtains: ["left", "middle", "right"])
        await state.declareCurtainGroups([CurtainGroup(name: "window", curtains: ["right", "left"])])
        await state.updateCurtain("left") { $0.battery = 12 }
        let reply = try await call(iface, "MoveTo", ["position": .int(30), "name": .string("window")]).get()
        #expect(outcomes(reply) == [["right", "manual", "io.roombridge.Curtain.ManualOperationActive"],
                                    ["left", "moving", "-"]])
        let left = reply["outcomes"]?.arrayValue?[1].objectValue
        #expect(left?["battery"] == .int(12) && left?["lowBattery"] == .bool(true))
        #expect(recorder.curtains == ["left", "right"], "middle is in no group")

        // A curtain's own name still names the curtain alone, with no outcomes, and fails with its error.
        guard case .failure(let e) = try await call(iface, "Open", ["name": .string("right")]) else { throw CancellationError() }
        #expect(e.name == "io.roombridge.Curtain.ManualOperationActive")
        #expect(try await call(iface, "Open", ["name": .string("left")]).get() == [:])

        // An unknown name lists the groups too; GetState lists them and takes a group's first curtain.
        guard case .failure(let unknown) = try await call(iface, "Open", ["name": .string("door")]) else { throw CancellationError() }
        #expect(unknown.parameters["message"]?.stringValue?.hasSuffix("; the groups: window") == true)
        let got = try await call(iface, "GetState", ["name": .string("window")]).get()
        #expect(got["curtain"]?.objectValue?["id"] == .string("right"))
        #expect(got["groups"] == .array([.object(["name": .string("window"), "curtains": .array([.string("right"), .string("left")])])]))
    }
}
