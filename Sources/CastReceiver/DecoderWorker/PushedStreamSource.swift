import CastMedia
import CastProtocol
import Synchronization

/// A live stream (a mirror session's screen) as castd pushes it to the worker: castd sends each piece of the sender's
/// stream the moment it arrives, in order and without being asked (`MediaReadServer.push`), and the thread that
/// decodes receives it from the channel itself, straight into its read's buffer. Neither a request per piece nor a
/// reader thread between the channel and the decoder: one wake-up of the worker per picture, not two (issue 32).
///
/// Rules: the first piece is at offset 0 and each next one starts where the one before ended (anything else breaks
/// the channel); an empty piece is the stream's end; `readFailed` is castd's failure to read the sender. A control
/// that comes between pieces is handed to `onControl` on the reading thread, and the read goes on waiting, unless
/// that cancelled the source (a `stop`): then it returns no bytes. The source never sends a `read`.
///
/// Thread-safety: `read` is called by one thread at a time (the mirror thread); the memory of the read in progress is
/// held by a `PieceTarget` of that read alone, which the channel fills on the same thread (inside `receivePiece`), so
/// the source itself keeps no raw memory. `position` is only moved by the reading thread (atomic only to be
/// `Sendable`); `cancel` may come from any thread: an atomic flag, seen by the read after the next message (castd
/// pushes a piece at least once a second).
final class PushedStreamSource: MediaSource, Sendable {
    private let channel: WorkerChannel
    private let onControl: @Sendable (PlaybackControl.Action) -> Void
    private let cancelled = Atomic(false)
    /// Where the next piece starts: the bytes received so far.
    private let position = Atomic<Int64>(0)

    /// A source of the stream castd pushes on `channel`; `onControl` takes castd's controls.
    init(channel: WorkerChannel, onControl: @escaping @Sendable (PlaybackControl.Action) -> Void) {
        self.channel = channel
        self.onControl = onControl
    }

    var size: Int64? { nil }
    var isSeekable: Bool { false }
    var nameHint: String? { nil }

    /// The next piece castd pushed, whole (`buffer` must hold `MediaRead.maximumLength`: castd's pieces are no
    /// longer); 0 at the stream's end or once cancelled.
    /// - Throws: `WorkerFailure` with castd's reason (`readFailed`), or when the channel closed or broke the rules.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        precondition(buffer.count >= MediaRead.maximumLength, "a pushed piece may be as long as a read")
        let target = PieceTarget(buffer: buffer, position: position.load(ordering: .relaxed))
        while !cancelled.load(ordering: .acquiring) {
            switch try channel.receivePiece(dataInto: target) {
            case .data(_, let count):
                position.store(target.position + Int64(count), ordering: .relaxed)
                return count
            case .closed:
                throw WorkerFailure("castd closed the channel")
            case .message(.control(let control)):
                onControl(control.action)
            case .message(.readFailed(let why)):
                throw WorkerFailure(why)
            case .message(let other):
                throw WorkerFailure("castd sent \(other.kind) on a pushed stream")
            }
        }
        return 0
    }

    func seek(to offset: Int64) throws { throw WorkerFailure("the media is a stream and cannot seek") }

    func cancel() { cancelled.store(true, ordering: .releasing) }
}

/// Where one read's piece goes: that read's buffer, at the stream's position. Used by the reading thread only.
private final class PieceTarget: WorkerDataSink {
    let buffer: UnsafeMutableRawBufferPointer
    let position: Int64

    init(buffer: UnsafeMutableRawBufferPointer, position: Int64) {
        self.buffer = buffer
        self.position = position
    }

    func destination(offset: Int64, count: Int) throws -> UnsafeMutableRawBufferPointer {
        guard offset == position else {
            throw WorkerFailure("castd pushed a piece at \(offset), where the stream is at \(position)")
        }
        guard count <= buffer.count else { throw WorkerFailure("castd pushed a piece of \(count) bytes") }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
    }

    func received(complete: Bool) {}
}
