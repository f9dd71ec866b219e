import CastAirPlay
import CastBase
import CastDiscovery
public import CastMedia
public import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The receiving service that `castd` runs: it listens for senders over TLS, answers them, and
/// advertises itself over mDNS.
///
/// Thread-safety: all mutable state is inside `state` (a `Mutex`); the accept loop and each
/// connection run on their own threads because every call they make blocks.
public final class Receiver: Sendable {
    /// The configuration it runs with.
    public let configuration: ReceiverConfiguration
    /// The session rules, owners named by their connection and sessions by their token.
    typealias Rules = SessionRules<ObjectIdentifier, String>
    /// Where the receiver's monotonic time (`clockNow()`) counts from.
    private let epoch = ContinuousClock.now
    /// The receiver's id: the fingerprint of its public key.
    public let id: String
    private let identity: Identity
    let logger: Logger
    /// Pairing: the store of paired senders, the attempt limiter.
    let pairing: PairingDesk
    /// The open connections of paired senders, closed when their sender is unpaired.
    let admitted = AdmittedConnections()
    private let state: Mutex<State>

    private struct State: ~Copyable {
        init(name: String, scaling: ScalingMode, door: ConnectionDoor<Int32>, rules: Rules) {
            self.name = name
            self.scaling = scaling
            self.door = door
            self.rules = rules
        }

        var listenFD: Int32 = -1
        var port: UInt16 = 0
        /// Who has a place among the connections (created with the limits in `init`), each unadmitted connection's
        /// wake-up descriptor (owned here), and how often a connection turned away is logged.
        var door: ConnectionDoor<Int32>
        var advertiser: Advertiser?
        /// The AirPlay video service and its `_airplay._tcp` advertisement, with `--airplay-video`.
        var airPlay: AirPlayVideoService?
        var airPlayAdvertiser: Advertiser?
        var stopped = false
        /// The watch of the state directory that wakes the revocation watcher (closed by `stop`).
        var revocationWatch: DirectoryWatch?
        /// Connections that asked to be told every event (`cast watch`).
        var watchers: [MessageWriter] = []
        /// The output level, 0...1, and mute.
        var volume: (level: Double, muted: Bool) = (1, false)
        /// The friendly name now (SIGHUP may change it).
        var name: String
        /// The session that owns the screen and the speakers, if any. One at a time.
        var session: PlaybackSession?
        /// Who may play, and when a session is ended for the receiver's own reasons (SessionRules).
        var rules: Rules
        /// The window held open between sessions (video out `window` or `fullscreen`), showing the idle screen; hidden
        /// while a decoder worker shows a session's video in a window of its own.
        var window: VideoWindow?
        /// The PIN of the pairing attempt that is open, shown on the idle screen.
        var pin: String?
        /// How the window fits pictures; a sender may change it (like the volume, it outlives sessions).
        var scaling: ScalingMode
    }

    /// Loads (or creates) the identity in the state directory.
    /// - Throws: when the state directory or the key cannot be used; the message says why.
    public init(configuration: ReceiverConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        let limits = configuration.limits
        let door = ConnectionDoor<Int32>(
            limits: .init(
                maximumAdmitted: limits.maximumConnections, maximumUnadmitted: limits.maximumUnadmittedConnections,
                maximumUnadmittedPerSource: limits.maximumUnadmittedPerSource))
        let rules = Rules(
            policy: configuration.takeover,
            limits: .init(
                mediaConnection: configuration.limits.mediaConnectionTimeout,
                senderSilence: configuration.limits.senderTimeout))
        self.state = Mutex(
            State(
                name: configuration.name, scaling: configuration.engine.scalingMode, door: door, rules: rules))
        self.identity = try Identity.loadOrCreate(directory: configuration.stateDirectory)
        self.id = identity.fingerprint
        self.pairing = PairingDesk(
            auth: configuration.auth, password: configuration.password, stateDirectory: configuration.stateDirectory,
            identity: identity, logger: logger, attemptLimit: configuration.limits.pairingAttemptLimit)
        if let problem = pairing.storeProblem, configuration.auth != .none {
            logger.warning("pairings cannot be stored (\(problem)): new senders cannot pair until that is fixed")
        }
        pairing.observePIN { [weak self] pin in
            self?.state.withLock { $0.pin = pin }
            self?.updateIdleScreen()
        }
    }

