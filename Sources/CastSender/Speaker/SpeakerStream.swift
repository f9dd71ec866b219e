import CastBase
import CastProtocol
import CastRAOP
import CastSecurity
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The moving parts of one speaker stream: the RTSP session (state machine + connection), the UDP sockets, the
/// PCM source and the threads: the session thread (paces and sends audio and sync, carries out controls over
/// RTSP), the timing thread (answers the speaker's timing requests) and the control thread (reads the
/// speaker's resend requests).
///
/// Thread-safety: what the threads share (controls, events, the end, the timing answers) is in a `Monitor`; the RTSP
/// session (`Session`: the connection, the state machine, ports, volume) is set up by `open` and sent to the session
/// thread (`sending`), whose alone it is from then on; everything else is immutable (the sockets are shared with the
/// helper threads, which end before they are closed).
final class SpeakerStream: Sendable {
    /// What the speaker holds before playing, for the position shown: shairport-sync's default for a sender
    /// it does not know (88200 frames, 2 s). It also tells the speaker this latency in every sync packet.
    static let speakerLatencyFrames: Int64 = 88_200
    /// How far ahead of the timeline audio is sent.
    static let lead: Int64 = 250_000_000
    /// The least time between two packets (ns): an eighth of a packet's duration. A run scheduled less than the
    /// speaker's latency ahead (a group's resume) has its first seconds due at once; they go eight times faster than
    /// they play, not in one burst that would overflow the speaker's socket.
    static let catchUpSpacing =
        Int64(SpeakerPacket.framesPerPacket) * 1_000_000_000 / 8
        / Int64(SpeakerAnnouncement.sampleRate)
    /// Silence sent after the last frame, so the speaker does not cut the tail.
    static let trailingSilenceFrames: Int64 = 22_050
    /// Silence sent before the first frame and after each resume: shairport-sync 3.3.8 starts its output about
    /// 72 ms after the first frame's time and drops what it missed to stay in sync (measured in the lab with
    /// a ramp signal), so without it the first 72 ms of a song would never be heard.
    static let leadInFrames = 6_615
    /// Audio kept after sending, so that a pause resumes where the speaker was (unplayed audio is dropped by
    /// FLUSH): more than the speaker's buffer plus the lead.
    static let recentLimitFrames = 4 * 44_100

    /// What the caller, the session thread and the timing thread share.
    private struct Shared {
        var commands: [PlaybackControl.Action] = []
        var events: [PlaybackEvent] = []
        var failure: CastError?
        var ended = false
        /// Timing requests answered: shairport-sync ignores sync packets until one was.
        var timingAnswered = 0
    }

    private let shared = Monitor(Shared())
    private let helpersStop = Atomic<Bool>(false)
    private let helpersDone = DispatchGroup()

    /// The RTSP session as the session thread carries it: made by `open`, then that thread's alone (not `Sendable`:
    /// the connection's parser is that thread's).
    private struct Session {
        let connection: SpeakerConnection
        var machine: SpeakerSessionStateMachine
        var ports = SpeakerPorts(server: 0, control: 0, timing: 0)
        var volume: Double?
        var muted = false
        /// Streams at once (a speaker on its own), or waits paused for a scheduled start (`resumeAt`: a member).
        var autoplay = true
        /// The media frame the stream begins at.
        var startFrame: Int64 = 0
    }

    private let reader: any PCMSource
    private let speakerName: String
    /// The session's state machine before the set-up.
    private let announcedMachine: SpeakerSessionStateMachine
    private let audio: UDPSocket
    private let control: UDPSocket
    private let timing: UDPSocket
    private let speakerAddress: SocketAddress
    private let clock: SpeakerClock
    private let ssrc: UInt32
    private let firstSequence: UInt16
    private let firstTimestamp: UInt32

