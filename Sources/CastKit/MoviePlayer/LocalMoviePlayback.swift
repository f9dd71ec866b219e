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

    init(
        path: String, outputs: MoviePlayerController.Outputs, startTime: Double,
        report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) {
        self.report = report
        do {
            let source = try FileSource(path: path)
            player = Player(source: source, configuration: outputs.engineConfiguration(startTime: startTime)) {
                report(.event($0))
            }
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

    func pause() { player?.pause() }
    func resume() { player?.resume() }
    func stop() { player?.stop() }
    func seek(to seconds: Double) { player?.seek(to: seconds, exact: true) }
    func setRate(_ rate: Double) { player?.setRate(rate) }
    func setVolume(_ volume: Double) { player?.setVolume(volume) }
}
