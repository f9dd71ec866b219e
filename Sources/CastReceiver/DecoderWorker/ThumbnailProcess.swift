import CastBase
import CastMedia
import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Glibc
import Synchronization

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
/// Thread-safety: the mutable state is in a `Mutex`, each worker's reads in a `Monitor` its server waits on (taken
/// inside the process's, never the other way round); `starting` serialises starting a worker, which blocks, outside
/// both. The channel is thread-safe for sending.
final class ThumbnailProcess: SessionThumbnails, Sendable {
    private let source: RemoteSource?
    private let startMessage: WorkerStart
    /// How the URL, if any, reaches the network.
    private let urlAccess: URLAccess
    private let onFailure: @Sendable (String) -> Void
    private let starting = Mutex(())

    private struct State {
        var worker: Worker?
        var closed = false
        /// The channel's number of the next request (castd's own: senders' numbers may collide).
        var nextNumber: UInt32 = 0
        /// Requests not fully answered, oldest first: the worker answers them in this order.
        var pending: [Pending] = []
    }

    private let state = Mutex(State())

    /// One worker process and its channel.
    private final class Worker: Sendable {
        let pid: pid_t
        let channel: WorkerChannel
        /// castd's proxy on the worker's loopback, for a URL; stopped when the worker ends.
        let proxy: CheckedProxy?
        /// Reads waiting for the server; whether the worker ended or the process closed (the server leaves).
        let reads = Monitor((waiting: [MediaRead](), ended: false, closed: false))
        init(pid: pid_t, channel: WorkerChannel, proxy: CheckedProxy?) {
            self.pid = pid
            self.channel = channel
            self.proxy = proxy
        }

        var ended: Bool { reads.withLock { $0.ended } }
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
    /// of `url` (credentials in its userinfo; reaching the network as `urlAccess` says), in workers with `limits`.
    /// `onFailure` hears why a worker ended before the session did (for castd's log).
    init(
        source: RemoteSource?, url: String?, urlAccess: URLAccess = .paired, limits: DecoderLimits,
        onFailure: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.source = source
        self.urlAccess = urlAccess
        self.onFailure = onFailure
        let media = source.map { WorkerStart.Media(size: $0.size, seekable: $0.isSeekable, nameHint: $0.nameHint) }
        // No outputs: the images are the only thing a thumbnail worker makes (no window, no sound).
        var start = WorkerStart(
            media: media, url: url, configuration: PlayerConfiguration(audio: .none, video: .none), volume: 0,
            muted: true, limits: limits)
        start.thumbnails = true
        self.startMessage = start
    }

    /// The running worker's pid (tests find it as castd's child).
    var workerPID: pid_t? { state.withLock { $0.worker?.pid } }

    func request(_ request: ThumbnailRequest, writer: MessageWriter) {
        let asked = Pending(number: 0, writer: writer, request: request.request, times: request.times)
        let worker: Worker
        do {
            worker = try running()
        } catch {
            return answerAll([asked], "\(error)")
        }
        let sent = state.withLock { state -> ThumbnailRequest? in
            guard !state.closed, !worker.ended else { return nil }
            state.nextNumber &+= 1
            state.pending.append(
                Pending(number: state.nextNumber, writer: writer, request: request.request, times: request.times))
            var numbered = request
            numbered.request = state.nextNumber
            return numbered
        }
        guard let sent else {
            let word = state.withLock { $0.closed } ? ThumbnailPart.cancelled : "the thumbnail process ended"
            return answerAll([asked], word)
        }
        // A worker that stopped reading is treated as dead: its reader answers what is pending.
        do { try worker.channel.send(.thumbnailRequest(sent)) } catch { worker.channel.shutdown() }
    }

    func cancelAll() {
        guard let worker = state.withLock({ $0.closed ? nil : $0.worker }) else { return }
        do { try worker.channel.send(.thumbnailCancel) } catch { worker.channel.shutdown() }
    }

    func close() {
        let worker = state.withLock { state -> Worker? in
            state.closed = true
            state.worker?.reads.withLock { $0.closed = true }
            return state.worker
        }
        // The reader sees the channel end, answers what is pending `cancelled`, and reaps the worker.
        worker?.channel.shutdown()
        source?.cancel()
    }

    // MARK: The worker

    /// The worker now, started if none runs.
    private func running() throws -> Worker {
        try starting.withLock { _ in
            let (current, isClosed) = state.withLock { state -> (Worker?, Bool) in
                guard let running = state.worker, !running.ended else { return (nil, state.closed) }
                return (running, state.closed)
            }
            if isClosed { throw WorkerFailure(ThumbnailPart.cancelled) }
            if let current { return current }
            // Thumbnails need no display.
            let started = try SpareWorker.shared.take(display: false)
            let channel = WorkerChannel(
                fd: started.channel, incoming: WorkerMessage.maximumFromWorker,
                decode: WorkerMessage.fromThumbnailWorker)
            channel.setSendTimeout(seconds: 5)
            var startMessage = startMessage
            let proxy: CheckedProxy?
            do {
                proxy = try started.network(for: &startMessage, access: urlAccess)
            } catch {
                channel.shutdown()
                _ = WorkerProcess.reap(started.pid, grace: .zero)
                throw error
            }
            let worker = Worker(pid: started.pid, channel: channel, proxy: proxy)
            state.withLock { state in
                state.worker = worker
                if state.closed { worker.reads.withLock { $0.closed = true } }
            }
            try? channel.send(.start(startMessage))
            spawnThread("castd.thumbnails.reader") { self.runReader(worker) }
            if source != nil { spawnThread("castd.thumbnails.server") { self.runServer(worker) } }
            return worker
        }
    }

    private func runReader(_ worker: Worker) {
        var violation: String?
        while violation == nil, let message = worker.channel.next(violation: &violation) {
            switch message {
            case .read(let read):
                let accepted = worker.reads.withLock { reads -> Bool in
                    guard reads.waiting.count < Self.maximumWaitingReads else { return false }
                    reads.waiting.append(read)
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
            case .confine, .confined, .start, .control, .data, .readFailed, .thumbnailRequest, .thumbnailCancel, .event,
                .unacceptableEvent:
                preconditionFailure("WorkerMessage.fromThumbnailWorker lets only read and thumbnail through")
            }
        }
        let (unanswered, closing) = state.withLock { state -> ([Pending], Bool) in
            worker.reads.withLock { $0.ended = true }
            if state.worker === worker { state.worker = nil }
            defer { state.pending.removeAll() }
            return (state.pending, state.closed)
        }
        worker.proxy?.stop()
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
        try state.withLock { state throws -> (MessageWriter, ThumbnailPart) in
            guard var first = state.pending.first else { throw WorkerFailure("a thumbnail part nobody asked for") }
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
                state.pending.removeFirst()
            } else {
                state.pending[0] = first
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
            let next = worker.reads.withLock(when: { !$0.waiting.isEmpty || $0.ended || $0.closed }) {
                reads -> MediaRead? in
                reads.ended || reads.closed ? nil : reads.waiting.removeFirst()
            }
            guard let read = next else { return }
            do { try server.answer(read, on: worker.channel) } catch { return }
        }
    }

    private func spawnThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        startDetachedThread(name: name, stackSize: 1 << 20, body)
    }
}
