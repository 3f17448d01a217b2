import Foundation
import Testing
@testable import RoomBridgeCore

/// Several curtains in `SystemState`: each by its name in the snapshot and in Watch events, the single
/// `curtain` field for clients that know one, and curtains added and removed by a reload.
@Suite struct CurtainListStateTests {
    @Test func eachCurtainChangesAloneAndIsReportedByName() async throws {
        let state = SystemState(curtain: CurtainState(connection: .disabled))
        await state.declareCurtains(["right", "left"])
        let sub = await state.subscribe()
        #expect(sub.snapshot.curtains.map(\.id) == ["left", "right"])
        #expect(sub.snapshot.curtains.allSatisfy { $0.connection == .searching })
        await state.updateCurtain("right") { $0.position = 30 }
        await state.recordCurtainRequest(CurtainRequest(kind: .open, at: Date()), for: "left")
        await state.announceCurtainRequests()
        let snapshot = await state.snapshot()
        #expect(snapshot.curtains.map(\.position) == [nil, 30])
        #expect(snapshot.curtains.map { $0.lastRequest?.kind } == [.open, nil])
        // Old clients' single field: the first by name.
        #expect(snapshot.curtain.id == "left")
        #expect(await state.curtainState("right")?.position == 30)
        #expect(await state.curtainState("middle") == nil)

        var iterator = sub.events.makeAsyncIterator()
        guard case .curtain(let first)? = try await iterator.next()?.payload,
              case .curtain(let second)? = try await iterator.next()?.payload else {
            Issue.record("no curtain events")
            return
        }
        #expect(first.id == "right" && first.position == 30)
        #expect(second.id == "left" && second.lastRequest?.kind == .open)
    }

    @Test func aReloadAddsAndRemovesCurtainsAndKeepsTheRest() async throws {
        let state = SystemState()
        #expect(await state.curtainIDs() == ["curtain"])
        await state.updateCurtain { $0.position = 70 }
        await state.declareCurtains(["curtain", "door"])
        #expect(await state.curtainState("curtain")?.position == 70)
        let sub = await state.subscribe()
        await state.declareCurtains(["door"])
        var events = sub.events.makeAsyncIterator()
        guard case .curtain(let removed)? = try await events.next()?.payload else {
            Issue.record("no event for the removed curtain")
            return
        }
        #expect(removed.id == "curtain" && removed.connection == .disabled)
        #expect(await state.snapshot().curtains.map(\.id) == ["door"])
        // A late update from the removed curtain's client changes nothing.
        await state.updateCurtain("curtain") { $0.position = 10 }
        #expect(await state.snapshot().curtains.map(\.id) == ["door"])
        await state.declareCurtains([])
        #expect(await state.snapshot().curtain.connection == .disabled)
    }

    @Test func statusLineNamesEachCurtainWhenThereAreSeveral() async {
        let state = SystemState(curtain: CurtainState(connection: .disabled))
        await state.declareCurtains(["left", "right"])
        await state.updateCurtain("left") { $0.connection = .connected; $0.position = 40 }
        #expect(await state.snapshot().statusLine
                == "no reader configured; curtain left: connected, idle at 40% open; curtain right: searching")
    }

    @Test func snapshotJSONCarriesTheListWithNames() throws {
        var snapshot = StateSnapshot(seq: 0, startedAt: Date(timeIntervalSince1970: 0), timeZone: "UTC", readers: [], lastTap: nil,
                                     tagWrite: nil, curtain: CurtainState(id: "left", connection: .connected),
                                     lending: .init(), counters: .init())
        snapshot.curtains = [CurtainState(id: "left", connection: .connected), CurtainState(id: "right")]
        let json = try #require(String(data: try JSONEncoder().encode(snapshot), encoding: .utf8))
        #expect(json.contains("\"curtains\":[{"))
        #expect(json.contains("\"id\":\"right\""))
        #expect(try JSONDecoder().decode(StateSnapshot.self, from: Data(json.utf8)) == snapshot)
    }
}
