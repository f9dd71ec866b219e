import CastBase
public import CastProtocol
import CastSecurity
import Dispatch
import FoundationEssentials

/// Media playing on a receiver: the control connection that carries requests and pushed events,
/// and the media connection over which the receiver pulls the file (none for a URL, which the receiver opens itself).
///
/// Thread-safety: one thread takes events with `nextEvent`; `control` may be called from any thread.
public final class RemotePlayback: Sendable {
    private let connection: ReceiverConnection
    private let media: MediaServer?
    /// Signalled by `close`: the heartbeat's thread ends at once instead of at its next beat.
    private let heartbeatStop = DispatchSemaphore(value: 0)
    /// Left by the heartbeat's thread when it ends (`handBack` waits for it: no heartbeat after the hand-back).
    private let heartbeatDone = DispatchGroup()

    /// The receiver's id as computed from the key it presented (what a reconnection pins).
    package var receiverID: String? { connection.peerID }

    /// The receiver's output level when playback started (0...1, muted).
    public let initialVolume: (level: Double, muted: Bool)

    private init(connection: ReceiverConnection, media: MediaServer?, volume: (Double, Bool)) {
        self.connection = connection
        self.media = media
        self.initialVolume = volume
    }

    /// Asks the receiver to play `file`, and serves it.
    /// - Throws: `CastError`: `.connectionLost`, `.notAuthorised`, or a refusal from the receiver.
    /// - Parameter volume: when given, the receiver's output level (0...1) is set to it as playback starts.
    public static func start(
        _ file: MediaFile, on receiver: ReceiverDescription, configDirectory: String, senderName: String,
        startTime: Double? = nil, volume: Double? = nil, audioLanguage: String? = nil, subtitleLanguage: String? = nil,
        subtitles: MediaFile? = nil, autoplay: Bool = true, queue: QueuePlace? = nil
    ) throws(CastError) -> RemotePlayback {
        let connection = try ReceiverConnection.open(receiver, configDirectory: configDirectory, senderName: senderName)
        return try start(
            file, over: connection, configDirectory: configDirectory, startTime: startTime, volume: volume,
            audioLanguage: audioLanguage, subtitleLanguage: subtitleLanguage, subtitles: subtitles, autoplay: autoplay,
            queue: queue)
    }

    /// Asks the receiver at the other end of `connection` (open, its key checked: `ReceiverConnection.reach`) to
    /// play `file`, and serves it (`mirror`: a live screen from `ScreenMirror`, a `mirror` session). The playback owns
    /// the connection from here, and closes it on failure too.
    /// - Throws: `CastError`: `.connectionLost`, `.notAuthorised`, or a refusal from the receiver.
    public static func start(
        _ file: MediaFile, over connection: ReceiverConnection, configDirectory: String, startTime: Double? = nil,
        volume: Double? = nil, audioLanguage: String? = nil, subtitleLanguage: String? = nil,
        subtitles: MediaFile? = nil,
        autoplay: Bool = true, group: [String]? = nil, queue: QueuePlace? = nil, mirror: Bool = false
    ) throws(CastError) -> RemotePlayback {
        let receiver = connection.receiver
        do throws(CastError) {
            var request = PlayRequest(title: file.title, media: file.descriptor, startTime: startTime)
            request.audioLanguage = audioLanguage
            request.subtitleLanguage = subtitleLanguage
            request.subtitles = subtitles?.subtitleFile
            request.autoplay = autoplay ? nil : false
            request.group = group.map { Array($0.prefix(PlayRequest.maximumGroupSize)) }
            request.queue = queue
            request.mirror = mirror ? true : nil
            let (accepted, level) = try requestPlay(request, on: connection, volume: volume)
            let tls = try connectTLS(
                to: receiver, configDirectory: configDirectory, timeout: ReceiverConnection.replyTimeout)
            // The media connection must reach the same receiver as the control connection.
            guard let mediaKey = tls.peerPublicKey, fingerprint(ofPublicKey: mediaKey) == connection.peerID else {
                tls.close()
                throw CastError(
                    .notAuthorised, "the media connection reached a receiver with another identity: refused")
            }
            do {
                try tls.write(Message.mediaHello(MediaHello(session: accepted.session)).frame().encoded())
            } catch {
                tls.close()
                throw CastError(
                    .connectionLost, "lost \(printable(receiver.name)) while opening the media connection: \(error)")
            }
            let server = MediaServer(tls: tls, file: file, subtitles: subtitles)
            let playback = RemotePlayback(connection: connection, media: server, volume: level)
            playback.startHeartbeat()
            return playback
        } catch {
            connection.close()
            throw error
        }
    }

