import XCTest

@testable import CastProtocol

final class PairingAttemptLimiterTests: XCTestCase {
  private let start = ContinuousClock.now

  private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

  func testAFreshLimiterAllowsAnAttempt() {
    var limiter = PairingAttemptLimiter()
    XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
  }

  func testWrongPINsBackOffIncreasinglyThenLockFor60Seconds() {
    var limiter = PairingAttemptLimiter()
    var now = 0.0
    for (failure, wait) in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0)] {
      XCTAssertEqual(limiter.beginAttempt(now: at(now)), .allowed, "attempt \(failure)")
      XCTAssertEqual(limiter.recordFailure(now: at(now + 0.5)), .backingOff(retryAfter: .seconds(wait)))
      XCTAssertEqual(limiter.consecutiveFailures, failure)
      // Just before the wait ends: refused, and refusing does not extend the wait.
      let refused = limiter.beginAttempt(now: at(now + 0.5 + wait - 0.1))
      XCTAssertEqual(refused, .backingOff(retryAfter: .milliseconds(100)))
      XCTAssertEqual(refused.retryAfterSeconds, 1)
      XCTAssertEqual(refused.failureReason, .backingOff)
      now += 0.5 + wait
    }
    XCTAssertEqual(limiter.beginAttempt(now: at(now)), .allowed)
    XCTAssertEqual(limiter.recordFailure(now: at(now)), .locked(retryAfter: .seconds(60)))
    XCTAssertEqual(limiter.decision(now: at(now + 59)), .locked(retryAfter: .seconds(1)))
    XCTAssertEqual(limiter.decision(now: at(now + 59)).retryAfterSeconds, 1)
    XCTAssertEqual(limiter.decision(now: at(now + 59)).failureReason, .locked)
    XCTAssertEqual(limiter.beginAttempt(now: at(now + 30)), .locked(retryAfter: .seconds(30)))
    XCTAssertEqual(limiter.beginAttempt(now: at(now + 60)), .allowed)
    // Still in a row: the 6th wrong PIN closes pairing again for 60 s.
    XCTAssertEqual(limiter.recordFailure(now: at(now + 61)), .locked(retryAfter: .seconds(60)))
    XCTAssertEqual(limiter.consecutiveFailures, 6)
  }

  func testSuccessResetsTheCount() {
    var limiter = PairingAttemptLimiter()
    for round in 0..<4 {
      _ = limiter.beginAttempt(now: at(Double(round) * 100))
      limiter.recordFailure(now: at(Double(round) * 100))
    }
    XCTAssertEqual(limiter.consecutiveFailures, 4)
    XCTAssertEqual(limiter.beginAttempt(now: at(1000)), .allowed)
    limiter.recordSuccess()
    XCTAssertEqual(limiter, PairingAttemptLimiter())
    XCTAssertEqual(limiter.beginAttempt(now: at(1000)), .allowed)
    XCTAssertEqual(limiter.recordFailure(now: at(1000)), .backingOff(retryAfter: .seconds(1)))
  }

  func testOnlyOneAttemptAtATime() {
    var limiter = PairingAttemptLimiter()
    XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
    let busy = limiter.beginAttempt(now: at(10))
    XCTAssertEqual(busy, .busy(retryAfter: .seconds(110)))
    XCTAssertEqual(busy.failureReason, .busy)
    limiter.abandonAttempt()
    XCTAssertEqual(limiter.beginAttempt(now: at(11)), .allowed)
    XCTAssertEqual(limiter.consecutiveFailures, 0, "an abandoned attempt is no wrong PIN")
  }

  func testAnUnfinishedAttemptStopsBlockingAfterTheTimeout() {
    var limiter = PairingAttemptLimiter()
    XCTAssertEqual(limiter.beginAttempt(now: at(0)), .allowed)
    XCTAssertEqual(limiter.beginAttempt(now: at(119.9)), .busy(retryAfter: .milliseconds(100)))
    XCTAssertEqual(limiter.beginAttempt(now: at(120)), .allowed)
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
