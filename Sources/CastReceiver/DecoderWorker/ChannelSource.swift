import CastMedia
import CastProtocol
import Foundation

/// The served media as a worker sees it: each read asks castd for a byte range over the channel (`read`) and waits
/// for the answer (`data` or `readFailed`), which castd reads from the sender's media connection.
///
/// A session's worker keeps several reads in flight (`sessionReadsInFlight`): a read that finds the next ranges not
/// asked for yet asks for them at once, so castd and the sender read and send them while this side takes the last
/// one, instead of a round trip through two processes and the network per range; for a stream, whose next offset is
/// known only from the answer before, the next range is asked for as soon as a read took its bytes (`nextOfStream`).
/// castd answers in order, and every answer is checked against the oldest read in flight (`MediaReadsInFlight`): one
/// out of order, longer than asked, or to no read breaks the channel (the worker stops, castd reports it). An answer is received straight into the
/// waiting read's buffer when it is the one that read waits for and fits, otherwise into one of at most
/// `readsInFlight` buffers of `MediaRead.maximumLength` kept for the next reads (`arrived`); after a seek, answers
/// to the ranges no longer wanted still come and wait there until newer ones push them out.
///
/// Thread-safety: `read` and `seek` come from one thread at a time (the read-ahead's reader, or the thumbnailer's
/// demux); the answers from the worker's channel reader (`destination`/`received`, or `deliver`); `cancel` from any
/// thread. Every `var` but `position` is guarded by `condition`; `position` is only touched by the reading thread.
/// Answer bytes are written outside the lock only into memory that `destination` handed out for them, which nobody
/// else touches until `received` is called: a waiting read does not return while its buffer is being filled.
final class ChannelSource: MediaSource, WorkerDataSink, @unchecked Sendable {
    private let channel: WorkerChannel
    private let media: WorkerStart.Media
    private let condition = NSCondition()
    private var position: Int64 = 0
    private var inFlight: MediaReadsInFlight
    /// Answers no read took yet, oldest first: a slot with the bytes at `offset` (from `start`, `count` of them).
    private var arrived: [(offset: Int64, slot: Slot)] = []
    /// Slots not holding an answer.
    private var spare: [Slot] = []
    private var slotCount = 0
    /// The read waiting for its answer: its offset and where the bytes go.
    private var waiting: (offset: Int64, buffer: UnsafeMutableRawBufferPointer)?
    /// The waiting read's answer: how many bytes were received into its buffer, or castd's failure.
    private var outcome: Result<Int, WorkerFailure>?
    /// Where the answer being received goes: the waiting read's buffer (nil), or a slot.
    private var receiving: (offset: Int64, count: Int, slot: Slot?)?
    private var cancelled = false

    /// Reads in flight for a session's engine (behind its read-ahead): enough for castd and the sender to work on the
    /// next range while this side takes one, each at most `MediaRead.maximumLength`.
    static let sessionReadsInFlight = 4

    /// `readsInFlight` 1 reads one range at a time, nothing ahead (the thumbnailer, which seeks about).
    init(channel: WorkerChannel, media: WorkerStart.Media, readsInFlight: Int = 1) {
        self.channel = channel
        self.media = media
        self.inFlight = MediaReadsInFlight(limit: readsInFlight)
    }