    private init(
        reader: any PCMSource, speakerName: String, connection: SpeakerConnection, address: SocketAddress,
        audio: UDPSocket, control: UDPSocket, timing: UDPSocket
    ) {
        self.reader = reader
        self.speakerName = printable(speakerName)  // only ever shown
        self.speakerAddress = address
        self.audio = audio
        self.control = control
        self.timing = timing
        clock = SpeakerClock(
            wallNanoseconds: Int64(Date().timeIntervalSince1970 * 1e9),
            monotonicNanoseconds: MonotonicClock.nanoseconds())
        ssrc = UInt32.random(in: 0...UInt32.max)
        firstSequence = UInt16.random(in: 0...UInt16.max)
        firstTimestamp = UInt32.random(in: 0...UInt32.max)
        let instance = (0..<16).map { _ in String(Int.random(in: 0..<16), radix: 16, uppercase: true) }.joined()
        announcedMachine = SpeakerSessionStateMachine(
            announcement: SpeakerAnnouncement(
                sessionID: UInt32.random(in: 1...UInt32.max), localAddress: connection.localHost,
                speakerAddress: address.family == AF_INET6 ? "::" : "0.0.0.0"),
            controlPort: control.port, timingPort: timing.port, firstSequence: firstSequence,
            firstTimestamp: firstTimestamp, clientInstance: instance)
    }

    /// The speaker's latency in nanoseconds: a frame is heard this long after the sync packets say it is now.
    static let speakerLatency = speakerLatencyFrames * 1_000_000_000 / Int64(SpeakerAnnouncement.sampleRate)

    /// Connects, sets the stream up, and starts the threads. With `autoplay` false the stream waits, paused at
    /// `startTime`, for a `resumeAt` (a group's scheduled start).
    static func open(
        reader: any PCMSource, speaker: ReceiverDescription, volume: Double?, startTime: Double? = nil,
        autoplay: Bool = true
    ) throws(CastError) -> SpeakerStream {
        let stream: SpeakerStream
        let connection: SpeakerConnection
        do {
            let address = try SocketAddress(host: speaker.host, port: speaker.port)
            connection = try SpeakerConnection(host: speaker.host, port: speaker.port, timeout: .seconds(5))
            stream = SpeakerStream(
                reader: reader, speakerName: speaker.name, connection: connection, address: address,
                audio: try UDPSocket(family: address.family), control: try UDPSocket(family: address.family),
                timing: try UDPSocket(family: address.family))
        } catch {
            throw CastError(
                .connectionLost, "cannot reach the speaker \(printable(speaker.name)) at \(speaker.address): \(error)")
        }
        stream.startHelpers()
        var session = Session(connection: connection, machine: stream.announcedMachine, autoplay: autoplay)
        do {
            if let startTime, startTime > 0 {
                try reader.seek(to: startTime)
                session.startFrame = Int64((startTime * Double(SpeakerAnnouncement.sampleRate)).rounded())
            }
            try stream.setUp(&session, volume: volume)
        } catch {
            stream.stopHelpers()
            throw stream.castError(error)
        }
        startDetachedThread(name: "cast speaker") { stream.run(session) }
        return stream
    }

    // MARK: The caller's side

    func nextEvent() throws(CastError) -> PlaybackEvent {
        let next = shared.withLock(when: { !$0.events.isEmpty || $0.failure != nil || $0.ended }) {
            shared -> Result<PlaybackEvent, CastError> in
            if !shared.events.isEmpty { return .success(shared.events.removeFirst()) }
            if let failure = shared.failure { return .failure(failure) }
            return .failure(CastError(.connectionLost, "the stream to \(speakerName) has ended"))
        }
        return try next.get()
    }

    func enqueue(_ action: PlaybackControl.Action) {
        shared.withLock { $0.commands.append(action) }
    }

    func close() {
        enqueue(.stop)
        shared.wait(until: { $0.ended }, timeout: 3)
    }

    private func emit(_ event: PlaybackEvent) {
        shared.withLock { $0.events.append(event) }
    }

    private func takeCommands() -> [PlaybackControl.Action] {
        shared.withLock { shared in
            defer { shared.commands.removeAll() }
            return shared.commands
        }
    }

    /// Sleeps until `nanoseconds` (monotonic) or until a control arrives.
    private func wait(until nanoseconds: Int64) {
        let seconds = Double(nanoseconds - MonotonicClock.nanoseconds()) / 1e9
        guard seconds > 0 else { return }
        shared.wait(until: { !$0.commands.isEmpty }, timeout: min(seconds, 1))
    }