    /// What a sender learns from the advertisement.
    public var serviceRecord: ServiceRecord {
        ServiceRecord(
            id: id, friendlyName: name, features: [.audio, .video, .mediaConnection, .url], auth: configuration.auth)
    }

    /// The port it listens on, once started.
    public var port: UInt16 { state.withLock { $0.port } }

    /// Binds the port, starts accepting and advertising. Returns the bound port.
    @discardableResult
    public func start() throws -> UInt16 {
        if configuration.airPlayVideoPort != nil {
            // AirPlay clients' URLs are fetched through a CheckedProxy, which FFmpeg skips for hosts in $no_proxy:
            // cleared before any thread reads the environment or a worker inherits it.
            unsetenv("no_proxy")
            unsetenv("NO_PROXY")
        }
        let (fd, port) = try TCP.listen(host: configuration.listenAddress, port: configuration.port)
        state.withLock {
            $0.listenFD = fd
            $0.port = port
        }
        logger.info(
            "listening on port \(port) (address \(configuration.listenAddress), id \(id), auth \(configuration.auth.rawValue))"
        )
        if MonotonicClock.testSkew != 0 {
            logger.warning(
                "test only: this castd's CLOCK_MONOTONIC runs \(MonotonicClock.testSkew * 1e6) ppm off (CAST_TEST_CLOCK_SKEW_PPM); never set it on a real box"
            )
        }
        startDetachedThread(name: "castd accept") { [self] in acceptLoop(fd) }
        if configuration.advertise { startAdvertising(port: port) }
        if configuration.auth != .none { watchRevocations() }
        // The first session's worker is ready before it is asked for.
        if case .on = configuration.decoderIsolation {
            let logger = self.logger
            let hidden = [configuration.stateDirectory] + configuration.decoderHiddenFiles.prefix(3)
            // Spares are for sessions: they have the display when castd shows video in a window.
            let window: Bool
            switch configuration.engine.video {
            case .window, .fullscreen: window = true
            case .none, .framemd5, .hosted: window = false
            }
            SpareWorker.shared.configure(sandbox: WorkerSandbox(hiding: hidden).with(display: window)) { report in
                Self.logSandbox(report, logger: logger)
            }
            // A worker of castd's user could otherwise read castd's files through /proc/PID/root (in castd's mount
            // namespace) or its memory through /proc/PID/mem: an undumpable castd refuses both to its user.
            WorkerSandbox.protectCastd()
            SpareWorker.shared.refill()
        }
        if let airPlayPort = configuration.airPlayVideoPort {
            let service = AirPlayVideoService(receiver: self, logger: logger)
            let bound = try service.start(host: configuration.listenAddress, port: airPlayPort)
            state.withLock { $0.airPlay = service }
            logger.info(
                "AirPlay video on port \(bound) (deviceid \(service.device.deviceID)): anyone on this network can make "
                    + "this receiver play an http(s) URL")
            if configuration.advertise { startAirPlayAdvertising(port: bound) }
        }
        openIdleScreen()
        return port
    }

