import XCTest

@testable import CastProtocol

final class PairingAttemptLimiterTests: XCTestCase {
    private let start = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    func testAFreshLimiterAllowsAnAttempt() {
        var limiter = PairingAttemptLimiter()
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
    }

    func testFailuresBackOffIncreasinglyThenCloseUntilTheOperatorReopens() {
        var limiter = PairingAttemptLimiter()
        var now = 0.0
        let waits = [1.0, 2, 4, 8, 16, 32, 60, 60, 60]
        for (index, wait) in waits.enumerated() {
            XCTAssertEqual(limiter.beginAttempt(now: at(now)), .allowed, "attempt \(index + 1)")
            XCTAssertEqual(limiter.recordFailure(now: at(now + 0.5)), .backingOff(retryAfter: .seconds(wait)))
            XCTAssertEqual(limiter.consecutiveFailures, index + 1)
            // Just before the wait ends: refused, and refusing does not extend the wait.
            let refused = limiter.beginAttempt(now: at(now + 0.5 + wait - 0.1))
            XCTAssertEqual(refused, .backingOff(retryAfter: .milliseconds(100)))
            XCTAssertEqual(refused.retryAfterSeconds, 1)
            XCTAssertEqual(refused.failureReason, .backingOff)
            now += 0.5 + wait
        }
        // The 10th failure in a row closes pairing: no wait ends it, only the operator.
        XCTAssertEqual(limiter.beginAttempt(now: at(now)), .allowed)
        XCTAssertEqual(limiter.recordFailure(now: at(now)), .closed)
        XCTAssertTrue(limiter.isClosed)
        XCTAssertEqual(limiter.beginAttempt(now: at(now + 86_400 * 365)), .closed)
        XCTAssertNil(PairingAttemptLimiter.Decision.closed.retryAfterSeconds)
        XCTAssertEqual(PairingAttemptLimiter.Decision.closed.failureReason, .locked)
        limiter.reopen()
        XCTAssertEqual(limiter.beginAttempt(now: at(now + 1)), .allowed)
        XCTAssertEqual(limiter.recordFailure(now: at(now + 2)), .backingOff(retryAfter: .seconds(1)))
    }

    /// The design's bound (docs/design.md, decision 3): a script that guesses a fresh 4-digit PIN at every attempt pairs
    /// with a chance of at most 0.1 % before pairing closes, however long it has (a day or a year): the limiter lets
    /// no more than `attemptLimit` attempts fail in a row, whatever their pace.
    func testAGuessersChanceBeforePairingClosesIsAtMostOneInAThousand() {
        var limiter = PairingAttemptLimiter()
        var now = 0.0
        var guesses = 0
        // A script that tries as soon as it may, abandoning half its attempts, for a year.
        while now < 86_400 * 365 {
            switch limiter.beginAttempt(now: at(now)) {
            case .allowed:
                guesses += 1
                if guesses % 2 == 0 {
                    limiter.recordFailure(now: at(now))
                } else {
                    limiter.abandonAttempt(now: at(now))
                }
                now += 0.01
            case .backingOff(let wait), .busy(let wait):
                now += Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
            case .closed:
                now = .infinity
            }
        }
        XCTAssertEqual(guesses, PairingAttemptLimiter.defaultAttemptLimit)
        let chance = PairingAttemptLimiter.chanceOfGuessing(digits: 4, attempts: guesses)
        print(String(format: "a guesser's chance with %d attempts at a 4-digit PIN: %.4f %%", guesses, chance * 100))
        XCTAssertLessThanOrEqual(chance, 0.001)
        // Before this rule (5 wrong PINs, then one try a minute for ever, abandoned attempts free): about 13 % a day.
        let before = PairingAttemptLimiter.chanceOfGuessing(digits: 4, attempts: 4 + 86_400 / 60)
        XCTAssertEqual(before, 0.134, accuracy: 0.001)
    }

    func testAnAbandonedAttemptIsAFailure() {
        var limiter = PairingAttemptLimiter()
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
        limiter.abandonAttempt(now: at(3))
        XCTAssertEqual(limiter.consecutiveFailures, 1)
        XCTAssertEqual(limiter.beginAttempt(now: at(3.5)), .backingOff(retryAfter: .milliseconds(500)))
        XCTAssertEqual(limiter.beginAttempt(now: at(4)), .allowed)
        limiter.abandonAttempt(now: at(4))
        XCTAssertEqual(limiter.beginAttempt(now: at(5)), .backingOff(retryAfter: .seconds(1)), "the wait grows")
        // Abandoning when nothing is open changes nothing.
        let before = limiter
        limiter.abandonAttempt(now: at(5))
        XCTAssertEqual(limiter, before)
    }

