public import CastMedia
public import Foundation
import Synchronization

/// What an `AudioPlayer` tells its delegate (AVAudioPlayerDelegate). Every method is optional (it has a default).
/// Called on a serial queue of the player's own, in the order things happened.
///
/// The seeds' Swift spellings work too, so that a delegate copied from iOS code is called rather than silently
/// ignored: `audioPlayerDecodeErrorDidOccur(_:error: Error?)`, `audioPlayerEndInterruption(_:withOptions: Int)`,
/// the older `audioPlayerEndInterruption(_:withFlags: Int)` and `audioPlayerEndInterruption(_:)`. Each event reaches
/// the delegate once: CastKit calls its own spelling, whose default calls the seeds' one (for the end of an
/// interruption: `withOptions`, then `withFlags`, then the one without options).
public protocol AudioPlayerDelegate: AnyObject, Sendable {
    /// Playback reached the end (`successfully` true), or stopped because decoding failed (false). Not called for
    /// `stop()`.
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    /// Decoding failed; `audioPlayerDidFinishPlaying(_:successfully: false)` follows.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: CastError?)
    /// Playback was interrupted and is paused: another CastKit player started playing here, or the receiver it
    /// played on was lost (another sender took it over, the link dropped).
    func audioPlayerBeginInterruption(_ player: AudioPlayer)
    /// The interruption is over. With `.shouldResume`, playback may resume: call `play()` (it does not by itself).
    func audioPlayerEndInterruption(_ player: AudioPlayer, options: AudioPlayer.InterruptionOptions)

    /// The seeds' spelling of `audioPlayerDecodeErrorDidOccur(_:error:)`.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?)
    /// The seeds' spelling of `audioPlayerEndInterruption(_:options:)`: `flags` holds
    /// `AudioPlayer.InterruptionOptions.shouldResume.rawValue` (AVAudioSessionInterruptionOptionShouldResume, 1).
    func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int)
    /// The seeds' older spelling (iOS 4 to 8), as `withOptions`.
    func audioPlayerEndInterruption(_ player: AudioPlayer, withFlags flags: Int)
    /// The seeds' oldest spelling, without the options.
    func audioPlayerEndInterruption(_ player: AudioPlayer)
}

extension AudioPlayerDelegate {
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: CastError?) {
        audioPlayerDecodeErrorDidOccur(player, error: error.map { $0 as any Error })
    }
    public func audioPlayerBeginInterruption(_ player: AudioPlayer) {}
    public func audioPlayerEndInterruption(_ player: AudioPlayer, options: AudioPlayer.InterruptionOptions) {
        audioPlayerEndInterruption(player, withOptions: options.rawValue)
    }
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?) {}
    public func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int) {
        audioPlayerEndInterruption(player, withFlags: flags)
    }
    public func audioPlayerEndInterruption(_ player: AudioPlayer, withFlags flags: Int) {
        audioPlayerEndInterruption(player)
    }
    public func audioPlayerEndInterruption(_ player: AudioPlayer) {}
}