    /// What the first decoder worker's sandbox came to, said once at start (docs/security.md, "Decoder isolation").
    private static func logSandbox(_ report: SandboxReport, logger: Logger) {
        if let problem = report.mountProblem {
            logger.warning(
                "decoder sandbox: no private mount namespace (\(problem)): a compromised decoder could read the state "
                    + "directory")
        } else {
            logger.info("decoder sandbox: the state directory is hidden from decoder workers (private mount namespace)")
        }
        if let problem = report.networkProblem {
            logger.warning(
                "decoder sandbox: no private network (\(problem)): AirPlay clients' URLs are refused, and a compromised "
                    + "decoder could connect wherever castd can")
        } else {
            logger.info(
                "decoder sandbox: decoder workers have no network but their own loopback (URLs through castd's proxy)")
        }
        if let problem = report.displayProblem {
            logger.warning("decoder sandbox: workers without a window share castd's System V IPC (\(problem))")
        }
        if let problem = report.filterProblem {
            logger.warning("decoder sandbox: no system call filter (\(problem))")
        } else {
            logger.info("decoder sandbox: system call filter on (seccomp)")
        }
    }

    /// With video out `window` or `fullscreen`, holds the window open from the start, so that it shows the idle
    /// screen (the name, a pairing PIN) whenever nothing plays. Without a display the receiver still runs: each
    /// playback then reports the error itself.
    private func openIdleScreen() {
        let fullscreen: Bool
        switch configuration.engine.video {
        case .window: fullscreen = false
        case .fullscreen: fullscreen = true
        case .none, .framemd5, .hosted: return
        }
        do {
            let window = try VideoWindow(
                fullscreen: fullscreen, scalingMode: state.withLock { $0.scaling }, log: .standardError)
            state.withLock { $0.window = window }
            updateIdleScreen()
        } catch {
            logger.warning("no idle screen: \(error)")
        }
    }

    /// Shows the current name and PIN on the idle screen, or while no PIN is open, how to use the receiver.
    private func updateIdleScreen() {
        let auth = configuration.auth
        let (window, screen) = state.withLock { state in
            let hint = Self.idleHint(name: state.name, auth: auth)
            return (state.window, IdleScreen(name: state.name, pin: state.pin, hint: hint))
        }
        window?.setIdleScreen(screen)
    }

    /// What the idle screen says to do: how to pair, or with `--auth none` how to play.
    static func idleHint(name: String, auth: AuthMode) -> String {
        auth == .none ? "To play: cast send FILE --to \"\(name)\"" : "To pair: cast pair \"\(name)\""
    }

    /// The port of the AirPlay video service, once started with `--airplay-video`.
    public var airPlayPort: UInt16? { state.withLock { $0.airPlay?.port } }

    /// Stops the receiver's services, in the reverse of the order `start` started them (docs/architecture.md,
    /// "castd's services"): the advertisements go first, so that no sender finds a receiver that no longer
    /// answers; then the AirPlay service, the listener (no new connection is accepted) and the revocation watch
    /// (its thread ends); then the session (its sender is told); then the spare worker and the idle window.
    /// Connections in progress end when their peers go. Idempotent.
    public func stop() {
        let (fd, advertisers, airPlay, session, window, revocationWatch) = state.withLock {
            state -> (Int32, [Advertiser], AirPlayVideoService?, PlaybackSession?, VideoWindow?, DirectoryWatch?) in
            state.stopped = true
            defer {
                state.advertiser = nil
                state.airPlayAdvertiser = nil
                state.window = nil
                state.revocationWatch = nil
            }
            return (
                state.listenFD, [state.advertiser, state.airPlayAdvertiser].compactMap { $0 }, state.airPlay,
                state.session, state.window, state.revocationWatch
            )
        }
        for advertiser in advertisers { advertiser.stop() }
        airPlay?.stop()
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        revocationWatch?.close()
        // A code beside the reason: senders that know it retry this receiver (it may be restarting); others see an
        // ordinary playback error.
        session?.end(
            with: .finished(reason: .playbackError, error: "the receiver is shutting down", code: .receiverShutdown))

        // castd is going: its waiting worker goes with it now, not when its death signal reaches it.
        SpareWorker.shared.close()
        window?.close()
    }