    /// Asks the receiver to open and play an http(s) `url` itself (HLS included), with HTTP credentials when the
    /// server asks for them. `url` may carry them as userinfo (`http://user:pass@host/…`, percent-encoded) instead;
    /// they are moved out of it before it is sent, so that the receiver shows and logs the URL without them.
    /// - Throws: `CastError`: `.usage` for a URL the receiver would refuse, `.connectionLost`, `.notAuthorised`, or a
    ///   refusal from the receiver.
    public static func start(
        url: String, username: String? = nil, password: String? = nil, on receiver: ReceiverDescription,
        configDirectory: String, senderName: String, startTime: Double? = nil, volume: Double? = nil,
        audioLanguage: String? = nil, subtitleLanguage: String? = nil, autoplay: Bool = true, queue: QueuePlace? = nil
    ) throws(CastError) -> RemotePlayback {
        var request = try urlRequest(
            url: url, username: username, password: password, for: receiver, startTime: startTime,
            audioLanguage: audioLanguage, subtitleLanguage: subtitleLanguage, autoplay: autoplay)
        request.queue = queue
        let connection = try ReceiverConnection.open(receiver, configDirectory: configDirectory, senderName: senderName)
        return try start(request, over: connection, volume: volume)
    }

    /// The play request for an http(s) URL, its credentials moved out of it, checked before anything is sent.
    private static func urlRequest(
        url: String, username: String?, password: String?, for receiver: ReceiverDescription, startTime: Double?,
        audioLanguage: String?, subtitleLanguage: String?, autoplay: Bool
    ) throws(CastError) -> PlayRequest {
        let split = splitCredentials(url)
        if let problem = PlayRequest.problem(withURL: split.url) { throw CastError(.usage, "the URL \(problem)") }
        let username = username ?? split.username
        let password = password ?? split.password
        if username?.contains(":") == true { throw CastError(.usage, "the user name must not contain ':'") }
        if let features = receiver.record?.features, !features.contains(.url) {
            throw CastError(
                .playback,
                "\(printable(receiver.name)) does not open URLs (its features are 0x\(String(features.rawValue, radix: 16)))"
            )
        }
        // The title is a text field (at most 1024 bytes); the URL is ASCII, so bytes are characters.
        let title =
            split.url.utf8.count <= maximumTextLength
            ? split.url : String(split.url.prefix(maximumTextLength - 3)) + "…"
        var request = PlayRequest(
            title: title, url: split.url, username: username, password: username == nil ? nil : (password ?? ""),
            startTime: startTime)
        request.audioLanguage = audioLanguage
        request.subtitleLanguage = subtitleLanguage
        request.autoplay = autoplay ? nil : false
        return request
    }

    /// `start(url:…)` on a connection that is already open (`ReceiverConnection.reach`); the playback owns it. `group`:
    /// the names of the group it plays in (`GroupPlayback`).
    public static func start(
        url: String, username: String? = nil, password: String? = nil, over connection: ReceiverConnection,
        startTime: Double? = nil, volume: Double? = nil, audioLanguage: String? = nil, subtitleLanguage: String? = nil,
        autoplay: Bool = true, group: [String]? = nil, queue: QueuePlace? = nil
    ) throws(CastError) -> RemotePlayback {
        var request: PlayRequest
        do throws(CastError) {
            request = try urlRequest(
                url: url, username: username, password: password, for: connection.receiver, startTime: startTime,
                audioLanguage: audioLanguage, subtitleLanguage: subtitleLanguage, autoplay: autoplay)
            request.group = group.map { Array($0.prefix(PlayRequest.maximumGroupSize)) }
            request.queue = queue
        } catch {
            connection.close()
            throw error
        }
        return try start(request, over: connection, volume: volume)
    }

