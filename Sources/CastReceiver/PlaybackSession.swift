import CastMedia
import CastProtocol
import CastSecurity
import Foundation
import Synchronization

/// One play request from one sender: waits for its media connection (or opens its URL), runs the engine, pushes
/// every event to the sender that owns it (a Cast sender; an AirPlay client polls instead) and to the events log
/// and watchers (through `onEvent`), and ends once with a finish.
///
/// Thread-safety: mutable state lives in `state` (a Mutex). Events arrive on the player's serial
/// event queue; controls come from connection threads.
final class PlaybackSession: Sendable {
    /// The token the media connection presents.
    let token: String
    let request: PlayRequest
    let senderName: String
    /// Who started it (and hears its events directly, if a Cast sender).
    let owner: SessionOwner
    /// Where to start as a fraction of the duration (AirPlay `Start-Position`), applied once the duration is known.
    let startFraction: Double?
    /// The AirPlay client's `X-Apple-Session-ID`, when an AirPlay client started it with one.
    let airPlaySessionID: String?
    /// The picture it shows (an AirPlay client's `/photo`), held here and served to the engine like a sender's file;
    /// nil for media from a sender or a URL.
    let picture: MemorySource?
    private let engine: PlayerConfiguration
    /// How the URL reaches the network: a paired sender's, or a stranger's through castd's checks.
    private let urlAccess: URLAccess
    /// Whether the engine runs in a worker process (`DecoderProcess`) or here (`Player`).
    private let isolation: DecoderIsolation
    /// castd's idle window, which steps aside while a worker shows this session's video in a window of its own.
    private let idleWindow: VideoWindow?
    private let onEvent: @Sendable (PlaybackSession, PlaybackEvent) -> Void
    private let onEnd: @Sendable (PlaybackSession) -> Void
    private let state = Mutex(State())

    private struct State: ~Copyable {
        /// The engine, once the media connection arrived (or the URL was opened).
        var player: (any PlaybackDriver)?
        var source: RemoteSource?
        var finished = false
        /// Set when the receiver ends the session for its own reason (sender lost, take-over):
        /// the engine's own finish is replaced by this one.
        var overrideFinish: PlaybackEvent?
        /// The playback as its events (in order) tell it.
        var playback = PlaybackSnapshot()
        /// Whether `startFraction` was turned into a seek.
        var startApplied = false
        /// The receiver's output level, applied when the engine starts.
        var volume: (level: Double, muted: Bool) = (1, false)
        /// Where served media comes from: the media connection's peer.
        var mediaPeer: String?
        /// Makes images of the media for thumbnail requests; opened on the first request.
        var thumbnailer: (any SessionThumbnails)?
        /// Whether a picture was presented (`videoActive`).
        var pictureShown = false
        /// Whether `firstPicture` was left: a picture was presented, or the session finished without one.
        var firstPictureTold = false
    }

    init(
        request: PlayRequest, senderName: String, owner: SessionOwner, engine: PlayerConfiguration,
        isolation: DecoderIsolation = .off, idleWindow: VideoWindow? = nil, startFraction: Double? = nil,
        airPlaySessionID: String? = nil, urlAccess: URLAccess = .paired, picture: MemorySource? = nil,
        onEvent: @escaping @Sendable (PlaybackSession, PlaybackEvent) -> Void,
        onEnd: @escaping @Sendable (PlaybackSession) -> Void
    ) {
        var generator = SystemRandomNumberGenerator()
        self.token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        self.request = request
        self.senderName = senderName
        self.owner = owner
        self.startFraction = startFraction
        self.airPlaySessionID = airPlaySessionID
        self.urlAccess = urlAccess
        self.picture = picture
        var engine = engine
        engine.still = picture != nil
        engine.startTime = request.startTime ?? 0
        engine.audioLanguage = request.audioLanguage
        engine.autoplay = request.autoplay ?? true
        engine.subtitleLanguage = request.subtitleLanguage
        // The access log's start-up time counts from the play request, not from the media connection.
        engine.requestDate = Date()
        self.engine = engine
        self.isolation = isolation
        self.idleWindow = idleWindow
        self.onEvent = onEvent
        self.onEnd = onEnd
    }

    /// Whether the media connection has arrived (or the session ended without it).
    var hasMedia: Bool { state.withLock { $0.player != nil || $0.finished } }

    /// Whether the session has finished (its finish event was delivered).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Entered at creation, left once the finish went out and the receiver was let go (`onEnd`).
    private let ending: DispatchGroup = {
        let group = DispatchGroup()
        group.enter()
        return group
    }()

    /// Entered at creation, left once the first picture was presented or the session finished without one.
    private let firstPicture: DispatchGroup = {
        let group = DispatchGroup()
        group.enter()
        return group
    }()