    // MARK: RTSP

    /// Sends `pair`'s request over `connection`, waits for the answer and hands it to `machine`.
    private static func exchange(
        _ pair: (request: RTSPRequest, cseq: Int)?, on connection: SpeakerConnection,
        _ machine: inout SpeakerSessionStateMachine
    ) throws -> SpeakerSessionStateMachine.Action? {
        guard let pair else { return nil }
        let response = try connection.exchange(pair.request, cseq: pair.cseq)
        return try machine.receive(response)
    }

    private func setUp(_ session: inout Session, volume: Double?) throws {
        var machine = session.machine
        defer { session.machine = machine }
        let connection = session.connection
        func exchange(_ pair: (request: RTSPRequest, cseq: Int)?) throws -> SpeakerSessionStateMachine.Action? {
            try Self.exchange(pair, on: connection, &machine)
        }
        var action = try exchange(machine.start())
        while let current = action {
            switch current {
            case .send(let request):
                action = try exchange((request, machine.upcomingCSeq - 1))
            case .startStreaming(let ports, _):
                session.ports = ports
                action = nil
            case .paused, .volumeSet, .closed:
                throw RAOPError(.unexpectedResponse, "the speaker's answers ended the set-up early")
            }
        }
        // Always sent, as AirPlay senders do: without it shairport-sync plays at its own default (about -40 dB
        // here, barely audible). Full volume means "unattenuated": the speaker's own knob still rules.
        let level = volume ?? 1
        _ = try exchange(machine.setVolume(decibels: SpeakerVolume.decibels(forLevel: level)))
        session.volume = level
    }

    private func castError(_ error: any Error) -> CastError {
        if let error = error as? CastError { return error }
        if let error = error as? RAOPError, error.code == .refused {
            switch error.status {
            case 453:
                return CastError(
                    .busy, "the speaker \(speakerName) plays for another sender (\(printable(error.message)))")
            case 401, 403:
                return CastError(
                    .notAuthorised, "the speaker \(speakerName) wants a password, which cast does not send yet")
            default: return CastError(.playback, "the speaker \(speakerName): \(printable(error.message))")
            }
        }
        return CastError(.connectionLost, "lost the speaker \(speakerName): \(error)")
    }

    // MARK: Helper threads

    private func startHelpers() {
        for (socket, name) in [(timing, "cast speaker timing"), (control, "cast speaker control")] {
            helpersDone.enter()
            startDetachedThread(name: name) { [self] in
                defer { helpersDone.leave() }
                while !helpersStop.load(ordering: .relaxed) {
                    guard let (bytes, source) = socket.receive() else { continue }
                    let received = MonotonicClock.nanoseconds()
                    // Only the speaker may ask: anyone else could use us to reflect packets.
                    guard source.withUnsafeBytes({ speakerAddress.sameHost(as: $0) }) else { continue }
                    guard let packet = try? SpeakerPacket.decode(bytes) else { continue }
                    if socket === timing, case .timingRequest = packet {
                        let reply = SpeakerPacket.reply(
                            to: packet, received: clock.ntp(monotonicNanoseconds: received),
                            sent: clock.ntp(monotonicNanoseconds: MonotonicClock.nanoseconds()))!
                        // The reply goes back where the request came from (shairport sends from its timing port).
                        socket.sendReply(reply.encoded, to: source)
                        shared.withLock { $0.timingAnswered += 1 }
                    }
                    // Resend requests are read and dropped: the lab's link loses nothing, and the speaker conceals
                    // a lost packet with silence.
                }
            }
        }
    }

    private func stopHelpers() {
        helpersStop.store(true, ordering: .relaxed)
        helpersDone.wait()
        audio.close()
        control.close()
        timing.close()
    }

    // MARK: The session thread

    /// A failure of the audio's source (a file that stops decoding): the stream finishes with `playbackError`.
    private struct SourceFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// `body`, a call into the source, whose failure becomes a `SourceFailure`.
    private func source<Result>(_ body: () throws -> Result) throws(SourceFailure) -> Result {
        do {
            return try body()
        } catch {
            throw SourceFailure(description: "\(error)")
        }
    }

