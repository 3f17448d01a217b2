import Retry
import Testing

@Suite struct BackoffTests {
    @Test func growsAndIsBounded() {
        let b = Backoff(initial: .milliseconds(250), multiplier: 2, maximum: .seconds(2))
        #expect((1...6).map { b.delay(attempt: $0) } ==
                [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2)])
        #expect(b.delay(attempt: 0) == .milliseconds(250))
        #expect(b.delay(attempt: 10_000) == .seconds(2))
    }

    /// Jitter takes the wait into its upper half: 0 halves it, 1 keeps it, and it never passes the maximum.
    @Test func jitterTakesTheWaitIntoItsUpperHalf() {
        let b = Backoff(initial: .seconds(2), multiplier: 2, maximum: .seconds(60))
        #expect(b.delay(attempt: 3, jitter: 0) == .seconds(4))
        #expect(b.delay(attempt: 3, jitter: 0.5) == .seconds(6))
        #expect(b.delay(attempt: 3, jitter: 1) == .seconds(8))
        #expect(b.delay(attempt: 99, jitter: 7) == .seconds(60))
        #expect(b.delay(attempt: 3, jitter: -1) == .seconds(4))
    }
}