    /// Blocks until the session presented its first picture (true), or finished without one or `timeout` passed
    /// (false).
    func waitUntilShown(timeout: Duration) -> Bool {
        guard firstPicture.wait(timeout: .now() + timeout.timeInterval) == .success else { return false }
        return state.withLock { $0.pictureShown }
    }

    /// Blocks until the session has ended (its finish written to the sender, `onEnd` called) or `timeout` passed;
    /// true if it ended.
    func waitUntilEnded(timeout: Duration) -> Bool {
        ending.wait(timeout: .now() + timeout.timeInterval) == .success
    }

    /// Another sender took over: this sender sees `interrupted`, then the finish.
    func interrupt(by newcomer: String) {
        handle(.playbackState(.interrupted))
        end(with: .finished(reason: .playbackError, error: "interrupted: \(newcomer) took over this receiver"))
    }

    /// Whether `writer` is this session's sender's connection.
    func belongs(to writer: MessageWriter) -> Bool { owner.writer === writer }

    /// Whether `writer` is a connection of this session's sender: its own, or another that presented the same key
    /// (a sender asking for thumbnails on a second connection). Another sender's is not, nor any connection when the
    /// owner presented no key and `writer` is not its own.
    func isOwnersSender(_ writer: MessageWriter) -> Bool {
        guard let ownerWriter = owner.writer else { return false }
        if ownerWriter === writer { return true }
        guard let ownerKey = ownerWriter.peerPublicKey, let key = writer.peerPublicKey else { return false }
        return ownerKey == key
    }

    /// Whether `owner` started this session.
    func belongs(to owner: SessionOwner) -> Bool { self.owner.isSame(as: owner) }

    /// The media connection arrived (from `peer`, `host:port`): start the engine on it.
    func attach(_ tls: TLSConnection, peer: String? = nil) {
        guard let media = request.media else {
            // A URL session has no media connection.
            tls.close()
            return
        }
        let source = RemoteSource(tls: tls, descriptor: media)
        let player = makeEngine(source: source, url: nil)
        let start = state.withLock { state -> Bool in
            guard !state.finished, state.player == nil else { return false }
            state.player = player
            state.source = source
            state.mediaPeer = peer
            return true
        }
        guard start else {
            source.close()
            return
        }
        let volume = state.withLock { $0.volume }
        player.perform(.volume(volume.level))
        player.perform(.mute(volume.muted))
        player.start()
    }

    /// A play with a URL: the engine opens it itself, at once (there is no media connection). The credentials
    /// go to FFmpeg in the URL's userinfo, percent-encoded; they are never logged.
    func startURL() {
        guard let url = request.url else { return }
        run(makeEngine(source: nil, url: Self.engineURL(url, username: request.username, password: request.password)))
    }

    /// A picture's session: the engine shows the picture held here, at once (there is no media connection).
    func startPicture() {
        guard let picture else { return }
        run(makeEngine(source: picture, url: nil))
    }

    /// Starts `player` at the receiver's level, unless the session ended or has an engine already.
    private func run(_ player: any PlaybackDriver) {
        let start = state.withLock { state -> Bool in
            guard !state.finished, state.player == nil else { return false }
            state.player = player
            return true
        }
        guard start else { return }
        let volume = state.withLock { $0.volume }
        player.perform(.volume(volume.level))
        player.perform(.mute(volume.muted))
        player.start()
    }

    /// Whether the receiver ended the session for a reason of its own (a take-over, a stop, a lost sender) rather
    /// than the engine.
    var wasEndedByReceiver: Bool { state.withLock { $0.overrideFinish != nil } }

    /// The engine for served media (`source`) or a URL: in a worker process when decoder isolation is on (a window
    /// session's worker shows the video in a window of its own), otherwise here. The engine holds the session
    /// strongly on purpose: a session that another sender took over is no longer held by the receiver, yet must live
    /// to deliver its finish. The cycle (session → engine → its event closure → session) is broken when the finish
    /// arrives.
    private func makeEngine(source: (any ServedMedia)?, url: String?) -> any PlaybackDriver {
        if case .on(let limits) = isolation {
            let volume = state.withLock { $0.volume }
            let media = source.map { WorkerStart.Media(size: $0.size, seekable: $0.isSeekable, nameHint: $0.nameHint) }
            var start = WorkerStart(
                media: media, url: url, configuration: engine, volume: volume.level, muted: volume.muted, limits: limits
            )
            start.subtitles = request.subtitles
            start.mirror = request.mirror
            return DecoderProcess(start: start, source: source, urlAccess: urlAccess, idleWindow: idleWindow) { event in
                self.handle(event)
            }
        }
        if let source, request.mirror == true {
            // Live: no read-ahead between the media connection and the decoder.
            return MirrorPlayer(source: source, configuration: engine) { event in self.handle(event) }
        }
        if let source {
            var engine = engine
            // Decoding in castd (isolation off): the subtitle file is read here, whole, before the engine starts.
            engine.subtitleFile = request.subtitles.flatMap { file in
                source.subtitles(file).flatMap { SubtitleFileReader.read(file, from: $0) }
            }
            // The network read happens on the read-ahead thread; the engine reads from its buffer.
            return Player(source: ReadAheadSource(source), configuration: engine) { event in self.handle(event) }
        }
        return Player(url: url ?? "", proxy: urlAccess.sharedProxy, formats: urlAccess.formats, configuration: engine) {
            event in self.handle(event)
        }
    }

