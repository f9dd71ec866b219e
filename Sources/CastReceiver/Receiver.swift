import CastAirPlay
import CastBase
import CastDiscovery
public import CastMedia
public import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Synchronization

/// The receiving service that `castd` runs: it listens for senders over TLS, answers them, and
/// advertises itself over mDNS.
///
/// Its concerns each sit apart: the listener and its door (`ConnectionListener`), the advertisements
/// (`Advertisements`), the revocation watch (`RevocationWatch`), the watchers (`Watchers`), pairing (`PairingDesk`);
/// the session that plays is in `Receiver+Sessions.swift`, its thumbnails in `Receiver+Thumbnails.swift`, the idle
/// screen in `Receiver+IdleScreen.swift`.
///
/// Thread-safety: `Sendable`; what the receiver itself holds (the name, the session and its rules, the output
/// settings, the idle window, the PIN, the AirPlay service) is inside `state` (a `Mutex`); each part above keeps its
/// own state under its own lock, and none is called with `state` held. The accept loop and each connection run on
/// their own threads because every call they make blocks.
public final class Receiver: Sendable {
    /// The configuration it runs with.
    public let configuration: ReceiverConfiguration
    /// The session rules, owners named by their connection (an AirPlay client by its session) and sessions by token.
    typealias Rules = SessionRules<SessionOwner.Identity, String>
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
    /// The listening socket and who has a place among the connections.
    let listener: ConnectionListener
    /// The Cast and AirPlay mDNS advertisements.
    let advertisements: Advertisements
    /// Closes the connections of senders unpaired while connected.
    let revocations: RevocationWatch
    /// Connections that asked to be told every event (`cast watch`).
    let watchers = Watchers()
    /// AirPlay clients' reverse connections, told their sessions' events.
    let airPlayEvents = AirPlayEventChannels()
    let state: Mutex<State>

    struct State: ~Copyable {
        init(name: String, output: OutputSettings, rules: Rules) {
            self.name = name
            self.output = output
            self.rules = rules
        }

        /// The AirPlay video service, with `--airplay-video`.
        var airPlay: AirPlayVideoService?
        /// The volume, mute and scaling: the receiver's, not a session's.
        var output: OutputSettings
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
    }

