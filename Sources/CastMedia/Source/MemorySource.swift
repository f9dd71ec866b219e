import Synchronization

/// Media held whole in memory, read as any input: a sidecar subtitle file the receiver read before playback, or a
/// picture an AirPlay client sent (castd serves it to its decoder worker like a sender's file).
///
/// Thread-safety: the bytes are immutable; the position and the cancellation are atomics. One reader thread reads and
/// seeks at a time, as `MediaSource` asks; `cancel` may come from any thread.
public final class MemorySource: MediaSource, Sendable {
    /// The media's bytes.
    public let bytes: [UInt8]
    private let position = Atomic(0)
    private let cancelled = Atomic(false)

    /// A source reading `bytes`.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    public var size: Int64? { Int64(bytes.count) }
    public var isSeekable: Bool { true }
    /// None: the bytes say what the media is.
    public var nameHint: String? { nil }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try withBytes(upTo: buffer.count) { part in
            buffer.copyMemory(from: part)
            return part.count
        }
    }

    /// Reads up to `count` bytes at the current position as `read(into:)` does, handing `body` a view of them (valid
    /// only inside `body`); an empty view at the end. Throws once cancelled.
    public func withBytes<Result>(upTo count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        if cancelled.load(ordering: .acquiring) { throw MediaError.other("the read was cancelled") }
        let start = min(position.load(ordering: .relaxed), bytes.count)
        let end = start + min(max(count, 0), bytes.count - start)
        let result = try bytes.withUnsafeBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[start..<end])) }
        position.store(end, ordering: .relaxed)
        return result
    }

    public func seek(to offset: Int64) throws {
        position.store(Int(min(max(offset, 0), Int64(bytes.count))), ordering: .relaxed)
    }

    public func cancel() { cancelled.store(true, ordering: .releasing) }
}