    var size: Int64? { media.size }
    var isSeekable: Bool { media.seekable }
    var nameHint: String? { media.nameHint }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let length = min(buffer.count, MediaRead.maximumLength)
        guard length > 0 else { return 0 }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])
        let position = self.position
        condition.lock()
        defer { condition.unlock() }
        if cancelled { throw WorkerFailure("the read was cancelled") }
        var ask: [MediaRead] = []
        if !isComing(position) {
            // After a seek every place may be taken by reads no longer wanted: their answers make room.
            while inFlight.isFull && !cancelled { condition.wait() }
            if cancelled { throw WorkerFailure("the read was cancelled") }
            let read = MediaRead(offset: position, length: length)
            inFlight.sent(read)
            ask.append(read)
        }
        ask += plannedReads(from: position, length: length)
        waiting = (position, target)
        outcome = nil
        defer {
            waiting = nil
            outcome = nil
        }
        // A buffer being filled is never given back early, even when the read fails or is cancelled.
        var filling: Bool { receiving.map { $0.slot == nil && $0.offset == position } ?? false }
        /// Sends `reads` with the lock let go; a failure is thrown once no answer is being received into `target`.
        func send(_ reads: [MediaRead]) throws {
            condition.unlock()
            var failure: (any Error)?
            do {
                for read in reads { try channel.send(.read(read)) }
            } catch {
                failure = error
            }
            condition.lock()
            if let failure {
                while filling { condition.wait() }
                throw failure
            }
        }
        if !ask.isEmpty { try send(ask) }
        /// Moves on past the `count` bytes taken; a stream's next read is asked for before they are returned.
        func took(_ count: Int) -> Int {
            self.position = position + Int64(count)
            if let next = nextOfStream(after: self.position, length: length, count: count) {
                // A failure to send is the channel's: the reader thread sees it too and cancels, and the next read
                // throws then. These bytes are the caller's all the same.
                _ = try? send([next])
            }
            return count
        }
        while true {
            if !filling {
                if let outcome {
                    return took(try outcome.get())
                }
                if let index = arrivedIndex(at: position) {
                    return took(take(index, into: target))
                }
                if cancelled { throw WorkerFailure("the read was cancelled") }
                // Nothing for `position` is on its way any more: asked again. (Before a read's answer could be
                // pushed out of the slots by later ones while this thread had not run yet, on a loaded machine, and
                // the read waited for ever for an answer castd had sent: a stall that never ended.)
                if !isComing(position) && !inFlight.isFull {
                    let read = MediaRead(offset: position, length: length)
                    inFlight.sent(read)
                    try send([read])
                    continue
                }
            }
            condition.wait()
        }
    }

    /// The read of a stream to send once a read took `count` bytes, up to `offset`: a stream answers with what it
    /// has, so its next offset is known only now, and the read is marked sent at once. Asking before the caller
    /// decodes what it took keeps a read waiting at castd and the sender, so that a stream's next bytes (a pipe's)
    /// come the moment they exist, not after a request's trip through castd. (A mirror session's stream is pushed
    /// instead: `PushedStreamSource`.)
    /// None for a file (`plannedReads` reads it ahead), at the end, or when the bytes there are coming already.
    /// Called locked.
    private func nextOfStream(after offset: Int64, length: Int, count: Int) -> MediaRead? {
        guard !media.seekable, inFlight.limit > 1, count > 0, !cancelled, !isComing(offset), !inFlight.isFull else {
            return nil
        }
        let read = MediaRead(offset: offset, length: length)
        inFlight.sent(read)
        return read
    }

    /// Whether the bytes at `offset` arrived, are being received, or are asked for. Called locked.
    private func isComing(_ offset: Int64) -> Bool {
        arrivedIndex(at: offset) != nil || inFlight.contains(offset: offset) || receiving?.offset == offset
    }

    func seek(to offset: Int64) throws {
        guard media.seekable else { throw WorkerFailure("the media is a stream and cannot seek") }
        position = offset
    }

    func cancel() {
        condition.withLock {
            cancelled = true
            condition.broadcast()
        }
    }

    // MARK: Answers (the channel's reader)

    /// Where the bytes of castd's answer at `offset` go: the waiting read's buffer when it waits for exactly this
    /// answer and it fits, otherwise a slot (the oldest answer nobody took makes room when all are used).
    /// - Throws: when the answer is not the one due (`MediaReadsInFlight.answer`): the channel is broken.
    func destination(offset: Int64, count: Int) throws -> UnsafeMutableRawBufferPointer {
        try condition.withLock {
            precondition(receiving == nil, "one answer at a time")
            do {
                _ = try inFlight.answer(offset: offset, count: count)
            } catch {
                throw WorkerFailure("castd broke the order of answers: \(error)")
            }
            // A place in flight was freed: a read waiting for one may go on.
            condition.broadcast()
            if let waiting, waiting.offset == offset, count <= waiting.buffer.count, outcome == nil {
                receiving = (offset, count, nil)
                return UnsafeMutableRawBufferPointer(rebasing: waiting.buffer[..<count])
            }
            let slot = takeSlot()
            slot.start = 0
            slot.count = count
            receiving = (offset, count, slot)
            return UnsafeMutableRawBufferPointer(rebasing: slot.bytes[..<count])
        }
    }

    /// The bytes `destination` handed out memory for are all there (`complete`), or the channel broke first.
    func received(complete: Bool) {
        condition.withLock {
            guard let answer = receiving else { preconditionFailure("an answer received with no destination") }
            receiving = nil
            condition.broadcast()
            guard complete else {
                if let slot = answer.slot { spare.append(slot) }
                return
            }
            if let slot = answer.slot {
                arrived.append((answer.offset, slot))
            } else {
                outcome = .success(answer.count)
            }
        }
    }

    /// castd's answer as a message (the thumbnail worker's reader decodes whole messages): `data` as if received
    /// through `destination`, `readFailed` answers the oldest read. An answer out of order breaks the read waiting.
    func deliver(_ message: WorkerMessage) {
        switch message {
        case .data(let data):
            do {
                let target = try destination(offset: data.offset, count: data.bytes.count)
                data.bytes.withUnsafeBytes { target.copyMemory(from: $0) }
                received(complete: true)
            } catch {
                fail("\(error)", all: true)
            }
        case .readFailed(let why):
            fail(why, all: false)
        default:
            fail("castd answered a read with \(message.kind)", all: true)
        }
    }

    /// castd's `readFailed`: the oldest read failed. Only the waiting read hears it; a read ahead that failed is
    /// asked again, and fails then, when a reader needs it.
    func failed(_ why: String) throws {
        let known = condition.withLock { () -> Bool in
            guard let read = try? inFlight.fail() else { return false }
            condition.broadcast()
            if let waiting, waiting.offset == read.offset, outcome == nil { outcome = .failure(WorkerFailure(why)) }
            return true
        }
        if !known { throw WorkerFailure("castd failed a read that was not asked for: \(why)") }
    }

    private func fail(_ why: String, all: Bool) {
        if all {
            condition.withLock {
                cancelled = true
                if waiting != nil && outcome == nil { outcome = .failure(WorkerFailure(why)) }
                condition.broadcast()
            }
        } else {
            do { try failed(why) } catch { fail("\(error)", all: true) }
        }
    }

    // MARK: Slots (called locked)

    private func arrivedIndex(at offset: Int64) -> Int? {
        arrived.firstIndex { $0.offset == offset }
    }

    /// Copies the first bytes of the answer at `index` to `target`; the rest stays for the next read.
    private func take(_ index: Int, into target: UnsafeMutableRawBufferPointer) -> Int {
        let (offset, slot) = arrived[index]
        let count = min(slot.count, target.count)
        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: slot.bytes[slot.start..<(slot.start + count)]))
        if count == slot.count {
            arrived.remove(at: index)
            spare.append(slot)
        } else {
            slot.start += count
            slot.count -= count
            arrived[index].offset = offset + Int64(count)
        }
        return count
    }

    private func takeSlot() -> Slot {
        if let slot = spare.popLast() { return slot }
        if slotCount < inFlight.limit {
            slotCount += 1
            return Slot(bytes: .allocate(byteCount: MediaRead.maximumLength, alignment: 16))
        }
        // Every slot holds an answer nobody took: the oldest goes (a read that wants it asks again), but not the one
        // the waiting read wants, which its thread may not have run to take yet.
        precondition(!arrived.isEmpty, "every slot is taken, and none by an answer")
        let oldest = arrived.firstIndex { $0.offset != waiting?.offset } ?? arrived.startIndex
        return arrived.remove(at: oldest).slot
    }

    /// The reads to send for a reader at `offset` (whose own read is on its way or arrived), so that the ranges after
    /// it are on their way too; none for a stream (its next offset is known only from the answer before).
    private func plannedReads(from offset: Int64, length: Int) -> [MediaRead] {
        guard media.seekable, inFlight.limit > 1 else { return [] }
        // The answer being received counts as arrived: its read is no longer in flight.
        var known = arrived.map { (offset: $0.offset, count: $0.slot.count) }
        if let receiving { known.append((receiving.offset, receiving.count)) }
        let planned = inFlight.ahead(
            of: offset, length: length, depth: inFlight.limit, size: media.size, arrived: known)
        for read in planned { inFlight.sent(read) }
        return planned
    }

    /// Memory for one answer, reused.
    private final class Slot {
        let bytes: UnsafeMutableRawBufferPointer
        var start = 0
        var count = 0
        init(bytes: UnsafeMutableRawBufferPointer) { self.bytes = bytes }
        deinit { bytes.deallocate() }
    }
}