    private func run(_ session: Session) {
        var outcome: Result<FinishReason, any Error>
        do {
            outcome = .success(try stream(session))
        } catch {
            outcome = .failure(error)
        }
        stopHelpers()
        let failure: CastError?
        if case .failure(let error) = outcome, !(error is SourceFailure) {
            failure = castError(error)
        } else {
            failure = nil
        }
        shared.withLock { shared in
            switch outcome {
            case .success(let reason):
                shared.events.append(.playbackState(.stopped))
                shared.events.append(.finished(reason: reason, error: nil))
            case .failure(let error as SourceFailure):
                shared.events.append(.playbackState(.stopped))
                shared.events.append(.finished(reason: .playbackError, error: "\(error)"))
            case .failure:
                shared.failure = failure
            }
            shared.ended = true
        }
    }

    /// State of the stream loop, in stream frames (counted from the first packet) and media frames (counted
    /// from the start of the file).
    private struct Progress {
        var timeline: StreamTimeline
        /// The next stream frame to send.
        var frame: Int64 = 0
        var sequence: UInt16
        var marker = true
        var syncFirst = true
        /// Media frames sent (after a pause: up to what the speaker had played).
        var mediaSent: Int64 = 0
        /// Where the current run began: stream frame and media frame.
        var runStart: (stream: Int64, media: Int64) = (0, 0)
        /// The stream frame after the trailing silence, once the media ended.
        var endFrame: Int64?
        /// Frames of lead-in silence still to send before the media (or the replayed audio) goes on.
        var leadIn = SpeakerStream.leadInFrames
        /// Set up but not started: waiting for a scheduled start (`resumeAt`), nothing sent yet.
        var held = false
        /// When the last packet went out (`catchUpSpacing`).
        var lastSent: Int64 = 0
    }