    /// The status a `statusRequest` is answered with.
    func currentStatus() -> ReceiverStatus {
        let (session, name, volume) = state.withLock { ($0.session, $0.name, $0.volume) }
        var status = session?.status(name: name, id: id) ?? ReceiverStatus(name: name, id: id, state: .stopped)
        status.volume = volume.level
        status.muted = volume.muted
        return status
    }

    /// The friendly name.
    public var name: String { state.withLock { $0.name } }

    /// Takes a new friendly name (SIGHUP with a changed config): re-advertises under it.
    public func rename(to newName: String) {
        let (old, advertiser, port, airPlayAdvertiser, airPlayPort) = state.withLock {
            state -> (String, Advertiser?, UInt16, Advertiser?, UInt16?) in
            defer { state.name = newName }
            return (state.name, state.advertiser, state.port, state.airPlayAdvertiser, state.airPlay?.port)
        }
        guard old != newName else { return }
        logger.info("renamed from \"\(old)\" to \"\(newName)\"")
        updateIdleScreen()
        if let advertiser {
            advertiser.stop()
            startAdvertising(port: port)
        }
        if let airPlayAdvertiser, let airPlayPort {
            airPlayAdvertiser.stop()
            startAirPlayAdvertising(port: airPlayPort)
        }
    }

    /// Fits pictures by `mode` from now on: the picture on screen at once, and every later session (a sender's
    /// `scaling` control, or SIGHUP with a changed config). It belongs to the window, not to a session.
    public func setScalingMode(_ mode: ScalingMode) {
        let (old, window, session) = state.withLock { state -> (ScalingMode, VideoWindow?, PlaybackSession?) in
            defer { state.scaling = mode }
            return (state.scaling, state.window, state.session)
        }
        window?.setScalingMode(mode)
        session?.setScalingMode(mode)
        if old != mode { logger.info("scaling mode: \(mode.rawValue)") }
    }

    /// Starts a session for a Cast sender's play request (see `beginSession`). Returns the token its media
    /// connection must present; nil when the take-over policy is `deny` and another sender's session runs.
    func startSession(_ request: PlayRequest, senderName: String, writer: MessageWriter) -> String? {
        beginSession(request, senderName: senderName, owner: .castSender(writer))?.token
    }

    /// Starts a session for `owner`, replacing the one that plays (whose owner sees `interrupted`, then the
    /// finish). Nil when the take-over policy is `deny` and a session of another owner runs. The policy is the
    /// same whoever asks: a Cast sender or an AirPlay client.
    func beginSession(
        _ request: PlayRequest, senderName: String, owner: SessionOwner, startFraction: Double? = nil,
        airPlaySessionID: String? = nil, urlAccess: URLAccess = .paired
    ) -> PlaybackSession? {
        let logger = self.logger
        let events = configuration.events
        var engine = configuration.engine
        let (scaling, idleWindow) = state.withLock { ($0.scaling, $0.window) }
        engine.scalingMode = scaling
        let session = PlaybackSession(
            request: request, senderName: senderName, owner: owner, engine: engine,
            isolation: configuration.decoderIsolation, idleWindow: idleWindow, startFraction: startFraction,
            airPlaySessionID: airPlaySessionID, urlAccess: urlAccess,
            onEvent: { [weak self] session, event in
                events?.write(event)
                self?.tellWatchers(event, except: session)
                if case .finished(let reason, let error, _) = event {
                    self?.state.withLock { $0.rules.finished(session.token) }
                    logger.info(
                        "\"\(session.request.title)\" from \(session.senderName) finished: \(reason.rawValue)\(error.map { " (\($0))" } ?? "")"
                    )
                }
            },
            onEnd: { [weak self] session in
                self?.state.withLock { state in
                    state.rules.finished(session.token)
                    if state.session === session { state.session = nil }
                }
            })
        let now = clockNow()
        let (previous, decision) = state.withLock { state -> (PlaybackSession?, Rules.Decision) in
            let decision = state.rules.request(
                session.token, by: owner.identity, needsMedia: request.url == nil, watchesSender: owner.writer != nil,
                now: now)
            let previous = state.session
            if case .start = decision { state.session = session }
            return (previous, decision)
        }
        switch decision {
        case .refuse:
            logger.info(
                "\(senderName) asked to play; refused: busy with \(previous?.senderName ?? "another sender") (takeover deny)"
            )
            return nil
        case .start(let interrupted):
            if let previous, previous.token == interrupted {
                logger.info("\(senderName) takes over from \(previous.senderName)")
                previous.interrupt(by: senderName)
            }
        }
        logger.info(
            request.mirror == true ? "mirroring from \(senderName)" : "\(senderName) plays \"\(request.title)\"")
        let level = state.withLock { $0.volume }
        session.apply(volume: level.level, muted: level.muted, announce: false)
        // The media connection's deadline; a Cast sender's silence (an AirPlay client's session ends with its
        // connection).
        watch(session, writer: owner.writer)
        // Watchers (`cast watch`) hear what plays now, and where it is in its queue, before its events.
        let status = currentStatus()
        for watcher in state.withLock({ $0.watchers }) where !session.belongs(to: watcher) {
            try? watcher.send(.status(status))
        }
        return session
    }

