import CastMedia
import CastProtocol
import Foundation

/// What a decoder worker plays and how: the first message castd sends it. Plain values only (no objects cross the
/// process boundary); the URL and its credentials travel here rather than on the command line, which any local user
/// can read in /proc.
struct WorkerStart: Codable, Sendable, Equatable {
    /// The served media (read through the channel), or nil for a URL.
    struct Media: Codable, Sendable, Equatable {
        var size: Int64?
        var seekable: Bool
        var nameHint: String?
    }

    var media: Media?
    /// The http(s) URL the worker opens itself, credentials in its userinfo; nil for served media.
    var url: String?
    /// The http proxy every connection for `url` goes through: castd's `CheckedProxy`, answering on the worker's own
    /// loopback (`SandboxReport.proxyPort`), or for a worker without a private network the one castd shares.
    var urlProxy: String?
    /// The demuxers `url` may be read with (a stranger's: `URLInput.strangerFormatWhitelist`); nil: any.
    var urlFormats: URLFormats?
    /// The ALSA PCM, nil for no audio.
    var audioDevice: String?
    /// The channels the PCM is opened with (`PlayerConfiguration.audioChannels`); nil: the engine's default.
    var audioChannels: Int?
    /// Who paces the PCM (`PlayerConfiguration.audioClock`'s raw value); nil: by the PCM.
    var audioClock: String?
    /// The audio track's language (`PlayerConfiguration.audioLanguage`); nil: FFmpeg's pick.
    var audioLanguage: String?
    /// The subtitle track's language or "off" (`PlayerConfiguration.subtitleLanguage`); nil: the forced or default one.
    var subtitleLanguage: String?
    /// The play request's subtitle file, which the worker reads whole through the channel (resource 1) before it plays.
    var subtitles: SubtitleFile?
    /// The framemd5 file, nil for none.
    var framemd5: String?
    /// The window the worker shows video in (castd's idle window steps aside while it does), nil for none.
    var window: Window?
    var startTime: Double
    var scalingMode: String
    var autoplay: Bool
    /// Seconds since 1970.
    var requestDate: Double?
    var timingLog: String?
    var volume: Double
    var muted: Bool
    /// The worker's resource limits, applied before it opens the media.
    var limits: DecoderLimits
    /// true: a mirror session (`PlayRequest.mirror`): the worker shows the stream with `MirrorPlayer`, not the engine.
    var mirror: Bool?
    /// true: the media is one still picture (`PlayerConfiguration.still`: opened as a JPEG or PNG only, and held on
    /// screen until stopped).
    var still: Bool?
    /// true: the worker makes thumbnails of the media (`ThumbnailWorker`) instead of playing it; no outputs.
    var thumbnails: Bool?

    /// A window the worker opens for video, as castd's own would be: centred, at the video's natural size, or over
    /// the whole display. Any other word does not decode.
    enum Window: String, Codable, Sendable, Equatable {
        case window
        case fullscreen
    }

    /// The start message for `configuration`.
    init(
        media: Media?, url: String?, configuration: PlayerConfiguration, volume: Double, muted: Bool,
        limits: DecoderLimits
    ) {
        switch configuration.video {
        case .none: break
        case .framemd5(let path): framemd5 = path
        case .window: window = .window
        case .fullscreen: window = .fullscreen
        // castd shows video in its own window only; another program's window is CastKit's (local playback).
        case .hosted: break
        }
        switch configuration.audio {
        case .none: audioDevice = nil
        case .alsa(let device): audioDevice = device
        }
        audioChannels = configuration.audioChannels
        audioClock = configuration.audioClock == .auto ? nil : configuration.audioClock.rawValue
        audioLanguage = configuration.audioLanguage
        subtitleLanguage = configuration.subtitleLanguage
        self.media = media
        self.url = url
        startTime = configuration.startTime
        scalingMode = configuration.scalingMode.rawValue
        autoplay = configuration.autoplay
        requestDate = configuration.requestDate?.timeIntervalSince1970
        timingLog = configuration.timingLog
        self.volume = volume
        self.muted = muted
        self.limits = limits
        still = configuration.still ? true : nil
    }

    /// The engine configuration in the worker.
    var configuration: PlayerConfiguration {
        let video: VideoOutput =
            switch (framemd5, window) {
            case (let path?, _): .framemd5(path: path)
            case (nil, .window?): .window
            case (nil, .fullscreen?): .fullscreen
            case (nil, nil): .none
            }
        var configuration = PlayerConfiguration(
            audio: audioDevice.map { .alsa(device: $0) } ?? .none, video: video, startTime: startTime,
            scalingMode: ScalingMode(rawValue: scalingMode) ?? .aspectFit, autoplay: autoplay, timingLog: timingLog)
        configuration.requestDate = requestDate.map { Date(timeIntervalSince1970: $0) }
        if let audioChannels { configuration.audioChannels = audioChannels }
        configuration.audioClock = audioClock.flatMap(AudioClock.init(rawValue:)) ?? .auto
        configuration.audioLanguage = audioLanguage
        configuration.subtitleLanguage = subtitleLanguage
        configuration.still = still == true
        // castd's logs: the worker's standard error is castd's.
        configuration.log = .standardError
        return configuration
    }
}

/// Where decoding runs: in a worker process per session (the default of castd), or inside castd.
public enum DecoderIsolation: Sendable, Equatable {
    /// Demux and decode run inside castd (debugging; and what library users of `Receiver` get by default).
    case off
    /// Each session's demux, decode and output (the window too) run in a worker process with these limits; castd's
    /// idle window steps aside while a worker shows video. See docs/decoder-worker.md.
    case on(DecoderLimits)
}

/// The resource limits of a decoder worker (setrlimit), besides those that are always set (no core files, no new
/// privileges, death with castd).
public struct DecoderLimits: Codable, Sendable, Equatable {
    /// RLIMIT_AS: the address space, in bytes (4 GiB by default).
    public var addressSpace: Int64 = 4 << 30
    /// RLIMIT_NOFILE: open file descriptors (the channel, ALSA, the framemd5 file, http connections).
    public var openFiles: Int = 64
    /// CPU seconds a session's worker may use while its position does not move (`CPUBudget`, set by castd).
    public var cpuWithoutProgress: Int = 60
    /// Creates the defaults.
    public init() {}
}