    private func stream(_ session: Session) throws -> FinishReason {
        var (machine, volume, muted) = (session.machine, session.volume, session.muted)
        let (connection, ports, startFrame) = (session.connection, session.ports, session.startFrame)
        func exchange(_ pair: (request: RTSPRequest, cseq: Int)?) throws -> SpeakerSessionStateMachine.Action? {
            try Self.exchange(pair, on: connection, &machine)
        }
        let rate = Int64(SpeakerAnnouncement.sampleRate)
        let packetFrames = SpeakerPacket.framesPerPacket
        // The speaker asks for our time right after SETUP; until one answer reached it, it ignores sync packets
        // and the first audio would have no reference. Wait for one (briefly: a speaker that never asks still
        // gets the stream, with sync repeated every second).
        shared.wait(until: { $0.timingAnswered > 0 }, timeout: 1)
        let start = MonotonicClock.nanoseconds()
        var p = Progress(
            timeline: StreamTimeline(rate: Int(rate), firstTimestamp: firstTimestamp, startingAt: start),
            sequence: firstSequence)
        p.mediaSent = startFrame
        p.runStart = (Int64(Self.leadInFrames), startFrame)
        p.held = !session.autoplay
        var recent: [Int16] = []
        var replay: [Int16] = []
        var nextSync = start
        var nextPosition = start
        var nextCheck = start + 250_000_000
        // shairport-sync's player thread, started by RECORD, reads the volume it remembers and applies it a moment
        // later: a SET_PARAMETER answered in between is overwritten (the tone 40 dB down on a loaded machine). The
        // volume is set once more after a second, when that start is long over and before the first frame is due
        // (the speaker's latency is 2 s).
        var volumeAgainAt: Int64? = start + 1_000_000_000
        let audioAddress = speakerAddress.with(port: ports.server)
        let controlAddress = speakerAddress.with(port: ports.control)

        /// The media frame the speaker plays now.
        func heard(_ now: Int64) -> Int64 {
            let stream = p.timeline.frame(at: now) - Self.speakerLatencyFrames
            return min(p.runStart.media + max(0, stream - p.runStart.stream), p.mediaSent)
        }
        func wallNow() -> Double { Date().timeIntervalSince1970 }
        func emitVolume() {
            if let volume { emit(.volume(volume, muted: muted)) }
        }

        if let duration = reader.duration { emit(.durationAvailable(duration)) }
        emit(.mediaTypes([.audio]))
        emit(.loadState([.playable, .playthroughOK]))
        emitVolume()
        if p.held {
            // Loaded and paused where it will start: the position first, so that whoever waits for `paused` knows it.
            emit(.position(seconds: Double(p.mediaSent) / Double(rate), at: wallNow()))
            emit(.playbackState(.paused))
        } else {
            emit(.playbackState(.playing))
        }

        while true {
            for command in takeCommands() {
                let now = MonotonicClock.nanoseconds()
                switch command {
                case .stop:
                    _ = try? exchange(machine.stop())
                    return .userExited
                case .pause:
                    guard machine.isStreaming, !p.held, p.endFrame == nil else { continue }
                    let position = heard(now)
                    // What was sent but not played goes back in front of the source.
                    let unplayed = Int(min(p.mediaSent - position, Int64(recent.count / 2)))
                    replay = Array(recent.suffix(unplayed * 2)) + replay
                    recent.removeLast(unplayed * 2)
                    p.mediaSent -= Int64(unplayed)
                    _ = try exchange(
                        machine.pause(nextSequence: p.sequence, nextTimestamp: p.timeline.timestamp(ofFrame: p.frame)))
                    // Paused, then where: the position reported while paused is where it stopped.
                    emit(.playbackState(.paused))
                    emit(.position(seconds: Double(p.mediaSent) / Double(rate), at: wallNow()))
                case .resume, .resumeAt:
                    if p.held {
                        p.held = false
                    } else {
                        guard machine.resume() else { continue }
                    }
                    p.leadIn = Self.leadInFrames
                    p.runStart = (p.frame + Int64(p.leadIn), p.mediaSent)
                    if case .resumeAt(let instant) = command {
                        // Heard at `instant` (the group's clock is ours: we are the speaker's timing server): the
                        // run's first media frame is "now" one speaker latency before it, after the lead-in silence.
                        p.timeline.reanchor(frame: p.runStart.stream, heardAt: instant, latency: Self.speakerLatency)
                    } else {
                        p.timeline.reanchor(frame: p.frame, at: now)
                    }
                    p.marker = true
                    p.syncFirst = true
                    nextSync = now
                    emit(.playbackState(.playing))
                case .seek(let position, _):
                    guard p.endFrame == nil else { continue }
                    let wasStreaming = machine.isStreaming && !p.held
                    let heardNow = wasStreaming ? heard(now) : p.mediaSent
                    let target = Int64((max(0, position) * Double(rate)).rounded())
                    emit(.playbackState(target >= heardNow ? .seekingForward : .seekingBackward))
                    if wasStreaming {
                        _ = try exchange(
                            machine.pause(
                                nextSequence: p.sequence, nextTimestamp: p.timeline.timestamp(ofFrame: p.frame)))
                    }
                    try source { try reader.seek(to: position) }
                    replay.removeAll()
                    recent.removeAll()
                    p.mediaSent = Int64((position * Double(rate)).rounded())
                    p.leadIn = Self.leadInFrames
                    p.runStart = (p.frame + Int64(p.leadIn), p.mediaSent)
                    if wasStreaming, machine.resume() {
                        p.timeline.reanchor(frame: p.frame, at: now)
                        p.marker = true
                        p.syncFirst = true
                        nextSync = now
                    }
                    // The state it is back in, then where: a position reported while paused is where it waits.
                    emit(.playbackState(wasStreaming ? .playing : .paused))
                    emit(.position(seconds: position, at: wallNow()))
                case .volume(let level):
                    _ = try exchange(
                        machine.setVolume(
                            decibels: muted ? SpeakerVolume.muteDecibels : SpeakerVolume.decibels(forLevel: level)))
                    volume = level
                    emitVolume()
                case .mute(let on):
                    _ = try exchange(
                        machine.setVolume(
                            decibels: on ? SpeakerVolume.muteDecibels : SpeakerVolume.decibels(forLevel: volume ?? 1)))
                    muted = on
                    if volume == nil { volume = 1 }
                    emitVolume()
                case .rate, .accessLog, .scaling, .subtitles, .audio, .align, .anchor, .join, .skip, .move:
                    // A speaker has no engine access log, no picture to scale and no subtitles; it needs no `align`
                    // (its stream is paced by our clock, which is its timing server's) and passes on no joins.
                    continue
                }
            }

            let now = MonotonicClock.nanoseconds()
            if now >= nextCheck {
                guard try connection.isAlive() else {
                    throw SpeakerSocketError(message: "the speaker closed the connection")
                }
                nextCheck = now + 250_000_000
            }
            if let due = volumeAgainAt, now >= due {
                volumeAgainAt = nil
                let level = volume ?? 1
                _ = try exchange(
                    machine.setVolume(
                        decibels: muted ? SpeakerVolume.muteDecibels : SpeakerVolume.decibels(forLevel: level)))
            }
            if machine.isPaused || p.held {
                wait(until: min(now + 250_000_000, volumeAgainAt ?? .max))
                continue
            }
            if now >= nextSync {
                let sync = p.timeline.sync(
                    at: now, clock: clock, latencyFrames: Self.speakerLatencyFrames, first: p.syncFirst)
                control.send(sync.encoded, to: controlAddress)
                p.syncFirst = false
                nextSync = now + 1_000_000_000
            }
            if now >= nextPosition {
                emit(.position(seconds: Double(heard(now)) / Double(rate), at: wallNow()))
                nextPosition = now + 500_000_000
            }
            if let end = p.endFrame, p.frame >= end {
                // Everything is sent: wait until the speaker has played it, then end the session.
                let done = p.timeline.time(ofFrame: end) + Self.speakerLatencyFrames * 1_000_000_000 / rate
                if now >= done {
                    emit(.position(seconds: Double(p.mediaSent) / Double(rate), at: wallNow()))
                    _ = try? exchange(machine.stop())
                    return .playbackEnded
                }
                wait(until: min(done, nextSync, nextPosition, nextCheck))
                continue
            }
            let due = max(p.timeline.time(ofFrame: p.frame) - Self.lead, p.lastSent + Self.catchUpSpacing)
            if now < due {
                wait(until: min(due, nextSync, nextPosition, nextCheck))
                continue
            }

            // One packet: replayed audio first, then the source; silence after the end.
            var samples = [Int16]()
            samples.reserveCapacity(packetFrames * 2)
            if p.endFrame == nil {
                let silence = min(p.leadIn, packetFrames)
                samples += repeatElement(0, count: silence * 2)
                p.leadIn -= silence
                let fromReplay = min(replay.count, packetFrames * 2 - samples.count)
                samples += replay.prefix(fromReplay)
                replay.removeFirst(fromReplay)
                if samples.count < packetFrames * 2 {
                    samples += try source { try reader.read(frames: packetFrames - samples.count / 2) }
                }
                p.mediaSent += Int64(samples.count / 2 - silence)
                recent += samples[(silence * 2)...]
                // Trimmed in large steps: moving 4 s of samples for every 8 ms packet would cost more than the rest.
                if recent.count > Self.recentLimitFrames * 4 {
                    recent.removeFirst(recent.count - Self.recentLimitFrames * 2)
                }
                if samples.count < packetFrames * 2 {
                    p.endFrame = p.frame + Int64(packetFrames) + Self.trailingSilenceFrames
                }
            }
            let packet = samples.withUnsafeBufferPointer {
                SpeakerPacket.audio(
                    sequence: p.sequence, timestamp: p.timeline.timestamp(ofFrame: p.frame), ssrc: ssrc,
                    marker: p.marker, samples: $0)
            }
            audio.send(packet, to: audioAddress)
            p.lastSent = now
            p.marker = false
            p.sequence &+= 1
            p.frame += Int64(packetFrames)
        }
    }
}

extension UDPSocket {
    /// Sends to a raw source address as `recvfrom` gave it.
    func sendReply(_ bytes: [UInt8], to source: [UInt8]) {
        _ = bytes.withUnsafeBytes { raw in
            source.withUnsafeBytes { address in
                sendto(
                    fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL),
                    address.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
            }
        }
    }
}
