import CastBase
public import CastProtocol
public import CastSender
public import Foundation
import Synchronization

/// What a `ScreenMirroring` tells its delegate. Every method is optional. Called on a thread of CastKit's (never
/// under a lock of the mirroring's), in the order things happened.
public protocol ScreenMirroringDelegate: AnyObject, Sendable {
    /// `state` changed.
    func screenMirroringDidChangeState(_ mirroring: ScreenMirroring)
    /// Mirroring failed on a receiver (the screen capture, the receiver's decoder, the connection); the state changes
    /// to `.ended(.playbackError)` once every receiver ended.
    func screenMirroring(_ mirroring: ScreenMirroring, didFailWithError error: CastError)
    /// The capture or the encoder noted something the user may want to know, in words, as `cast mirror` prints it: a
    /// display without MIT-SHM read through its socket, VA-API not used and why, the pointer not followed, the sound
    /// capture that stopped. Mirroring goes on.
    func screenMirroring(_ mirroring: ScreenMirroring, didNote note: String)
}

extension ScreenMirroringDelegate {
    public func screenMirroringDidChangeState(_ mirroring: ScreenMirroring) {}
    public func screenMirroring(_ mirroring: ScreenMirroring, didFailWithError error: CastError) {}
    public func screenMirroring(_ mirroring: ScreenMirroring, didNote note: String) {}
}

/// Shows this X11 screen, or one window of it, on receivers, live, as `cast mirror` does (a presentation program puts
/// its window on the TV): `start(on:)` a receiver's description (or several: one capture and encode for all, each
/// shows the pictures as they reach it, not in step), `stop()`, and the state and errors as notifications
/// (`.screenMirroringStateDidChange`, `.screenMirroringDidFail`) and a delegate.
///
/// The capture and the encoder run in `cast-mirror`, a helper program that must be installed beside the program (as
/// `cast` has it; `swift build` puts it beside every product). The pointer goes along and is drawn by the receiver.
/// Mirroring ends by itself when the window mirrored closes (`.ended(.playbackEnded)`), when a receiver stops it or
/// another sender takes it over (`.ended(.userExited)` once every receiver ended), and on a failure
/// (`.ended(.playbackError)`).
///
/// Thread-safety: every member may be used from any thread. The state is in a `Mutex` under which nothing else is
/// called (no connection, no delegate, no notification).
public final class ScreenMirroring: Sendable {
    /// Where mirroring is.
    public enum State: Sendable, Equatable {
        /// Not started.
        case idle
        /// Starting the capture and reaching the receivers.
        case starting
        /// The screen shows on the receivers (on the first that reported its first picture, at least).
        case mirroring
        /// Over, and why: `.userExited` (stopped, by `stop()` or on the receiver), `.playbackEnded` (the window
        /// closed), `.playbackError` (a failure: `lastError` says which). `start(on:)` may start again.
        case ended(FinishReason)
    }

    /// What the sender measured over the last second.
    public struct Figures: Sendable, Equatable {
        /// The pictures' size now (the window's or the screen's; it follows theirs).
        public var width: Int
        public var height: Int
        /// Pictures encoded a second (an unchanged screen sends almost none).
        public var picturesPerSecond: Double
        /// Bits a second sent.
        public var bitRate: Int
        /// The encoder in use: `libx264`, or `h264_vaapi` on a GPU.
        public var encoder: String
    }

    /// The display captured (nil: `$DISPLAY`), the window (an X11 window id; nil: the whole screen), pictures a
    /// second at most, and megabits a second at most (nil: 20).
    public let display: String?
    public let window: UInt?
    public let fps: Int
    public let maximumBitRate: Double?
    /// The ALSA capture PCM whose sound goes along (`default`, `hw:1`, a loopback's; nil: no sound), and how it
    /// travels.
    public let audio: String?
    public let audioCodec: SoundCodec
    private let configuration: CastKitConfiguration
    private let state = Mutex(Session())

    private struct Session {
        weak var delegate: (any ScreenMirroringDelegate)?
        var state = State.idle
        var screen: ScreenMirror?
        var playbacks: [RemotePlayback] = []
        var receivers: [ReceiverDescription] = []
        var ended: [Int: FinishReason] = [:]
        var figures: Figures?
        var lastError: CastError?
        /// Each start's number: what a thread of an earlier start reports is ignored.
        var generation = 0
    }

    /// How the sound travels: Opus (about 128 kbit/s, the default) or uncompressed PCM (1.5 Mbit/s: a fast LAN).
    public enum SoundCodec: String, Sendable {
        case opus
        case pcm
    }