    private static func start(_ request: PlayRequest, over connection: ReceiverConnection, volume: Double?)
        throws(CastError) -> RemotePlayback
    {
        do throws(CastError) {
            let (_, level) = try requestPlay(request, on: connection, volume: volume)
            let playback = RemotePlayback(connection: connection, media: nil, volume: level)
            playback.startHeartbeat()
            return playback
        } catch {
            connection.close()
            throw error
        }
    }

    /// Sends the play request and waits for its acceptance; then sets the volume when one is given. The level
    /// belongs to the receiver and holds across sessions, so it is set only once this sender's request was
    /// accepted (a receiver busy for another sender keeps its level), and before the engine has opened its
    /// audio device (the media connection, or the URL, is opened after the acceptance).
    /// Returns the acceptance and the level playback starts at.
    private static func requestPlay(_ request: PlayRequest, on connection: ReceiverConnection, volume: Double?)
        throws(CastError) -> (PlayAccepted, (Double, Bool))
    {
        if let volume, !(0...1).contains(volume) { throw CastError(.usage, "the volume must be from 0 to 1") }
        let status = try connection.status()
        try connection.send(.play(request))
        guard case .reply(.playAccepted(let accepted)) = try connection.nextAction() else {
            throw CastError(.connectionLost, "\(printable(connection.welcome.name)) did not accept the play request")
        }
        if let volume { try connection.send(.control(PlaybackControl(.volume(volume)))) }
        return (accepted, (volume ?? status.volume ?? 1, status.muted ?? false))
    }

    /// `url` without its userinfo, and the user name and password it carried (percent-decoded).
    public static func splitCredentials(_ url: String) -> (url: String, username: String?, password: String?) {
        guard let marker = url.firstRange(of: "://") else { return (url, nil, nil) }
        let rest = url[marker.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return (url, nil, nil) }
        let userinfo = rest[..<at]
        let user = userinfo.prefix { $0 != ":" }
        let password = user.endIndex < userinfo.endIndex ? userinfo[userinfo.index(after: user.endIndex)...] : nil
        func decoded(_ text: Substring) -> String { percentDecoded(text) ?? String(text) }
        return (
            String(url[..<marker.upperBound]) + String(rest[rest.index(after: at)...]), decoded(user),
            password.map(decoded)
        )
    }

    /// The receiver's name.
    public var receiverName: String { connection.welcome.name }

    /// The receiver's id as its welcome gave it (what a group keys its members by).
    var welcomeID: String { connection.welcome.id }

    /// How often the sender tells the receiver it is still there while playing (the receiver drops
    /// a session whose sender is silent for its sender timeout, 10 s by default).
    static let heartbeatInterval: Duration = .seconds(2)

    /// The heartbeat is a `statusRequest`, sent when the connection's rules say one is due; its answers are skipped
    /// by `nextEvent`. It stops when a send fails (the connection is gone; `nextEvent` says so) or the playback is
    /// closed.
    private func startHeartbeat() {
        let (connection, stop, done) = (self.connection, heartbeatStop, heartbeatDone)
        done.enter()
        startDetachedThread(name: "cast heartbeat") {
            defer { done.leave() }
            while true {
                let wait = max(
                    .zero,
                    (connection.heartbeatDue() ?? ReceiverConnection.now() + Self.heartbeatInterval)
                        - ReceiverConnection.now())
                let nanoseconds =
                    Int(wait.components.seconds) * 1_000_000_000
                    + Int(wait.components.attoseconds / 1_000_000_000)
                guard stop.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .timedOut else { return }
                do {
                    try connection.send(.statusRequest)
                } catch {
                    return
                }
            }
        }
    }

    /// The next event the receiver pushes; waits as long as it takes (heartbeats keep a dead
    /// receiver from going unnoticed: their replies stop, and the connection breaks).
    /// - Throws: `CastError` `.connectionLost` when the receiver goes away.
    public func nextEvent() throws(CastError) -> PlaybackEvent {
        try nextEvent(timeReply: nil)
    }