    /// The session that owns the screen and the speakers now, if any.
    var currentSession: PlaybackSession? { state.withLock { $0.session } }

    /// The sender was sent `playAccepted` for `token`: a URL session starts its engine now, so that no event can
    /// reach the sender before the acceptance.
    func accepted(token: String) {
        guard let session = state.withLock({ $0.session }), session.token == token, session.request.url != nil else {
            return
        }
        session.startURL()
    }

    /// Hands a media connection to the session whose token it presented; false when there is none.
    func attachMedia(token: String, tls: TLSConnection, peer: String? = nil) -> Bool {
        let session = state.withLock { state -> PlaybackSession? in
            guard let session = state.session, session.token == token else { return nil }
            state.rules.mediaArrived(token)
            return session
        }
        guard let session else { return false }
        watchAdmitted(tls, sender: session.senderName, peer: peer ?? "?")
        session.attach(tls, peer: peer)
        return true
    }

    /// A control from a sender acts on the session that plays now, whoever started it.
    func control(_ action: PlaybackControl.Action) -> Bool {
        switch action {
        case .volume, .mute:
            // The level belongs to the receiver (like a TV's): it holds with nothing playing and
            // carries over to the next session.
            let (session, level) = state.withLock { state -> (PlaybackSession?, (Double, Bool)) in
                if case .volume(let value) = action { state.volume.level = value }
                if case .mute(let value) = action { state.volume.muted = value }
                return (state.session, state.volume)
            }
            session?.apply(volume: level.0, muted: level.1, announce: true)
            return true
        case .scaling(let word):
            setScalingMode(word)
            return true
        default:
            guard let session = state.withLock({ $0.session }) else { return false }
            if case .resumeAt(let instant) = action {
                let ahead = Double(instant - MonotonicClock.nanoseconds()) / 1e6
                logger.info(
                    "resume scheduled at \(instant) (CLOCK_MONOTONIC ns, \(String(format: "%.1f", ahead)) ms ahead)")
            }
            session.control(action)
            return true
        }
    }

