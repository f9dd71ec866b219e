// PairingAttemptLimiter: the "wrong PINs back off, 5 in a row close pairing for 60 s" rule, driven by a
// receiver that keeps its contract (record*/abandon only for an attempt it began) with a clock that moves
// forward by input-chosen steps.
//
// Input: one byte per operation: low 3 bits = op (0-1 advance the clock by the next byte × 10 ms or × 1 s,
// 2-3 begin, 4 wrong PIN, 5 right PIN, 6 abandon, 7 query), high bits unused.
//
// Invariants: at most one attempt runs at a time (within attemptTimeout); after the 5th wrong PIN in a
// row no attempt starts for 60 s, after a smaller number none for the backoff; a refusal carries a reason
// and a wait of 1...120 s; `decision(now:)` changes nothing; a right PIN clears the count.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var reader = ByteReader(fuzzInput(data, size))
    let start = ContinuousClock.now
    var elapsed: Duration = .zero
    var limiter = PairingAttemptLimiter()
    var attemptBegan: Duration?  // our own attempt in progress
    var closedUntil: Duration = .zero  // no attempt may start before this (from the failures we recorded)
    var failuresInARow = 0

    func check(_ decision: PairingAttemptLimiter.Decision, _ what: String) {
        if decision == .allowed {
            invariant(decision.failureReason == nil && decision.retryAfterSeconds == nil, "\(what): allowed with a reason")
        } else {
            invariant(decision.failureReason != nil, "\(what): refusal without a reason")
            let seconds = decision.retryAfterSeconds ?? 0
            invariant((1...120).contains(seconds), "\(what): retryAfter \(seconds) s")
        }
    }

    while !reader.isAtEnd {
        let op = reader.byte() & 0x07
        let now = start + elapsed
        switch op {
        case 0: elapsed += .milliseconds(Int(reader.byte()) * 10)
        case 1: elapsed += .seconds(Int(reader.byte()))
        case 2, 3:
            let before = limiter
            let decision = limiter.beginAttempt(now: now)
            check(decision, "begin at \(elapsed)")
            if decision == .allowed {
                if let began = attemptBegan {
                    invariant(elapsed >= began + PairingAttemptLimiter.attemptTimeout, "two attempts at once: \(began) and \(elapsed)")
                }
                invariant(elapsed >= closedUntil, "attempt allowed at \(elapsed), closed until \(closedUntil)")
                attemptBegan = elapsed
            } else {
                invariant(limiter == before, "a refused begin changed the limiter")
                if case .locked = decision { invariant(failuresInARow >= PairingAttemptLimiter.lockoutThreshold, "locked after \(failuresInARow)") }
            }
        case 4:
            guard attemptBegan != nil else { continue }
            attemptBegan = nil
            failuresInARow += 1
            let decision = limiter.recordFailure(now: now)
            check(decision, "wrong PIN at \(elapsed)")
            invariant(limiter.consecutiveFailures == failuresInARow, "count \(limiter.consecutiveFailures), expected \(failuresInARow)")
            if failuresInARow >= PairingAttemptLimiter.lockoutThreshold {
                invariant(decision == .locked(retryAfter: PairingAttemptLimiter.lockoutDuration), "\(failuresInARow) wrong: \(decision)")
                closedUntil = elapsed + PairingAttemptLimiter.lockoutDuration
            } else {
                let wait = PairingAttemptLimiter.backoff[failuresInARow - 1]
                invariant(decision == .backingOff(retryAfter: wait), "\(failuresInARow) wrong: \(decision)")
                closedUntil = elapsed + wait
            }
        case 5:
            guard attemptBegan != nil else { continue }
            attemptBegan = nil
            failuresInARow = 0
            limiter.recordSuccess()
            invariant(limiter.consecutiveFailures == 0, "a right PIN kept the count")
            invariant(limiter.decision(now: now) == .allowed, "not allowed after a right PIN")
            closedUntil = .zero
        case 6:
            guard attemptBegan != nil else { continue }
            attemptBegan = nil
            limiter.abandonAttempt()
        default:
            let before = limiter
            check(limiter.decision(now: now), "query at \(elapsed)")
            invariant(limiter == before, "decision(now:) changed the limiter")
        }
    }
    return 0
}