    /// Loads (or creates) the identity in the state directory.
    /// - Throws: when the state directory or the key cannot be used; the message says why.
    public init(configuration: ReceiverConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        let limits = configuration.limits
        listener = ConnectionListener(
            limits: .init(
                maximumAdmitted: limits.maximumConnections, maximumUnadmitted: limits.maximumUnadmittedConnections,
                maximumUnadmittedPerSource: limits.maximumUnadmittedPerSource),
            logger: logger)
        advertisements = Advertisements(logger: logger)
        revocations = RevocationWatch(directory: configuration.stateDirectory, logger: logger)
        let rules = Rules(
            policy: configuration.takeover,
            limits: .init(mediaConnection: limits.mediaConnectionTimeout, senderSilence: limits.senderTimeout))
        self.state = Mutex(
            State(
                name: configuration.name, output: OutputSettings(scaling: configuration.engine.scalingMode),
                rules: rules))
        self.identity = try Identity.loadOrCreate(directory: configuration.stateDirectory)
        self.id = identity.fingerprint
        self.pairing = PairingDesk(
            auth: configuration.auth, password: configuration.password, stateDirectory: configuration.stateDirectory,
            identity: identity, logger: logger, attemptLimit: limits.pairingAttemptLimit)
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
            id: id, friendlyName: name, features: [.audio, .video, .mediaConnection, .url, .anchor],
            auth: configuration.auth)
    }

    /// The port it listens on, once started.
    public var port: UInt16 { listener.port }

    /// Binds the port, starts accepting and advertising. Returns the bound port.
    @discardableResult
    public func start() throws -> UInt16 {
        if configuration.airPlayVideoPort != nil {
            // AirPlay clients' URLs are fetched through a CheckedProxy, which FFmpeg skips for hosts in $no_proxy:
            // cleared before any thread reads the environment or a worker inherits it.
            unsetenv("no_proxy")
            unsetenv("NO_PROXY")
        }
        let port = try listener.listen(host: configuration.listenAddress, port: configuration.port)
        logger.info(
            "listening on port \(port) (address \(configuration.listenAddress), id \(id), auth \(configuration.auth.rawValue))"
        )
        if MonotonicClock.testSkew != 0 {
            logger.warning(
                "test only: this castd's CLOCK_MONOTONIC runs \(MonotonicClock.testSkew * 1e6) ppm off (CAST_TEST_CLOCK_SKEW_PPM); never set it on a real box"
            )
        }
        listener.serve { [self] fd, peer, ticket in
            ControlConnection(fd: fd, peer: peer, ticket: ticket, receiver: self, logger: logger).run()
        }
        if configuration.advertise { advertisements.advertise(.cast, name: name, port: port, txt: serviceRecord.txt) }
        if configuration.auth != .none { revocations.start { [weak self] in self?.closeRevokedConnections() } }
        // The first session's worker is ready before it is asked for.
        if case .on = configuration.decoderIsolation { prepareSpareWorker() }
        if let airPlayPort = configuration.airPlayVideoPort {
            let service = AirPlayVideoService(receiver: self, logger: logger)
            let bound = try service.start(host: configuration.listenAddress, port: airPlayPort)
            state.withLock { $0.airPlay = service }
            logger.info(
                "AirPlay video on port \(bound) (deviceid \(service.device.deviceID)): anyone on this network can make "
                    + "this receiver play an http(s) URL")
            if configuration.advertise {
                advertisements.advertise(.airPlay, name: name, port: bound, txt: service.device.txt)
            }
        }
        openIdleScreen()
        return port
    }

    /// Configures the decoder workers' sandbox and starts the first spare worker, with decoder isolation on.
    private func prepareSpareWorker() {
        let logger = self.logger
        let hidden = [configuration.stateDirectory] + configuration.decoderHiddenFiles.prefix(3)
        // Spares are for sessions: they have the display when castd shows video in a window.
        let window: Bool
        switch configuration.engine.video {
        case .window, .fullscreen: window = true
        case .none, .framemd5, .hosted: window = false
        }
        SpareWorker.shared.configure(sandbox: WorkerSandbox(hiding: hidden).with(display: window)) { report in
            // What the first decoder worker's sandbox came to, said once (docs/security.md, "Decoder isolation").
            for (level, line) in report.logLines { logger.log(level, line) }
        }
        // A worker of castd's user could otherwise read castd's files through /proc/PID/root (in castd's mount
        // namespace) or its memory through /proc/PID/mem: an undumpable castd refuses both to its user.
        WorkerSandbox.protectCastd()
        SpareWorker.shared.refill()
    }

    /// The port of the AirPlay video service, once started with `--airplay-video`.
    public var airPlayPort: UInt16? { state.withLock { $0.airPlay?.port } }

    /// Stops the receiver's services, in the reverse of the order `start` started them (docs/architecture.md,
    /// "castd's services"): the advertisements go first, so that no sender finds a receiver that no longer
    /// answers; then the AirPlay service, the listener (no new connection is accepted) and the revocation watch
    /// (its thread ends); then the session (its sender is told); then the spare worker and the idle window.
    /// Connections in progress end when their peers go. Idempotent.
    public func stop() {
        let (airPlay, session, window) = state.withLock { state in
            defer { state.window = nil }
            return (state.airPlay, state.session, state.window)
        }
        advertisements.stop()
        airPlay?.stop()
        airPlayEvents.closeAll()
        listener.stop()
        revocations.stop()
        // A code beside the reason: senders that know it retry this receiver (it may be restarting); others see an
        // ordinary playback error.
        session?.end(
            with: .finished(reason: .playbackError, error: "the receiver is shutting down", code: .receiverShutdown))

        // castd is going: its waiting worker goes with it now, not when its death signal reaches it.
        SpareWorker.shared.close()
        window?.close()
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

    /// The status a `statusRequest` is answered with.
    func currentStatus() -> ReceiverStatus {
        let (session, name, output) = state.withLock { ($0.session, $0.name, $0.output) }
        var status = session?.status(name: name, id: id) ?? ReceiverStatus(name: name, id: id, state: .stopped)
        status.volume = output.level
        status.muted = output.muted
        return status
    }

    /// The friendly name.
    public var name: String { state.withLock { $0.name } }

    /// Takes a new friendly name (SIGHUP with a changed config): re-advertises under it.
    public func rename(to newName: String) {
        let old = state.withLock { state in
            defer { state.name = newName }
            return state.name
        }
        guard old != newName else { return }
        logger.info("renamed from \"\(old)\" to \"\(newName)\"")
        updateIdleScreen()
        advertisements.rename(to: newName, castTXT: serviceRecord.txt)
    }

    /// Fits pictures by `mode` from now on: the picture on screen at once, and every later session (a sender's
    /// `scaling` control, or SIGHUP with a changed config). It belongs to the window, not to a session.
    public func setScalingMode(_ mode: ScalingMode) {
        let (old, window, session) = state.withLock { state -> (ScalingMode, VideoWindow?, PlaybackSession?) in
            defer { state.output.scaling = mode }
            return (state.output.scaling, state.window, state.session)
        }
        window?.setScalingMode(mode)
        session?.setScalingMode(mode)
        if old != mode { logger.info("scaling mode: \(mode.rawValue)") }
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

    /// Keeps an admitted connection (control or media) so that it is closed if its sender is unpaired; under
    /// `--auth none` there is no pairing to lose.
    func watchAdmitted(_ tls: TLSConnection, sender: String, peer: String) {
        if configuration.auth != .none { admitted.add(tls, sender: sender, peer: peer) }
    }

    // Exposed to the connection.
    var identityForConnections: Identity { identity }

    /// The connection `ticket` is admitted (its key is paired, its hello was welcomed, or it is a media connection):
    /// it no longer counts against the places for strangers. False when it must be closed instead: the admitted
    /// connections are full, or it had been evicted.
    func connectionAdmitted(_ ticket: ConnectionAdmission.Ticket) -> Bool {
        listener.admit(ticket)
    }

    /// The receiver's monotonic time, as the session rules take it.
    func clockNow() -> Duration { ContinuousClock.now - epoch }
}