    /// Mirroring of `display`'s screen, or of its window `window`, at most `fps` (1...60) pictures and
    /// `maximumBitRate` (0.5...100) megabits a second, with the sound of the ALSA capture PCM `audio` (in
    /// `audioCodec`) when given, as the sender `configuration` says. A capture PCM that does not open makes `start`
    /// throw a usage error.
    public init(
        display: String? = nil, window: UInt? = nil, fps: Int = 30, maximumBitRate: Double? = nil,
        audio: String? = nil, audioCodec: SoundCodec = .opus,
        configuration: CastKitConfiguration = CastKitConfiguration()
    ) {
        self.display = display
        self.window = window
        self.audio = audio
        self.audioCodec = audioCodec
        self.fps = min(max(fps, 1), 60)
        self.maximumBitRate = maximumBitRate.map { min(max($0, 0.5), 100) }
        self.configuration = configuration
    }

    /// Told of state changes and errors. Held weakly.
    public weak var delegate: (any ScreenMirroringDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Where mirroring is.
    public var currentState: State { state.withLock { $0.state } }
    /// The receivers it shows on (or showed on, once ended).
    public var receivers: [ReceiverDescription] { state.withLock { $0.receivers } }
    /// The sender's figures of the last second; nil before the first.
    public var figures: Figures? { state.withLock { $0.figures } }
    /// The last failure; nil when none.
    public var lastError: CastError? { state.withLock { $0.lastError } }

    /// Starts showing the screen on `receiver`. See `start(on:)` with several.
    public func start(on receiver: ReceiverDescription) throws(CastError) { try start(on: [receiver]) }

    /// Starts showing the screen on `receivers` (1 to 16), and returns once each accepted it (the state is
    /// `.starting` until the first picture shows).
    /// - Throws: `CastError`: `.usage` while it mirrors already, with no receiver, no display to capture, no such
    ///   window or a sound capture PCM that does not open; `.notAuthorised` when a receiver requires pairing; `.noSuchReceiver`, `.connectionLost` when one
    ///   cannot be reached; `.playback` when the helper is missing or fails. The state is then `.ended(.playbackError)`.
    public func start(on receivers: [ReceiverDescription]) throws(CastError) {
        guard (1...16).contains(receivers.count) else {
            throw CastError(.usage, "screen mirroring shows on 1 to 16 receivers")
        }
        let generation = try state.withLock { session throws(CastError) -> Int in
            guard session.state != .starting && session.state != .mirroring else {
                throw CastError(.usage, "the screen is mirrored already: stop() first")
            }
            session = Session(delegate: session.delegate, state: .starting, receivers: receivers)
            session.generation += 1
            return session.generation
        }
        changed()
        var playbacks: [RemotePlayback] = []
        let screen: ScreenMirror
        do throws(CastError) {
            if let audio, !(1...256).contains(audio.utf8.count) || audio.contains(where: \.isNewline) {
                throw CastError(.usage, "the sound capture takes an ALSA capture PCM's name, such as default or hw:1")
            }
            screen = try ScreenMirror.start(
                display: display, window: window, fps: fps, maximumBitRate: maximumBitRate, audio: audio,
                audioCodec: audioCodec == .opus ? .opus : .pcm, receivers: receivers.count)
            for (index, receiver) in receivers.enumerated() {
                do throws(CastError) {
                    let connection = try ReceiverConnection.open(
                        receiver, configDirectory: configuration.configDirectory, senderName: configuration.senderName)
                    playbacks.append(
                        try RemotePlayback.start(
                            screen.files[index], over: connection, configDirectory: configuration.configDirectory,
                            mirror: true))
                } catch {
                    screen.stopHelper()
                    throw error
                }
            }
        } catch {
            for playback in playbacks { playback.close() }
            end(generation, failure: error)
            throw error
        }
        state.withLock { session in
            session.screen = screen
            session.playbacks = playbacks
        }
        noted(([screen.encoderNote].compactMap { $0 }) + screen.notes, generation: generation)
        startDetachedThread(name: "CastKit mirror figures") { [weak self] in
            while let figures = screen.nextFigures() {
                self?.state.withLock { session in
                    if session.generation == generation {
                        session.figures = Figures(
                            width: figures.width, height: figures.height, picturesPerSecond: figures.fps,
                            bitRate: figures.bitRate, encoder: figures.encoder)
                    }
                }
                self?.noted(figures.notes, generation: generation)
            }
            self?.noted(screen.lastNotes, generation: generation)
        }
        for (index, playback) in playbacks.enumerated() {
            startDetachedThread(name: "CastKit mirror events") { [weak self] in
                self?.follow(playback, index: index, generation: generation, screen: screen)
            }
        }
    }

    /// Stops mirroring on every receiver; the state becomes `.ended(.userExited)` once they confirmed. Nothing
    /// happens when it does not mirror.
    public func stop() {
        let playbacks = state.withLock { $0.playbacks }
        for playback in playbacks { try? playback.control(.stop) }
    }

    /// One receiver's events until its finish.
    private func follow(_ playback: RemotePlayback, index: Int, generation: Int, screen: ScreenMirror) {
        let reason: FinishReason
        var failure: CastError?
        loop: while true {
            let event: PlaybackEvent
            do {
                event = try playback.nextEvent()
            } catch {
                failure = CastError(.connectionLost, "lost the receiver \(playback.receiverName): \(error.message)")
                reason = .playbackError
                break loop
            }
            switch event {
            case .playbackState(.playing):
                let started = state.withLock { session -> Bool in
                    guard session.generation == generation, session.state == .starting else { return false }
                    session.state = .mirroring
                    return true
                }
                if started { changed() }
            case .finished(let finish, let error, _):
                reason = finish
                if finish == .playbackError {
                    failure = CastError(
                        .playback, "mirroring on \(playback.receiverName) ended: \(error ?? "unknown error")")
                } else if finish == .playbackEnded, case .failed(let word)? = screen.ending() {
                    failure = CastError(.playback, "the screen capture failed: \(word)")
                }
                break loop
            default: continue
            }
        }
        screen.receiverLeft(index)
        playback.close()
        if let failure { failed(failure, generation: generation) }
        let over = state.withLock { session -> FinishReason? in
            guard session.generation == generation else { return nil }
            session.ended[index] = failure == nil ? reason : .playbackError
            guard session.ended.count == session.playbacks.count else { return nil }
            let reasons = Array(session.ended.values)
            return reasons.contains(.playbackError)
                ? .playbackError : reasons.contains(.playbackEnded) ? .playbackEnded : .userExited
        }
        if let over { end(generation, reason: over) }
    }

    private func failed(_ error: CastError, generation: Int) {
        let delegate = state.withLock { session -> (any ScreenMirroringDelegate)?? in
            guard session.generation == generation else { return nil }
            session.lastError = error
            return .some(session.delegate)
        }
        guard case .some(let delegate) = delegate else { return }
        delegate?.screenMirroring(self, didFailWithError: error)
        NotificationCenter.default.post(
            name: .screenMirroringDidFail, object: self, userInfo: [Self.errorUserInfoKey: error])
    }

    /// The start `generation` is over: the helper is stopped, the state says why.
    private func end(_ generation: Int, reason: FinishReason = .playbackError, failure: CastError? = nil) {
        if let failure { failed(failure, generation: generation) }
        let screen = state.withLock { session -> ScreenMirror?? in
            guard session.generation == generation else { return nil }
            session.state = .ended(failure == nil ? reason : .playbackError)
            defer {
                session.screen = nil
                session.playbacks = []
            }
            return .some(session.screen)
        }
        guard case .some(let screen) = screen else { return }
        screen?.stopHelper()
        changed()
    }

    /// Tells the delegate and posts each of `notes`, while mirroring `generation` is the one under way.
    private func noted(_ notes: [String], generation: Int) {
        for note in notes {
            guard let delegate = state.withLock({ $0.generation == generation ? Optional($0.delegate) : nil }) else {
                return
            }
            delegate?.screenMirroring(self, didNote: note)
            NotificationCenter.default.post(
                name: .screenMirroringDidNote, object: self, userInfo: [Self.noteUserInfoKey: note])
        }
    }

    private func changed() {
        state.withLock { $0.delegate }?.screenMirroringDidChangeState(self)
        NotificationCenter.default.post(name: .screenMirroringStateDidChange, object: self)
    }

    /// The key of a `.screenMirroringDidFail` notification's `CastError`.
    public static let errorUserInfoKey = "error"
    /// The key of a `.screenMirroringDidNote` notification's text (a `String`).
    public static let noteUserInfoKey = "note"
}

extension Notification.Name {
    /// A screen mirroring's `currentState` changed. Object: the mirroring.
    public static let screenMirroringStateDidChange = Notification.Name("ScreenMirroringStateDidChange")
    /// Screen mirroring failed on a receiver. Object: the mirroring; userInfo: `ScreenMirroring.errorUserInfoKey` (a
    /// `CastError`).
    public static let screenMirroringDidFail = Notification.Name("ScreenMirroringDidFail")
    /// The capture or the encoder noted something (`ScreenMirroringDelegate.screenMirroring(_:didNote:)`). Object:
    /// the mirroring; userInfo: `ScreenMirroring.noteUserInfoKey` (a `String`).
    public static let screenMirroringDidNote = Notification.Name("ScreenMirroringDidNote")
}
