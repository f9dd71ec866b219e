import CastMedia
import CastProtocol
import Foundation
import Glibc

/// A session's thumbnails made in a worker process (decoder isolation on): castd keeps the network, the worker
/// (`ThumbnailWorker`) demuxes, decodes, scales and encodes the PNGs. Started on the session's first thumbnail request,
/// ended with the session. castd numbers the requests on the channel itself and keeps who asked (the connection and
/// its own number), so a worker can only answer what was asked, in order: a part for another request, time or part
/// number breaks the channel's rules. A worker that dies or breaks the rules is killed; every time it had not
/// answered is answered with an error saying so, and the next request starts a new worker. The session's playback
/// (in its own worker, or in castd) goes on.
///
/// Threads, per worker: a reader (the worker's messages; the only thread that kills and reaps it) and, for served
/// media, a server (the worker's reads, from the session's media connection, one at a time).
///
/// Thread-safety: the mutable state is guarded by `condition`; the channel is thread-safe for sending.
final class ThumbnailProcess: SessionThumbnails, @unchecked Sendable {
    // Invariant: the `let`s never change; every `var` (and every `Worker`'s `var`) is read and written only under
    // `condition`. `starting` serialises starting a worker, which blocks, without holding `condition`.
    private let source: RemoteSource?
    private let startMessage: WorkerStart
    private let onFailure: @Sendable (String) -> Void
    private let condition = NSCondition()
    private let starting = NSLock()
    private var worker: Worker?
    private var closed = false
    /// The channel's number of the next request (castd's own: senders' numbers may collide).
    private var nextNumber: UInt32 = 0
    /// Requests not fully answered, oldest first: the worker answers them in this order.
    private var pending: [Pending] = []

    /// One worker process and its channel.
    private final class Worker: @unchecked Sendable {
        // Invariant: `reads` and `ended` are guarded by the owning ThumbnailProcess's `condition`.
        let pid: pid_t
        let channel: WorkerChannel
        var reads: [MediaRead] = []
        var ended = false
        init(pid: pid_t, channel: WorkerChannel) {
            self.pid = pid
            self.channel = channel
        }
    }

    /// A request as castd sent it to the worker, and who asked.
    private struct Pending {
        var number: UInt32
        var writer: MessageWriter
        /// The requester's number, put back into each part.
        var request: UInt32
        var times: [Double]
        /// The time being answered, and the part expected next.
        var index = 0
        var part = 0
        var parts: Int?
    }

    /// At most this many reads may wait: the thumbnailer reads one at a time (one more after a cancelled one).
    static let maximumWaitingReads = 2

    /// Thumbnails of served media read through `source` (a reader of the session's media connection of its own), or
    /// of `url` (credentials in its userinfo; through `urlProxy` when given), in workers with `limits`. `onFailure`
    /// hears why a worker ended before the session did (for castd's log).
    init(
        source: RemoteSource?, url: String?, urlProxy: String? = nil, limits: DecoderLimits,
        onFailure: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.source = source
        self.onFailure = onFailure
        let media = source.map { WorkerStart.Media(size: $0.size, seekable: $0.isSeekable, nameHint: $0.nameHint) }
        // No outputs: the images are the only thing a thumbnail worker makes (no window, no sound).
        var start = WorkerStart(
            media: media, url: url, configuration: PlayerConfiguration(audio: .none, video: .none), volume: 0,
            muted: true, limits: limits)
        start.thumbnails = true
        start.urlProxy = urlProxy
        self.startMessage = start
    }

    /// The running worker's pid (tests find it as castd's child).
    var workerPID: pid_t? { condition.withLock { worker?.pid } }

    func request(_ request: ThumbnailRequest, writer: MessageWriter) {
        let asked = Pending(number: 0, writer: writer, request: request.request, times: request.times)
        let worker: Worker
        do {
            worker = try running()
        } catch {
            return answerAll([asked], "\(error)")
        }
        let sent = condition.withLock { () -> ThumbnailRequest? in
            guard !closed, !worker.ended else { return nil }
            nextNumber &+= 1
            pending.append(Pending(number: nextNumber, writer: writer, request: request.request, times: request.times))
            var numbered = request
            numbered.request = nextNumber
            return numbered
        }
        guard let sent else {
            let word = condition.withLock { closed } ? ThumbnailPart.cancelled : "the thumbnail process ended"
            return answerAll([asked], word)
        }
        // A worker that stopped reading is treated as dead: its reader answers what is pending.
        do { try worker.channel.send(.thumbnailRequest(sent)) } catch { worker.channel.shutdown() }
    }

    func cancelAll() {
        guard let worker = condition.withLock({ closed ? nil : self.worker }) else { return }
        do { try worker.channel.send(.thumbnailCancel) } catch { worker.channel.shutdown() }
    }

    func close() {
        let worker = condition.withLock { () -> Worker? in
            closed = true
            condition.broadcast()
            return self.worker
        }
        // The reader sees the channel end, answers what is pending `cancelled`, and reaps the worker.
        worker?.channel.shutdown()
        source?.cancel()
    }

    // MARK: The worker

