// PairingAttemptLimiter: "every attempt that does not pair is a failure, failures back off, `attemptLimit` of them
// in a row close pairing until the operator reopens it", driven by a receiver that keeps its contract
// (record*/abandon only for an attempt it began) with a clock that moves forward by input-chosen steps.
//
// Input: one byte per operation: low 3 bits = op (0-1 advance the clock by the next byte × 10 ms or × 1 s,
// 2-3 begin, 4 wrong PIN, 5 right PIN, 6 abandon, 7 query, or with the high bit set: the operator reopens). The
// first byte, if any, chooses the attempt limit (1...10).
//
// Invariants: at most `attemptLimit` attempts begin between a success (or a reopening) and the next one, whatever
// the pace: the guesser's budget; at most one attempt runs at a time (within attemptTimeout); an attempt left
// unfinished is a failure; no attempt starts before the backoff of the last failure ends; a refusal carries a
// reason and a wait of 1...60 s, or none when pairing is closed; `decision(now:)` changes nothing; a right PIN
// clears the count.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var reader = ByteReader(fuzzInput(data, size))
    let start = ContinuousClock.now
    var elapsed: Duration = .zero
    let limit = reader.isAtEnd ? PairingAttemptLimiter.defaultAttemptLimit : 1 + Int(reader.byte()) % 10
    var limiter = PairingAttemptLimiter(attemptLimit: limit)
    var attemptBegan: Duration?  // our own attempt in progress
    var closedUntil: Duration = .zero  // no attempt may start before this (from the failures we recorded)
    var failuresInARow = 0
    var attemptsSinceSuccess = 0

    func check(_ decision: PairingAttemptLimiter.Decision, _ what: String) {
        switch decision {
        case .allowed:
            invariant(
                decision.failureReason == nil && decision.retryAfterSeconds == nil, "\(what): allowed with a reason")
        case .closed:
            invariant(decision.failureReason == .locked && decision.retryAfterSeconds == nil, "\(what): closed")
            invariant(failuresInARow >= limit, "\(what): closed after \(failuresInARow) of \(limit)")
        case .backingOff, .busy:
            invariant(decision.failureReason != nil, "\(what): refusal without a reason")
            let seconds = decision.retryAfterSeconds ?? 0
            invariant((1...60).contains(seconds), "\(what): retryAfter \(seconds) s")
        }
    }

    func failed(at time: Duration) {
        failuresInARow += 1
        closedUntil = time + PairingAttemptLimiter.backoff[min(failuresInARow, PairingAttemptLimiter.backoff.count) - 1]
    }

    while !reader.isAtEnd {
        let byte = reader.byte()
        let op = byte & 0x07
        let now = start + elapsed
        switch op {
        case 0: elapsed += .milliseconds(Int(reader.byte()) * 10)
        case 1: elapsed += .seconds(Int(reader.byte()))
        case 2, 3:
            let before = limiter
            var expired = false
            if let began = attemptBegan, elapsed >= began + PairingAttemptLimiter.attemptTimeout {
                attemptBegan = nil
                expired = true
                failed(at: began + PairingAttemptLimiter.attemptTimeout)
            }
            let decision = limiter.beginAttempt(now: now)
            check(decision, "begin at \(elapsed)")
            invariant(limiter.consecutiveFailures == failuresInARow, "count \(limiter.consecutiveFailures)")
            if decision == .allowed {
                invariant(attemptBegan == nil, "two attempts at once")
                invariant(elapsed >= closedUntil, "attempt allowed at \(elapsed), closed until \(closedUntil)")
                attemptBegan = elapsed
                invariant(limiter.isOpen(attempt: limiter.attemptNumber), "the attempt just begun is not open")
                invariant(!limiter.isOpen(attempt: limiter.attemptNumber - 1), "an earlier attempt is still open")
                attemptsSinceSuccess += 1
                invariant(attemptsSinceSuccess <= limit, "\(attemptsSinceSuccess) attempts, limit \(limit)")
            } else if !expired {
                invariant(limiter == before, "a refused begin changed the limiter")
            }
        case 4, 6:
            guard attemptBegan != nil else { continue }
            attemptBegan = nil
            failed(at: elapsed)
            if op == 4 {
                check(limiter.recordFailure(now: now), "wrong PIN at \(elapsed)")
            } else {
                limiter.abandonAttempt(now: now)
            }
            invariant(limiter.consecutiveFailures == failuresInARow, "count \(limiter.consecutiveFailures)")
            let expected: PairingAttemptLimiter.Decision =
                failuresInARow >= limit ? .closed : .backingOff(retryAfter: closedUntil - elapsed)
            let decision = limiter.decision(now: now)
            invariant(decision == expected, "\(failuresInARow) failures: \(decision)")
        case 5:
            guard attemptBegan != nil else { continue }
            attemptBegan = nil
            failuresInARow = 0
            attemptsSinceSuccess = 0
            limiter.recordSuccess()
            invariant(limiter.consecutiveFailures == 0, "a right PIN kept the count")
            invariant(limiter.decision(now: now) == .allowed, "not allowed after a right PIN")
            closedUntil = .zero
        default:
            if byte & 0x80 != 0 {
                limiter.reopen()
                failuresInARow = 0
                attemptsSinceSuccess = attemptBegan == nil ? 0 : 1
                closedUntil = .zero
                continue
            }
            let before = limiter
            check(limiter.decision(now: now), "query at \(elapsed)")
            invariant(limiter == before, "decision(now:) changed the limiter")
        }
    }
    return 0
}