    /// `nextEvent`, handing each `timeReply` on the way to `timeReply` with its arrival stamp (CLOCK_MONOTONIC ns):
    /// a group member's connection carries its clock exchange beside the events (GroupPlayback).
    func nextEvent(timeReply: ((TimeReply, Int64) -> Void)?) throws(CastError) -> PlaybackEvent {
        while true {
            switch try connection.nextAction() {
            case .event(let event): return event
            case .timeReply(let reply): timeReply?(reply, MonotonicClock.nanoseconds())
            case let other:
                throw CastError(.connectionLost, "\(printable(receiverName)) sent \(other) while an event was expected")
            }
        }
    }

    /// Sends a `timeRequest` on the control connection; returns its stamp (the reply comes through `nextEvent`).
    func sendTimeRequest() throws(CastError) -> Int64 { try connection.sendTimeRequest() }

    /// Sends a control (pause, resume, stop, seek, volume, mute, rate).
    public func control(_ action: PlaybackControl.Action) throws(CastError) {
        try connection.send(.control(PlaybackControl(action)))
    }

    /// Hands back the control connection of a session that finished (its reader took the finish and reads no more):
    /// the heartbeat ends, the media connection closes, and the connection is idle for another `play` (a group's
    /// queue plays its next file over it). The connection is the caller's from here: the playback is done with (not closed).
    func handBack() -> ReceiverConnection {
        heartbeatStop.signal()
        heartbeatDone.wait()
        media?.close()
        connection.releaseSession()
        return connection
    }

    /// Closes both connections.
    public func close() {
        heartbeatStop.signal()
        media?.close()
        connection.close()
    }
}

/// Serves a file over a media connection: answers each `mediaRead` with `mediaData`, on its own thread.
final class MediaServer: Sendable {
    private let tls: TLSConnection

    /// `subtitles`: the play request's subtitle file, served as resource 1 (`MediaRead.subtitles`).
    init(tls: TLSConnection, file: MediaFile, subtitles: MediaFile? = nil) {
        self.tls = tls
        startDetachedThread(name: "cast media") { [tls] in Self.serve(tls, file, subtitles) }
    }

    func close() { tls.close() }

    /// Where an answer's frame is built: its header, then the bytes read from the file straight after it, the same
    /// memory for every answer (fresh megabytes cost a page fault per 4 KiB).
    private static let answerHeaderSize = Frame.headerSize + 1 + 8

    private static func serve(_ tls: TLSConnection, _ file: MediaFile, _ subtitles: MediaFile?) {
        var decoder = FrameDecoder()
        let answer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: answerHeaderSize + MediaRead.maximumLength, alignment: 16)
        defer { answer.deallocate() }
        while true {
            guard let bytes = try? tls.read(maxCount: 64 * 1024, timeout: nil), !bytes.isEmpty else { return }
            decoder.feed(bytes)
            do {
                while let frame = try decoder.nextFrame() {
                    switch try Message(frame) {
                    case .mediaRead(let read):
                        let body = UnsafeMutableRawBufferPointer(
                            rebasing: answer[answerHeaderSize..<(answerHeaderSize + read.length)])
                        let count: Int
                        do throws(CastError) {
                            let served = read.resource == MediaRead.subtitles ? subtitles : file
                            guard let served else { throw CastError(.playback, "no subtitle file was sent") }
                            count = try served.read(offset: read.offset, into: body)
                        } catch {
                            let reply = Message.error(ErrorMessage(code: .mediaUnreadable, message: error.message))
                            try tls.write(reply.frame().encoded())
                            continue
                        }
                        // Frame.encoded's layout: length of type + payload, the type, mediaData's 8-byte offset.
                        answer.storeBytes(of: UInt32(1 + 8 + count).bigEndian, toByteOffset: 0, as: UInt32.self)
                        answer[Frame.headerSize] = MessageType.mediaData.rawValue
                        answer.storeBytes(
                            of: UInt64(bitPattern: read.offset).bigEndian, toByteOffset: Frame.headerSize + 1,
                            as: UInt64.self)
                        try tls.write(UnsafeRawBufferPointer(rebasing: answer[..<(answerHeaderSize + count)]))
                    case .error:
                        return
                    default:
                        return
                    }
                }
            } catch {
                return
            }
        }
    }
}