    func testTheReceiversOwnFailureCountsNeitherWay() {
        var limiter = PairingAttemptLimiter()
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
        limiter.cancelAttempt()
        XCTAssertEqual(limiter.consecutiveFailures, 0)
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
    }

    func testSuccessResetsTheCountButKeepsTheLimit() {
        var limiter = PairingAttemptLimiter(attemptLimit: 3)
        for round in 0..<2 {
            _ = limiter.beginAttempt(now: at(Double(round) * 100))
            limiter.recordFailure(now: at(Double(round) * 100))
        }
        XCTAssertEqual(limiter.consecutiveFailures, 2)
        XCTAssertEqual(limiter.beginAttempt(now: at(1000)), .allowed)
        limiter.recordSuccess()
        XCTAssertEqual(limiter.consecutiveFailures, 0)
        XCTAssertEqual(limiter.decision(now: at(1000)), .allowed)
        for round in 0..<3 {
            XCTAssertEqual(limiter.beginAttempt(now: at(2000 + Double(round) * 100)), .allowed)
            limiter.recordFailure(now: at(2000 + Double(round) * 100))
        }
        XCTAssertEqual(limiter.decision(now: at(3000)), .closed)
    }

    func testOnlyOneAttemptAtATime() {
        var limiter = PairingAttemptLimiter()
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
        let busy = limiter.beginAttempt(now: at(10))
        XCTAssertEqual(busy, .busy(retryAfter: .seconds(50)))
        XCTAssertEqual(busy.failureReason, .busy)
    }

    /// One `pairingStart` cannot hold the only attempt over and over: an attempt that never finishes times out after
    /// 60 s as a failure, and the same holder must then wait before it may hold it again, longer each time, until
    /// pairing closes.
    func testAnAttemptHeldWithoutProgressTimesOutAsAFailure() {
        var limiter = PairingAttemptLimiter()
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
        XCTAssertEqual(limiter.beginAttempt(now: at(59.9)), .busy(retryAfter: .milliseconds(100)))
        // At 60 s the attempt is over, counted, and its backoff (1 s) runs from then.
        XCTAssertEqual(limiter.beginAttempt(now: at(60)), .backingOff(retryAfter: .seconds(1)))
        XCTAssertEqual(limiter.consecutiveFailures, 1)
        var now = 61.0
        var holds = 1
        while limiter.beginAttempt(now: at(now)) == .allowed {
            holds += 1
            now += 60  // held to the end of its time, never finished
            if case .backingOff(let wait) = limiter.beginAttempt(now: at(now)) {
                now += Double(wait.components.seconds)
            }
        }
        XCTAssertEqual(holds, PairingAttemptLimiter.defaultAttemptLimit)
        XCTAssertEqual(limiter.decision(now: at(now)), .closed)
    }

    /// The connection of an attempt that timed out ends a moment later: by then the next attempt may have begun, and
    /// that end must neither count again nor end the new attempt.
    func testAnAttemptIsKnownByItsNumber() {
        var limiter = PairingAttemptLimiter()
        XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
        let first = limiter.attemptNumber
        XCTAssertTrue(limiter.isOpen(attempt: first))
        XCTAssertEqual(limiter.beginAttempt(now: at(61)), .allowed, "timed out at 60 s, its 1 s backoff over")
        let second = limiter.attemptNumber
        XCTAssertNotEqual(first, second)
        XCTAssertFalse(limiter.isOpen(attempt: first))
        XCTAssertTrue(limiter.isOpen(attempt: second))
        XCTAssertEqual(limiter.consecutiveFailures, 1)
        limiter.recordSuccess()
        XCTAssertFalse(limiter.isOpen(attempt: second))
        XCTAssertEqual(limiter.attemptNumber, second, "numbers are not reused after a success")
    }

    func testDecisionDoesNotChangeTheLimiter() {
        var limiter = PairingAttemptLimiter()
        _ = limiter.beginAttempt(now: at(0))
        limiter.recordFailure(now: at(0))
        let before = limiter
        _ = limiter.decision(now: at(0.5))
        _ = limiter.beginAttempt(now: at(0.5))
        XCTAssertEqual(limiter, before)
    }
}