    /// The worker now, started if none runs.
    private func running() throws -> Worker {
        try starting.withLock {
            let (current, isClosed) = condition.withLock { () -> (Worker?, Bool) in
                guard let running = self.worker, !running.ended else { return (nil, closed) }
                return (running, closed)
            }
            if isClosed { throw WorkerFailure(ThumbnailPart.cancelled) }
            if let current { return current }
            let (pid, fd) = try SpareWorker.shared.take()
            let channel = WorkerChannel(
                fd: fd, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromThumbnailWorker)
            channel.setSendTimeout(seconds: 5)
            let worker = Worker(pid: pid, channel: channel)
            condition.withLock { self.worker = worker }
            try? channel.send(.start(startMessage))
            spawnThread("castd.thumbnails.reader") { self.runReader(worker) }
            if source != nil { spawnThread("castd.thumbnails.server") { self.runServer(worker) } }
            return worker
        }
    }

    private func runReader(_ worker: Worker) {
        var violation: String?
        while violation == nil {
            let message: WorkerMessage?
            do {
                message = try worker.channel.receive()
            } catch {
                violation = "\(error)"
                break
            }
            guard let message else { break }
            switch message {
            case .read(let read):
                let accepted = condition.withLock { () -> Bool in
                    guard worker.reads.count < Self.maximumWaitingReads else { return false }
                    worker.reads.append(read)
                    condition.broadcast()
                    return true
                }
                if !accepted { violation = "more than \(Self.maximumWaitingReads) reads at once" }
                SpareWorker.shared.noteRead(by: worker.pid)
            case .thumbnail(let part):
                // Its first image is made: the next spare may start once its reads pause (`SpareRefillRule`).
                SpareWorker.shared.noteShown(by: worker.pid)
                do {
                    let (writer, answer) = try accept(part)
                    try? writer.send(.thumbnail(answer))
                } catch {
                    violation = "\(error)"
                }
            case .confine, .confined, .start, .control, .data, .readFailed, .thumbnailRequest, .thumbnailCancel, .event:
                preconditionFailure("WorkerMessage.fromThumbnailWorker lets only read and thumbnail through")
            }
        }
        let (unanswered, closing) = condition.withLock { () -> ([Pending], Bool) in
            worker.ended = true
            if self.worker === worker { self.worker = nil }
            condition.broadcast()
            defer { pending.removeAll() }
            return (pending, closed)
        }
        SpareWorker.shared.noteEnded(by: worker.pid)
        if violation != nil { kill(worker.pid, SIGKILL) }
        worker.channel.shutdown()
        // A worker told to go (the session ended) has a moment to exit by itself.
        let end = WorkerProcess.reap(worker.pid, grace: closing ? .milliseconds(300) : .milliseconds(50))
        let word =
            closing
            ? ThumbnailPart.cancelled
            : violation.map { "the thumbnail process broke the channel's rules and was stopped: \($0)" }
                ?? "the thumbnail process died: it \(end.text)"
        if !closing { onFailure(word) }
        answerAll(unanswered, word)
    }

    /// Checks `part` against the oldest request's next expected part, and returns it as its requester's.
    private func accept(_ part: ThumbnailPart) throws -> (MessageWriter, ThumbnailPart) {
        try condition.withLock { () throws -> (MessageWriter, ThumbnailPart) in
            guard var first = pending.first else { throw WorkerFailure("a thumbnail part nobody asked for") }
            guard part.request == first.number, part.index == first.index, part.part == first.part,
                first.parts == nil || first.parts == part.parts
            else {
                throw WorkerFailure(
                    "thumbnail part \(part.part) of request \(part.request) time \(part.index) is not the one expected "
                        + "(part \(first.part) of request \(first.number) time \(first.index))")
            }
            var answer = part
            answer.request = first.request
            answer.time = first.times[first.index]
            first.parts = part.parts
            first.part += 1
            if first.part == part.parts {
                first.index += 1
                first.part = 0
                first.parts = nil
            }
            if first.index == first.times.count {
                pending.removeFirst()
            } else {
                pending[0] = first
            }
            return (first.writer, answer)
        }
    }

    /// Answers every time of `requests` not answered yet with `error`.
    private func answerAll(_ requests: [Pending], _ error: String) {
        for request in requests {
            // A time whose image was partly sent is still answered: the requester drops the parts it could not join.
            for index in request.index..<request.times.count {
                try? request.writer.send(
                    .thumbnail(
                        ThumbnailPart(
                            request: request.request, index: index, time: request.times[index],
                            error: String(error.prefix(maximumTextLength)))))
            }
        }
    }

    /// Serves the worker's reads from the sender's media, one at a time, in order.
    private func runServer(_ worker: Worker) {
        guard let source else { return }
        // A reader left elsewhere by a worker that died is moved on the first read (a stream cannot move).
        var server = MediaReadServer(source: source, position: source.isSeekable ? -1 : 0)
        while true {
            let next = condition.withLock { () -> MediaRead? in
                while worker.reads.isEmpty && !worker.ended && !closed { condition.wait() }
                return worker.ended || closed ? nil : worker.reads.removeFirst()
            }
            guard let read = next else { return }
            do { try server.answer(read, on: worker.channel) } catch { return }
        }
    }

    private func spawnThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }
}