/// Plays one sound file, locally or on the selected receiver, with the semantics of the seeds' AVAudioPlayer:
/// `play`, `pause`, `stop` (which keeps the position), `currentTime`, `numberOfLoops`, `volume`, `rate`, and a
/// delegate told of the finish, decode errors and interruptions.
///
/// It plays through the same engine as `MoviePlayerController` (audio only) and moves to a receiver the same way:
/// with `CastRoute.selected` set and `allowsAirPlay` true it plays there. Unlike movie players, several audio players
/// do not stop each other: the one that was playing is interrupted (paused, `audioPlayerBeginInterruption`) and hears
/// `audioPlayerEndInterruption(options: .shouldResume)` when the other stops playing.
///
/// Thread-safety: every member may be used from any thread; the state is the engine player's plus the delegate and the
/// loops, in a `Mutex` under which nothing else is called (neither the engine nor the delegate).
public final class AudioPlayer: Sendable {
    /// Options of an ended interruption.
    public struct InterruptionOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Playback may resume now.
        public static let shouldResume = InterruptionOptions(rawValue: 1)
    }

    /// The file played.
    public let url: URL
    /// Its length in seconds, read when the player was made.
    public let duration: TimeInterval
    /// What the file says about itself.
    public let metadata: MediaMetadata

    private let engine: MoviePlayerController
    private let state = Mutex(State())

    private struct State {
        weak var delegate: (any AudioPlayerDelegate)?
        var loopsLeft = 0
        /// The engine's movie ended and another loop was decided (`decideLoop`); its finish signal starts it.
        var loopDecided = false
        var loopsSetting = 0
        var rateEnabled = false
    }

    /// A player for the sound file at `url`, to play on `outputs` (its video is ignored) or on the selected receiver.
    /// - Throws: `CastError` `.playback` when the file cannot be opened or holds no audio (as AVAudioPlayer's
    ///   initializer throws), with FFmpeg's reason.
    public init(
        contentsOf url: URL, outputs: MoviePlayerController.Outputs = MoviePlayerController.Outputs(),
        configuration: CastKitConfiguration = CastKitConfiguration()
    ) throws(CastError) {
        guard url.isFileURL else { throw CastError(.usage, "\(url) is not a file URL") }
        do {
            metadata = try MediaMetadata.read(path: url.path)
        } catch {
            throw CastError(.playback, "cannot open \(url.path): \(error)")
        }
        guard metadata.hasAudio else { throw CastError(.playback, "\(url.path) holds no audio") }
        self.url = url
        self.duration = metadata.duration ?? 0
        var audioOnly = outputs
        audioOnly.video = .none
        let link = EngineOwner<AudioPlayer>()
        var role = EngineRole(
            observe: { signal in link.owner?.engineSignalled(signal) }, postsNotifications: false, yields: .interrupt)
        // Between loops the player keeps the audio: players it interrupted wait for its last loop.
        role.playsOnAfterEnd = { link.owner?.decideLoop() ?? false }
        engine = MoviePlayerController(contentURL: url, outputs: audioOnly, configuration: configuration, role: role)
        engine.shouldAutoplay = false
        link.connect(self)
    }

    /// Told of the finish, decode errors and interruptions. Held weakly.
    public weak var delegate: (any AudioPlayerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Opens the file and readies the output so that `play()` starts at once. True when it is ready.
    @discardableResult
    public func prepareToPlay() -> Bool {
        engine.prepareToPlay()
        return engine.isLoaded
    }

    /// Plays from the current time; true when playback started (or goes on).
    @discardableResult
    public func play() -> Bool {
        let loaded = engine.isLoaded
        state.withLock { state in
            if state.loopsLeft == 0 && !loaded { state.loopsLeft = state.loopsSetting }
        }
        engine.play()
        return engine.isLoaded
    }

    /// Pauses; `play()` resumes from here.
    public func pause() { engine.pause() }

    /// Stops and releases the output, keeping `currentTime` (as AVAudioPlayer does): `play()` resumes from there.
    /// The delegate is not told of a finish.
    public func stop() {
        let time = engine.currentPlaybackTime
        state.withLock { state in
            state.loopsLeft = 0
            state.loopDecided = false
        }
        engine.stop()
        engine.currentPlaybackTime = time
    }

    /// Whether it is playing.
    public var isPlaying: Bool { engine.playbackState == .playing }

    /// The position in seconds; setting it seeks (exactly).
    public var currentTime: TimeInterval {
        get { engine.currentPlaybackTime }
        set { engine.currentPlaybackTime = newValue }
    }

    /// How many times to play it again after the first: 0 (default) plays once, n plays n + 1 times, a negative
    /// number loops until `stop()`.
    public var numberOfLoops: Int {
        get { state.withLock { $0.loopsSetting } }
        set {
            state.withLock { state in
                state.loopsSetting = newValue
                state.loopsLeft = newValue
            }
        }
    }

    /// The output level, 0...1 (default 1). On a receiver it sets the receiver's level; on a group, every member's.
    public var volume: Float {
        get { Float(engine.volume) }
        set { engine.volume = Double(newValue) }
    }

    /// Whether `rate` applies (AVAudioPlayer's `enableRate`); false by default.
    public var enableRate: Bool {
        get { state.withLock { $0.rateEnabled } }
        set { state.withLock { $0.rateEnabled = newValue } }
    }

    /// The playing speed, 0.5...2 with pitch kept, when `enableRate` is true; 1 otherwise.
    public var rate: Float {
        get { enableRate ? max(engine.rateSetting, 0.5) : 1 }
        set {
            guard enableRate else { return }
            engine.rateSetting = newValue
        }
    }

    /// Whether it may play on the selected receiver (`CastRoute.selected`). Default true.
    public var allowsAirPlay: Bool {
        get { engine.allowsAirPlay }
        set { engine.allowsAirPlay = newValue }
    }

    /// The receiver it plays on now (a group's leader); nil while local or not loaded.
    public var activeRoute: ReceiverDescription? { engine.activeRoute }

    /// Every receiver it plays on now: one, or a group's members (`CastRoute.selection` of several); empty while local
    /// or not loaded.
    public var activeReceivers: [ReceiverDescription] { engine.activeReceivers }

    /// Sets the level (0...1) of one receiver of the group it plays on, alone; `volume` sets every member's. Ignored
    /// for a receiver it does not play on.
    public func setVolume(_ volume: Float, forReceiver receiver: ReceiverDescription) {
        engine.setVolume(volume, forReceiver: receiver)
    }

    /// The level (0...1) `receiver` last reported while it plays in the group; nil for a receiver it does not play on.
    public func volume(forReceiver receiver: ReceiverDescription) -> Float? { engine.volume(forReceiver: receiver) }

    // MARK: The engine's reports (on its delivery queue)

    /// The engine's movie ended by itself: whether another loop follows (one is counted off). Asked by the engine before
    /// it announces the finish, so the answer holds when the finish arrives in `engineSignalled`.
    private func decideLoop() -> Bool {
        state.withLock { state in
            guard state.loopsLeft != 0 else { return false }
            if state.loopsLeft > 0 { state.loopsLeft -= 1 }
            state.loopDecided = true
            return true
        }
    }

    private func engineSignalled(_ signal: EngineSignal) {
        let delegate = self.delegate
        switch signal {
        case .interruptionBegan: delegate?.audioPlayerBeginInterruption(self)
        case .interruptionEnded: delegate?.audioPlayerEndInterruption(self, options: .shouldResume)
        case .event(.playbackDidFinish(.playbackEnded, _)):
            let again = state.withLock { state -> Bool in
                defer { state.loopDecided = false }
                return state.loopDecided
            }
            if again {
                engine.currentPlaybackTime = 0
                engine.play()
            } else {
                delegate?.audioPlayerDidFinishPlaying(self, successfully: true)
            }
        case .event(.playbackDidFinish(.playbackError, let error)):
            delegate?.audioPlayerDecodeErrorDidOccur(self, error: error)
            delegate?.audioPlayerDidFinishPlaying(self, successfully: false)
        case .event:
            break
        }
    }
}