    /// `url` with `username:password@` after its scheme, each percent-encoded (FFmpeg decodes them).
    static func engineURL(_ url: String, username: String?, password: String?) -> String {
        guard let username, let marker = url.range(of: "://") else { return url }
        var unreserved = CharacterSet(charactersIn: "-._~")
        unreserved.formUnion(CharacterSet(charactersIn: "a"..."z"))
        unreserved.formUnion(CharacterSet(charactersIn: "A"..."Z"))
        unreserved.formUnion(CharacterSet(charactersIn: "0"..."9"))
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }
        let userinfo = encoded(username) + (password.map { ":" + encoded($0) } ?? "") + "@"
        return String(url[..<marker.upperBound]) + userinfo + String(url[marker.upperBound...])
    }

    /// Answers each time of `request` on `writer`'s connection, in order: the PNG in parts, or an error. The images
    /// come from a thumbnailer of the session's own, reading the media apart from the engine (over the same media
    /// connection, or from the URL again): in a worker process when decoder isolation is on (whatever the video
    /// output), else here. `onFailure` is told why a thumbnail worker ended early (once per worker).
    func thumbnails(
        _ request: ThumbnailRequest, writer: MessageWriter, onFailure: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        let thumbnailer = state.withLock { state -> (any SessionThumbnails)? in
            guard !state.finished else { return nil }
            if let existing = state.thumbnailer { return existing }
            let url = self.request.url.map {
                Self.engineURL($0, username: self.request.username, password: self.request.password)
            }
            let source = url == nil ? state.source?.anotherReader() : nil
            guard url != nil || source != nil else { return nil }
            let made: any SessionThumbnails
            if case .on(let limits) = isolation {
                made = ThumbnailProcess(
                    source: source, url: url, urlAccess: urlAccess, limits: limits, onFailure: onFailure)
            } else {
                made = LocalThumbnails(
                    input: source.map { .source($0) }
                        ?? .url(url ?? "", proxy: urlAccess.sharedProxy, formats: urlAccess.formats))
            }
            state.thumbnailer = made
            return made
        }
        let id = request.request
        guard let thumbnailer else {
            for (index, time) in request.times.enumerated() {
                try? writer.send(
                    .thumbnail(ThumbnailPart(request: id, index: index, time: time, error: "nothing plays")))
            }
            return
        }
        thumbnailer.request(request, writer: writer)
    }

    /// Cancels the thumbnail requests not answered yet.
    func cancelThumbnails() {
        state.withLock { $0.thumbnailer }?.cancelAll()
    }

    /// Applies a control from a sender.
    func control(_ action: PlaybackControl.Action) {
        let player = state.withLock { $0.player }
        switch action {
        case .stop: end(with: .finished(reason: .userExited, error: nil))
        case .rate(let rate):
            player?.perform(action)
            handle(.rate(rate))
        case .accessLog:
            // The engine answers with an `accessLog` event; before it runs, the session answers itself.
            guard let player else {
                handle(.accessLog(AccessLogEntry(playbackStartDate: Date().timeIntervalSince1970)))
                return
            }
            player.perform(action)
        case .pause, .resume, .resumeAt, .align, .anchor, .seek, .subtitles, .audio: player?.perform(action)
        case .join(let receiver):
            // For the sender that plays here alone: it keeps the group together (docs/multiroom.md).
            try? owner.writer?.send(.event(.joinRequest(receiver: receiver)))
        case .skip(let move):
            // For the sender that plays here: it keeps the queue (docs/protocol.md).
            try? owner.writer?.send(.event(.skipRequest(move)))
        case .move(let receiver):
            // For the sender that plays here: it serves the media, so it starts it on the other receiver (`cast move`).
            try? owner.writer?.send(.event(.moveRequest(receiver: receiver)))
        case .volume, .mute, .scaling:
            preconditionFailure("the receiver applies volume and scaling itself")
        }
    }

    /// Fits the session's pictures by `mode` from now on (the receiver's setting; see `Receiver.control`).
    func setScalingMode(_ mode: ScalingMode) {
        state.withLock { $0.player }?.perform(.scaling(mode))
    }

    /// Sets the output level (the receiver's, which this session plays at) and tells the sender.
    func apply(volume: Double, muted: Bool, announce: Bool) {
        let player = state.withLock { state -> (any PlaybackDriver)? in
            state.volume = (volume, muted)
            return state.player
        }
        player?.perform(.volume(volume))
        player?.perform(.mute(muted))
        if announce { handle(.volume(volume, muted: muted)) }
    }

    /// Ends the session for a reason of the receiver's; the sender (and the log) see `finish`.
    func end(with finish: PlaybackEvent) {
        let player = state.withLock { state -> (any PlaybackDriver)? in
            if state.overrideFinish == nil, !state.finished { state.overrideFinish = finish }
            return state.player
        }
        if let player {
            player.perform(.stop)
        } else {
            // No media connection yet: nothing runs, so finish here.
            handle(.playbackState(.stopped))
            handle(finish)
        }
    }

    /// The session's playback now (its finish, once finished, is never nil: the engine's, or the receiver's own).
    func snapshot() -> PlaybackSnapshot {
        state.withLock { state in
            var now = state.playback
            if state.finished && now.finish == nil { now.finish = .init(reason: .playbackEnded) }
            return now
        }
    }

    /// What `status` reports while this session runs.
    func status(name: String, id: String) -> ReceiverStatus {
        let now = snapshot()
        // Only a playing clock moves, and at the rate (0.5 to 2 on castd's engine; 0 from an AirPlay client).
        var status = ReceiverStatus(
            name: name, id: id, state: now.state,
            title: request.mirror == true ? "mirroring from \(senderName)" : request.title,
            position: now.position(now: Date().timeIntervalSince1970), duration: now.duration)
        if !now.loadState.isEmpty { status.loadState = now.loadState }
        status.playableDuration = now.playableDuration
        status.linkRate = now.linkRate
        status.tracks = now.tracks
        status.sync = now.sync
        status.group = request.group
        status.queue = request.queue
        return status
    }

    private func handle(_ event: PlaybackEvent) {
        var event = event
        var errorLog: ErrorLogEntry?
        var tellFirstPicture = false
        var isFinish = false
        if case .finished = event { isFinish = true }
        let (deliver, ended, source) = state.withLock { state -> (Bool, Bool, RemoteSource?) in
            guard !state.finished else { return (false, false, nil) }
            if !state.firstPictureTold, event == .videoActive(true) || isFinish {
                state.firstPictureTold = true
                tellFirstPicture = true
                state.pictureShown = event == .videoActive(true)
            }
            switch event {
            case .accessLog(var entry):
                entry.uri = request.url.map(URLInput.redacted) ?? request.title
                entry.serverAddress = entry.serverAddress ?? state.mediaPeer
                entry.bytesFetched = state.source?.bytesFetched
                entry.mediaSize = request.media?.seekable == true ? request.media?.size : nil
                event = .accessLog(entry)
            case .errorLog(var entry):
                entry.uri = request.url.map(URLInput.redacted) ?? request.title
                entry.serverAddress = entry.serverAddress ?? state.mediaPeer
                event = .errorLog(entry)
            case .finished:
                if let override = state.overrideFinish {
                    event = override
                    // The receiver's own reason (a lost sender, a take-over) is an error the engine did not see.
                    if case .finished(.playbackError, let message, _) = override {
                        errorLog = ErrorLogEntry(
                            date: Date().timeIntervalSince1970,
                            uri: request.url.map(URLInput.redacted) ?? request.title,
                            serverAddress: state.mediaPeer, domain: "receiver", comment: message ?? "playback error")
                    }
                }
                state.playback.apply(event)
                state.finished = true
                state.player = nil
                state.thumbnailer?.close()
                state.thumbnailer = nil
                return (true, true, state.source)
            default: state.playback.apply(event)
            }
            return (true, false, nil)
        }
        if tellFirstPicture { firstPicture.leave() }
        guard deliver else { return }
        if let errorLog {
            onEvent(self, .errorLog(errorLog))
            try? owner.writer?.send(.event(.errorLog(errorLog)))
        }
        if case .durationAvailable(let duration) = event { applyStartFraction(duration: duration) }
        onEvent(self, event)
        // A sender that went away cannot be told; the log still is. An AirPlay client is never written to unasked.
        try? owner.writer?.send(.event(event))
        if ended {
            source?.close()
            onEnd(self)
            ending.leave()
        }
    }

    /// An AirPlay `Start-Position` is a fraction of a duration the client does not know: once the engine knows it,
    /// seek there (the engine holds a seek asked for before it plays and starts from there).
    private func applyStartFraction(duration: Double) {
        guard let fraction = startFraction, fraction > 0, duration > 0 else { return }
        let player = state.withLock { state -> (any PlaybackDriver)? in
            guard !state.startApplied else { return nil }
            state.startApplied = true
            return state.player
        }
        player?.perform(.seek(position: fraction * duration, exact: false))
    }
}