    /// Carries out the session rules for `session` until it ends: asks them when they say, and ends the session with
    /// their reason (a media connection that did not arrive in time, a sender silent for too long).
    private func watch(_ session: PlaybackSession, writer: MessageWriter?) {
        let now = clockNow()
        let (verdict, next) = state.withLock { state in
            state.rules.current?.token == session.token
                ? (state.rules.check(now: now, senderSilence: writer?.silence), state.rules.nextCheck(now: now))
                : (nil, nil)
        }
        if let verdict {
            if case .senderLost(let limit) = verdict.ending {
                logger.warning("the sender \(session.senderName) has been silent for \(limit); stopping")
            }
            session.end(with: .finished(reason: .playbackError, error: verdict.ending.message))
            return
        }
        guard let next else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + (next - now).timeInterval) { [weak self, weak session] in
            guard let self, let session, !session.isFinished else { return }
            watch(session, writer: writer)
        }
    }

    /// The receiver's monotonic time, as the session rules take it.
    private func clockNow() -> Duration { ContinuousClock.now - epoch }

    /// How often the pairing store is looked at for senders unpaired while connected when its directory cannot be
    /// watched (inotify refused, or the directory was removed): an `lstat` of the store, and a read only when another
    /// process replaced it, so that `castd --unpair` takes effect within this.
    static let revocationCheckInterval: Duration = .milliseconds(250)

    /// Keeps an admitted connection (control or media) so that it is closed if its sender is unpaired; under
    /// `--auth none` there is no pairing to lose.
    func watchAdmitted(_ tls: TLSConnection, sender: String, peer: String) {
        if configuration.auth != .none { admitted.add(tls, sender: sender, peer: peer) }
    }

    /// Closes the connections of senders unpaired since they were admitted whenever the state directory changes
    /// (`castd --unpair` replaces the pairing store by rename): a thread waits on an inotify watch of it, so the
    /// change takes effect at once and an idle receiver never wakes to look. Where the directory cannot be watched,
    /// the store is looked at every `revocationCheckInterval` instead, and the log says so.
    private func watchRevocations() {
        let watch: DirectoryWatch
        do {
            watch = try DirectoryWatch(directory: configuration.stateDirectory)
        } catch {
            logger.warning(
                "cannot watch \(configuration.stateDirectory) for unpaired senders (\(error)); "
                    + "looking at the pairing store every \(Self.revocationCheckInterval) instead")
            pollRevocations()
            return
        }
        let started = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.revocationWatch = watch
            return true
        }
        guard started else { return }
        startDetachedThread(name: "castd revocations") { [weak self] in
            while true {
                let event = watch.wait()
                guard let self else { return }
                switch event {
                case .changed:
                    closeRevokedConnections()
                case .closed:
                    return
                case .directoryGone:
                    logger.warning(
                        "the state directory \(watch.directory) was removed or moved; "
                            + "looking at the pairing store every \(Self.revocationCheckInterval) instead")
                    closeRevokedConnections()
                    pollRevocations()
                    return
                }
            }
        }
    }

    /// Closes the connections of senders unpaired since they were admitted, then looks again after the interval:
    /// `watchRevocations` without inotify.
    private func pollRevocations() {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.revocationCheckInterval.timeInterval) {
            [weak self] in
            guard let self, !state.withLock({ $0.stopped }) else { return }
            closeRevokedConnections()
            pollRevocations()
        }
    }

    /// Closes every connection of a sender that is no longer paired (`castd --unpair`, or the store edited by
    /// another process): its control connection ends, and with it the session it plays and its media connection.
    /// Called when the state directory changes and on SIGHUP; does nothing under `--auth none`.
    public func closeRevokedConnections() {
        guard configuration.auth != .none, !admitted.isEmpty else { return }
        for (sender, peer) in admitted.closeRevoked(isPaired: { pairing.isPaired($0) }) {
            logger.warning("sender \"\(sender)\" is no longer paired: closed its connection from \(peer)")
        }
    }

    /// The operator reopens pairing after failed attempts closed it (SIGHUP); nothing changes when it is open.
    public func reopenPairing() {
        pairing.reopen()
    }

    /// Stops playback for shutdown: the sender is told, and this returns once the session has
    /// ended and its finish was written to the sender (or after `timeout`).
    public func shutdown(timeout: Duration = .milliseconds(1500)) {
        let session = state.withLock { $0.session }
        stop()
        guard let session else { return }
        // The session lets go of the receiver (`onEnd`) only after its finish went out: exiting earlier could cut
        // the finish off, and the sender would see a lost connection instead of a shutdown.
        _ = session.waitUntilEnded(timeout: timeout)
    }

    /// Answers a thumbnail request with images of the media that plays, on `writer`'s connection: only to the
    /// session's own sender (`isOwnersSender`: the images show what another sender plays, and making them costs a
    /// decoder). With nothing playing, or to another sender, every time is answered with an error.
    func thumbnails(_ request: ThumbnailRequest, writer: MessageWriter) {
        func refuse(_ why: String) {
            for (index, time) in request.times.enumerated() {
                try? writer.send(
                    .thumbnail(ThumbnailPart(request: request.request, index: index, time: time, error: why)))
            }
        }
        guard let session = state.withLock({ $0.session }) else { return refuse("nothing plays") }
        guard session.isOwnersSender(writer) else { return refuse(Self.anotherSendersThumbnails) }
        let logger = self.logger
        let title = session.request.title
        session.thumbnails(request, writer: writer) { failure in
            logger.warning("thumbnails of \"\(title)\": \(failure)")
        }
    }

    /// Cancels the thumbnail requests not answered yet (each is answered `cancelled`), when `writer` is the session's
    /// own sender's (another sender has none to cancel).
    func cancelThumbnails(writer: MessageWriter) {
        guard let session = state.withLock({ $0.session }), session.isOwnersSender(writer) else { return }
        session.cancelThumbnails()
    }

    /// The error of each time of a thumbnail request from a sender whose session does not play.
    static let anotherSendersThumbnails = "what plays is another sender's"

    /// Adds a connection to those told every event.
    func addWatcher(_ writer: MessageWriter) {
        state.withLock { $0.watchers.append(writer) }
    }

    private func tellWatchers(_ event: PlaybackEvent, except session: PlaybackSession) {
        let watchers = state.withLock { $0.watchers }
        for watcher in watchers where !session.belongs(to: watcher) {
            try? watcher.send(.event(event))
        }
    }

    /// A sender's control connection ended: it is no longer a watcher, and its session, if still
    /// playing, stops.
    func senderLost(_ writer: MessageWriter, name: String) {
        state.withLock { $0.watchers.removeAll { $0 === writer } }
        // A session that finished is not playing, though the receiver may not have let go of it yet: its sender
        // hears the finish (and may hang up) just before the session ends here.
        guard let session = state.withLock({ $0.session }), session.belongs(to: writer), !session.isFinished else {
            return
        }
        logger.warning("lost the sender \(name) while playing; stopping")
        session.end(with: .finished(reason: .playbackError, error: "the sender was lost"))
    }

    private func startAdvertising(port: UInt16) {
        let ad = ServiceAdvertisement(name: name, port: port, txt: serviceRecord.txt)
        let logger = self.logger
        let listenPort = port
        let advertiser = Advertiser(ad) { event in
            switch event {
            case .published(let name):
                logger.info("advertised as \"\(name)\" (\(serviceType)) on mDNS")
            case .renamed(let from, let to):
                logger.warning("the name \"\(from)\" is taken on this network; advertised as \"\(to)\" instead")
            case .daemonUnavailable(let reason):
                logger.warning(
                    "not advertised: \(reason); senders can still connect with --to HOST:\(listenPort)")
            case .failed(let reason):
                logger.error("advertising failed: \(reason); senders can still connect with --to HOST:\(listenPort)")
            }
        }
        state.withLock { $0.advertiser = advertiser }
        advertiser.start()
    }

    /// Advertises the AirPlay video service as `_airplay._tcp` under the friendly name (see `AirPlayDevice.txt`).
    private func startAirPlayAdvertising(port: UInt16) {
        guard let device = state.withLock({ $0.airPlay?.device }) else { return }
        let ad = ServiceAdvertisement(name: name, port: port, txt: device.txt, serviceType: AirPlayDevice.serviceType)
        let logger = self.logger
        let advertiser = Advertiser(ad) { event in
            switch event {
            case .published(let name):
                logger.info("advertised as \"\(name)\" (\(AirPlayDevice.serviceType)) on mDNS")
            case .renamed(let from, let to):
                logger.warning("the AirPlay name \"\(from)\" is taken on this network; advertised as \"\(to)\" instead")
            case .daemonUnavailable(let reason):
                logger.warning("AirPlay video not advertised: \(reason)")
            case .failed(let reason):
                logger.error("advertising AirPlay video failed: \(reason)")
            }
        }
        state.withLock { $0.airPlayAdvertiser = advertiser }
        advertiser.start()
    }

    /// Accepts connections and gives each a thread, never waiting for a place: `ConnectionAdmission` decides at once
    /// whether a connection is served, refused (its source has its share of unadmitted places) or served in place of
    /// the oldest unadmitted connection, which is closed.
    private func acceptLoop(_ listenFD: Int32) {
        TCP.serve(
            listenFD, isStopped: { state.withLock { $0.stopped } }, onFailure: { logger.error("accept failed: \($0)") }
        ) {
            fd, peer in
            let accepted = (fd: fd, peer: peer)
            let wakeHandle = fcntl(accepted.fd, F_DUPFD_CLOEXEC, 0)
            if wakeHandle < 0 {
                let reason = String(cString: strerror(errno))
                turnedAway("connection from \(accepted.peer) refused: no descriptor left (\(reason))")
                close(accepted.fd)
                return
            }
            let source = ConnectionAdmission.source(ofPeer: accepted.peer)
            let arrival = state.withLock { $0.door.arrive(from: source, handle: wakeHandle) }
            guard case .serve(let ticket, let evictedHandle) = arrival else {
                if case .refuse(let reason) = arrival {
                    turnedAway("connection from \(accepted.peer) refused: \(reason)")
                }
                close(wakeHandle)
                close(accepted.fd)
                return
            }
            if let evictedHandle {
                // Its thread wakes with an error or the end of the stream, and ends as any closed connection does.
                _ = Glibc.shutdown(evictedHandle, Int32(SHUT_RDWR))
                close(evictedHandle)
                turnedAway(
                    "the oldest connection waiting to be admitted was closed to make room for \(accepted.peer) "
                        + "(\(configuration.limits.maximumUnadmittedConnections) waiting)")
            }
            startDetachedThread(name: "castd connection") { [self] in
                let connection = ControlConnection(
                    fd: accepted.fd, peer: accepted.peer, ticket: ticket, receiver: self, logger: logger)
                connection.run()
                if let handle = state.withLock({ $0.door.leave(ticket) }) { close(handle) }
            }
        }
        close(listenFD)
    }

    /// Logs a connection turned away, at most once a second (with how many more were turned away meanwhile).
    private func turnedAway(_ message: String) {
        let now = clockNow()
        guard let quiet = state.withLock({ $0.door.turnedAway(now: now) }) else { return }
        logger.warning(message + (quiet > 0 ? " (\(quiet) more turned away in the second before, not logged)" : ""))
    }

    // Exposed to the connection.
    var identityForConnections: Identity { identity }

    /// The connection `ticket` is admitted (its key is paired, its hello was welcomed, or it is a media connection):
    /// it no longer counts against the places for strangers. False when it must be closed instead: the admitted
    /// connections are full, or it had been evicted.
    func connectionAdmitted(_ ticket: ConnectionAdmission.Ticket) -> Bool {
        // Only unadmitted connections are ever evicted, so the wake-up descriptor is no longer needed.
        let (admitted, handle) = state.withLock { $0.door.admit(ticket) }
        if let handle { close(handle) }
        return admitted
    }
}

extension Duration {
    /// Seconds as a Double (for Dispatch).
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
