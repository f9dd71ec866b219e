import CastMedia
import CastProtocol
import Foundation

/// A movie playing on this machine, through the same engine as castd.
final class LocalMoviePlayback: MoviePlayback {
    var route: ReceiverDescription? { nil }
    /// Nil when the file could not be opened; `start()` then reports the failure.
    private let player: Player?
    private let openFailure: String?
    private let report: @Sendable (MoviePlaybackReport) -> Void

    /// Plays `url`: a file, or an http(s) URL that FFmpeg opens itself, with the credentials stored for its server.
    init(
        url: URL, outputs: MoviePlayerController.Outputs, scalingMode: ScalingMode, startTime: Double,
        autoplay: Bool = true, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) {
        self.report = report
        var configuration = outputs.engineConfiguration(startTime: startTime)
        configuration.scalingMode = scalingMode
        // Without autoplay the engine opens the media, shows the first picture and waits: a stream does not start.
        configuration.autoplay = autoplay
        if !url.isFileURL {
            let opened = StoredCredentials.authenticated(url).absoluteString
            player = Player(url: opened, configuration: configuration) { report(.event($0)) }
            openFailure = nil
            return
        }
        do {
            let source = try FileSource(path: url.path)
            player = Player(source: source, configuration: configuration) { report(.event($0)) }
            openFailure = nil
        } catch {
            player = nil
            openFailure = "\(error)"
        }
    }

    func start() {
        if let player { return player.start() }
        let (report, failure) = (self.report, openFailure)
        DispatchQueue.global().async {
            report(.event(.playbackState(.stopped)))
            report(.event(.finished(reason: .playbackError, error: failure)))
        }
    }

    func perform(_ action: PlaybackControl.Action) { player?.perform(action) }
}
