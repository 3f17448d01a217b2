import Testing
import TestSupport
@testable import BlueZClient

/// The adapter's connection budget: slots up to the limit, the rest in line first come first served, a released slot
/// going to the first in line, a cancelled wait leaving the line, and the holders told when someone waits.
@Suite struct ConnectionBudgetTests {
    @Test func slotsUpToTheLimitThenALineServedInOrder() async throws {
        let budget = ConnectionBudget(limit: 1)
        try await budget.acquire("left")
        try await budget.acquire("left")  // held already: no second slot
        #expect(await budget.holding == ["left"])

        let right = Task { try await budget.acquire("right") }
        try await eventually("right in line") { await budget.waiting == ["right"] }
        let middle = Task { try await budget.acquire("middle") }
        try await eventually("middle in line after right") { await budget.waiting == ["right", "middle"] }
        #expect(await budget.isWanted(by: "left"))

        await budget.release("left")
        try await right.value
        #expect(await budget.holding == ["right"])
        #expect(await budget.waiting == ["middle"])
        await budget.release("right")
        try await middle.value
        #expect(await budget.holding == ["middle"])
        #expect(await budget.waiting.isEmpty)
        #expect(await !budget.isWanted(by: "middle"))
    }

    @Test func aCancelledWaitLeavesTheLineAndHoldsNothing() async throws {
        let budget = ConnectionBudget(limit: 1)
        try await budget.acquire("left")
        let right = Task { try await budget.acquire("right") }
        try await eventually("right in line") { await budget.waiting == ["right"] }
        right.cancel()
        await #expect(throws: CancellationError.self) { try await right.value }
        #expect(await budget.waiting.isEmpty)
        await budget.release("left")
        #expect(await budget.holding.isEmpty)
    }

    @Test func holdersAreToldWhenSomeoneWaits() async throws {
        let budget = ConnectionBudget(limit: 2)
        let told = Counter()
        await budget.onWanted("left") { told.increment() }
        try await budget.acquire("left")
        try await budget.acquire("right")  // a free slot: nobody waits, nobody is told
        #expect(told.value == 0)
        let third = Task { try await budget.acquire("third") }
        try await eventually("left told") { told.value == 1 }
        await budget.release("left")
        try await third.value
        #expect(await budget.holding == ["right", "third"])
    }

    @Test func aLimitBelowOneIsOne() async {
        #expect(ConnectionBudget(limit: 0).limit == 1)
    }
}
