import CastProtocol
import CastSender
import XCTest

/// Issue 29 §3: numbers a receiver sends went into `Int(...)` in the status line and `clock`, and a huge one (any
/// finite number passes the wire's decoder) trapped `cast`.
final class StatusLineTests: XCTestCase {
    func testHugeNumbersFromAReceiverAreShownNotTrapped() throws {
        for huge in [1e300, -1e300, Double.greatestFiniteMagnitude, 9.3e18, 1e-300] {
            var line = StatusLine(title: "clip.mp4", place: (2, 5))
            for event in [
                PlaybackEvent.playbackState(.playing), .durationAvailable(1e-300), .position(seconds: huge, at: 0),
                .volume(huge, muted: false), .buffered(playableDuration: abs(huge), ahead: abs(huge)),
            ] {
                _ = line.playback.apply(event)
            }
            let text = line.render()
            XCTAssertTrue(text.hasPrefix("▶ playing"), text)
            XCTAssertTrue(text.hasSuffix("2/5  clip.mp4"), text)
        }
        XCTAssertEqual(StatusLine.clock(1e300), "166666:40")
        XCTAssertEqual(StatusLine.clock(.infinity), "--:--")
        XCTAssertEqual(StatusLine.clock(.nan), "--:--")
        XCTAssertEqual(StatusLine.clock(-1), "--:--")
        XCTAssertEqual(StatusLine.clock(75.9), "1:15")
    }

    func testAnOrdinaryLine() {
        var line = StatusLine(title: "song.flac")
        for event in [
            PlaybackEvent.playbackState(.paused), .durationAvailable(100), .position(seconds: 50, at: 0),
            .volume(0.7, muted: false),
        ] {
            _ = line.playback.apply(event)
        }
        XCTAssertEqual(line.render(width: 10), "⏸ paused  0:50 / 1:40  [#####-----]  vol 70%  song.flac")
    }

    func testAStallSaysHowLongTheReceiverExpectsToWait() {
        var line = StatusLine(title: "film.mp4")
        for event in [
            PlaybackEvent.playbackState(.interrupted), .loadState(.stalled), .durationAvailable(100),
            .position(seconds: 5, at: 0), .buffered(playableDuration: 7, ahead: 2, linkRate: 790_000, wait: 13.2),
        ] {
            _ = line.playback.apply(event)
        }
        XCTAssertEqual(
            line.render(width: 10), "… interrupted  buffering, 14 s  buf 2s  0:05 / 1:40  [----------]  film.mp4")
        // Without an estimate (an older receiver, or no rate yet): only the word.
        _ = line.playback.apply(.buffered(playableDuration: 7, ahead: 2))
        XCTAssertTrue(line.render().contains("buffering  buf 2s"), line.render())
    }

    func testRatesAsPeopleReadThem() {
        XCTAssertEqual(StatusLine.rate(790_000), "790 kbit/s")
        XCTAssertEqual(StatusLine.rate(1_970_000), "1.97 Mbit/s")
        XCTAssertEqual(StatusLine.rate(8_000_000), "8.00 Mbit/s")
        XCTAssertEqual(StatusLine.rate(24_400_000), "24.4 Mbit/s")
        XCTAssertEqual(StatusLine.rate(940_000_000), "940 Mbit/s")
        XCTAssertEqual(StatusLine.rate(1e300), "1000000000 Mbit/s")
        XCTAssertEqual(StatusLine.rate(-1), "--")
        XCTAssertEqual(StatusLine.rate(.nan), "--")
    }

    func testSaturatingConversion() {
        XCTAssertEqual(Int(saturating: .nan), 0)
        XCTAssertEqual(Int(saturating: 1e300), .max)
        XCTAssertEqual(Int(saturating: -.infinity), .min)
        XCTAssertEqual(Int(saturating: 41.9), 41)
        XCTAssertEqual(Int(saturating: -41.9), -41)
    }
}
