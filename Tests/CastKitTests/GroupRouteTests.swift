import CastBase
import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// Players whose route is a group (`CastRoute.selection` of several receivers): real castd on loopback (no
/// discovery, `--auth none`), each writing what it plays into a FIFO this test reads (`FIFOCapture`), so that whether
/// they play, and how far apart, is measured from outside castd, as EndToEndTests' GroupTests measures `cast send`.
/// The file has a 10 ms beep at the start of each second; the same beep must be written at the same instant by every
/// member.
final class GroupRouteTests: CapturingReceiversTestCase {
    func makePlayer() -> MusicPlayerController {
        MusicPlayerController(
            outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
    }

    /// A player whose queue is one song: `seconds` of beeps (`GroupFixtures.beeps`).
    func makePlayer(queueingBeeps seconds: Int) throws -> MusicPlayerController {
        let song = try MediaItem(url: try GroupFixtures.beeps(seconds: seconds, in: folder))
        let player = makePlayer()
        player.setQueue(with: [song])
        return player
    }

    /// Starts the living room's castd (again: its state folder and capture kept) on `port` and waits until it writes
    /// sound; when it was started and when its first sample arrived (CLOCK_MONOTONIC, ns).
    func startLivingRoom(on port: UInt16, into sound: FIFOCapture, _ what: String) throws -> (
        started: Int64, first: Int64
    ) {
        let back = try LoopbackReceiver(
            stateDirectory: folder.appendingPathComponent("Living-Room/state").path, port: port, name: "Living Room",
            audioDevice: "castcapture:FILE=\(sound.path),CHANNELS=2")
        receivers.append(back)
        let started = MonotonicClock.nanoseconds()
        XCTAssertTrue(
            waitUntil(timeout: 10) { sound.reads.contains { $0.arrival > started } },
            "the living room did not \(what): \(back.output.suffix(5))")
        return (started, try XCTUnwrap(sound.reads.first { $0.arrival > started }).arrival)
    }

    /// Waits until `capture` holds `seconds` of sound.
    func waitForSound(_ capture: FIFOCapture, seconds: Double, timeout: Double = 20) -> Bool {
        waitUntil(timeout: timeout) { Double(capture.total) >= seconds * GroupFixtures.rate }
    }

    /// Two receivers play the queue in step; a third selected while it plays joins in step at the group's place in the
    /// file; the first (the leader) deselected leaves while the other two play on in step; the volume of one member set
    /// alone changes that member's sound only; the group plays to the end of the file and the player stops.
    func testAGroupPlaysInStepWithAMemberAddedOneRemovedAndOneMembersVolume() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (livingRoom, livingRoomSound) = try startReceiver("Living Room")
        let (study, studySound) = try startReceiver("Study")
        let length = 14
        let player = try makePlayer(queueingBeeps: length)

        // Two receivers.
        CastRoute.selection = [kitchen, livingRoom]
        let asked = MonotonicClock.nanoseconds()
        player.play()
        XCTAssertTrue(waitForSound(kitchenSound, seconds: 0.05), "the kitchen plays nothing: \(receivers[0].output)")
        let firstSound = kitchenSound.reads.first!.arrival
        XCTAssertTrue(waitForSound(kitchenSound, seconds: 2.5), "\(receivers[0].output.suffix(5))")
        XCTAssertEqual(player.activeReceivers, [kitchen, livingRoom])
        XCTAssertEqual(player.activeRoute, kitchen)
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertGreaterThan(livingRoomSound.total, Int(GroupFixtures.rate * 2), "the living room plays too")
        XCTAssertEqual(studySound.total, 0, "the study is not in the group yet")

        // A third joins while the group plays.
        let added = MonotonicClock.nanoseconds()
        CastRoute.selection = [kitchen, livingRoom, study]
        XCTAssertTrue(waitForSound(studySound, seconds: 0.05, timeout: 10), "the study did not join")
        let joined = studySound.reads.first!.arrival
        XCTAssertTrue(waitUntil(timeout: 3) { player.activeReceivers == [kitchen, livingRoom, study] })
        XCTAssertTrue(waitForSound(studySound, seconds: 2))

        // The first one leaves while the others play on.
        let removed = MonotonicClock.nanoseconds()
        CastRoute.selection = [livingRoom, study]
        XCTAssertTrue(waitUntil(timeout: 3) { player.activeReceivers == [livingRoom, study] })
        XCTAssertEqual(player.activeRoute, livingRoom, "the first member left leads")
        Thread.sleep(forTimeInterval: 1.5)

        // One member's volume, alone.
        let turnedDown = MonotonicClock.nanoseconds()
        player.setVolume(0.25, forReceiver: study)
        XCTAssertTrue(
            waitUntil(timeout: 3) { player.volume(forReceiver: study).map { abs($0 - 0.25) < 0.01 } ?? false },
            "the study reports \(String(describing: player.volume(forReceiver: study)))")
        XCTAssertEqual(player.volume, 1, "the group's level is not one member's")

        // To the end: the queue played through (the player stops, then moves past its last item on its queue).
        XCTAssertTrue(
            waitUntil(timeout: Double(length) + 10) { player.playbackState == .stopped },
            "\(player.playbackState)")
        let ended = MonotonicClock.nanoseconds()
        XCTAssertTrue(waitUntil(timeout: 2) { player.nowPlayingItem == nil })
        for capture in captures { capture.stop(atLeast: 0) }

        // Measured from outside: when each played, and how far apart.
        print(
            String(
                format:
                    "castkit group: play() → the first samples in %.0f ms; the study selected → its first in %.0f ms",
                Double(firstSound - asked) / 1e6, Double(joined - added) / 1e6))
        let two = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: 0, and: added)
        let three = try GroupFixtures.spread(
            [kitchenSound, livingRoomSound, studySound], between: joined, and: removed)
        let afterRemoval = try GroupFixtures.spread([livingRoomSound, studySound], between: removed, and: ended)
        print(
            String(
                format: "castkit group: two members within %.3f ms; three after the join within %.3f ms; two after the "
                    + "leader left within %.3f ms", two * 1000, three * 1000, afterRemoval * 1000))
        XCTAssertLessThan(two, 0.002)
        XCTAssertLessThan(three, 0.002)
        XCTAssertLessThan(afterRemoval, 0.002)

        // The study joined at the group's place in the file: from its first sample to the end it wrote what the living
        // room wrote meanwhile (the beeps, a second apart, cannot tell places apart).
        let studySeconds = Double(studySound.total) / GroupFixtures.rate
        let livingRoomSeconds = Double(livingRoomSound.total - livingRoomSound.total(at: joined)) / GroupFixtures.rate
        print(
            String(
                format: "castkit group: the study wrote %.3f s, the living room %.3f s meanwhile", studySeconds,
                livingRoomSeconds))
        XCTAssertEqual(studySeconds, livingRoomSeconds, accuracy: 0.25, "the study plays another part of the file")
        XCTAssertEqual(Double(livingRoomSound.total) / GroupFixtures.rate, Double(length), accuracy: 0.2)

        // The kitchen stopped when it left (its device drained within half a second), the others played to the end.
        let lastKitchen = kitchenSound.reads.last!.arrival
        XCTAssertLessThan(Double(lastKitchen - removed) / 1e9, 0.5, "the kitchen played on after it left")
        XCTAssertLessThan(Double(kitchenSound.total) / GroupFixtures.rate, Double(length) - 2)

        // The volume: the study's beeps fell to a quarter, the living room's stayed.
        func peaks(_ capture: FIFOCapture) -> (before: Int, after: Int) {
            let change = capture.total(at: turnedDown)
            let later = capture.total(at: turnedDown + 1_000_000_000)
            return (Capture.peak(capture.bytes, 0..<change), Capture.peak(capture.bytes, later..<Int.max))
        }
        let studyPeaks = peaks(studySound)
        let livingRoomPeaks = peaks(livingRoomSound)
        print(
            "castkit group: peaks before/after the study's volume: study \(studyPeaks), living room \(livingRoomPeaks)")
        XCTAssertGreaterThan(studyPeaks.before, 10_000)
        XCTAssertEqual(Double(studyPeaks.after) / Double(studyPeaks.before), 0.25, accuracy: 0.03, "the study's volume")
        XCTAssertEqual(Double(livingRoomPeaks.after) / Double(livingRoomPeaks.before), 1, accuracy: 0.03)
    }

    /// A movie player on a group, prepared without autoplay: both members wait paused and write nothing; `play()`
    /// starts them in step; `pause()` stops both; a seek while paused, then `play()`, starts both from there in step;
    /// a seek while playing restarts both in step without the player showing a pause.
    func testAMoviePlayerPreparedPausedAndSeekedOnAGroup() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (livingRoom, livingRoomSound) = try startReceiver("Living Room")
        let length = 12
        let player = MoviePlayerController(
            contentURL: try GroupFixtures.beeps(seconds: length, in: folder), outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
        let log = MoviePlayerLog(player)
        CastRoute.selection = [kitchen, livingRoom]
        player.shouldAutoplay = false
        player.prepareToPlay()
        XCTAssertTrue(waitUntil(timeout: 10) { player.loadState.contains(.playable) }, "\(log.names)")
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(player.playbackState, .paused)
        XCTAssertEqual(player.activeReceivers, [kitchen, livingRoom])
        XCTAssertEqual(kitchenSound.total + livingRoomSound.total, 0, "a member played before play()")

        let started = MonotonicClock.nanoseconds()
        player.play()
        XCTAssertTrue(waitForSound(kitchenSound, seconds: 2), "\(receivers[0].output.suffix(5))")
        player.pause()
        XCTAssertTrue(waitUntil(timeout: 3) { player.playbackState == .paused })
        Thread.sleep(forTimeInterval: 1)
        let paused = MonotonicClock.nanoseconds()
        let written = [kitchenSound.total, livingRoomSound.total]
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual([kitchenSound.total, livingRoomSound.total], written, "a member played on after pause()")

        player.currentPlaybackTime = 6
        let resumed = MonotonicClock.nanoseconds()
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.playbackState == .playing })
        Thread.sleep(forTimeInterval: 2)
        let statesBeforeSeek = log.states.count
        let seeked = MonotonicClock.nanoseconds()
        let fromSeek = [kitchenSound.total, livingRoomSound.total]
        player.currentPlaybackTime = 2
        XCTAssertTrue(waitUntil(timeout: Double(length) + 5) { log.finishReason != nil }, "\(log.states)")
        XCTAssertEqual(log.finishReason, .playbackEnded)
        let ended = MonotonicClock.nanoseconds()
        for capture in captures { capture.stop(atLeast: 0) }
        XCTAssertEqual(Array(log.states.dropLast().suffix(1)), [.playing])
        XCTAssertEqual(
            Array(log.states.dropFirst(statesBeforeSeek)), [.stopped],
            "a seek while playing shows no pause: \(log.states)")

        let first = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: started, and: paused)
        let afterResume = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: resumed, and: seeked)
        let afterSeek = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: seeked, and: ended)
        print(
            String(
                format: "castkit movie group: in step within %.3f ms from play(), %.3f ms after a paused seek and "
                    + "play(), %.3f ms after a seek while playing", first * 1000, afterResume * 1000, afterSeek * 1000))
        XCTAssertLessThan(first, 0.002)
        XCTAssertLessThan(afterResume, 0.002)
        XCTAssertLessThan(afterSeek, 0.002)
        // Each member wrote from 2 s to the end after the last seek (and a little of 8 s before it landed).
        for (capture, before) in zip([kitchenSound, livingRoomSound], fromSeek) {
            let seconds = Double(capture.total - before) / GroupFixtures.rate
            XCTAssertEqual(seconds, Double(length) - 2, accuracy: 0.6, "\(capture.path) after the seek")
        }
    }

    /// A member lost while the group plays (its castd killed) leaves it: the other plays on undisturbed and the player
    /// keeps playing; when castd comes back (same port, same key) the member is found again and rejoins in step.
    func testALostMemberLeavesAndRejoinsInStepWhenItComesBack() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (livingRoom, livingRoomSound) = try startReceiver("Living Room")
        let length = 14
        let player = try makePlayer(queueingBeeps: length)
        CastRoute.selection = [kitchen, livingRoom]
        player.play()
        XCTAssertTrue(waitForSound(livingRoomSound, seconds: 2), "\(receivers[1].output.suffix(5))")

        let port = receivers[1].port
        let killed = MonotonicClock.nanoseconds()
        receivers[1].kill(signal: SIGKILL)
        XCTAssertTrue(
            waitUntil(timeout: 20) { player.activeReceivers == [kitchen] }, "\(player.activeReceivers)")
        XCTAssertEqual(player.playbackState, .playing, "one member lost is not the group lost")
        Thread.sleep(forTimeInterval: 1)
        let lostFor = Double(MonotonicClock.nanoseconds() - killed) / 1e9
        let (restarted, rejoined) = try startLivingRoom(on: port, into: livingRoomSound, "rejoin")
        XCTAssertTrue(waitUntil(timeout: 3) { player.activeReceivers == [kitchen, livingRoom] })
        XCTAssertTrue(
            waitUntil(timeout: Double(length) + 10) { player.playbackState == .stopped },
            "\(player.playbackState)")
        let ended = MonotonicClock.nanoseconds()
        for capture in captures { capture.stop(atLeast: 0) }
        XCTAssertEqual(Double(kitchenSound.total) / GroupFixtures.rate, Double(length), accuracy: 0.2, "the kitchen")
        let apart = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: rejoined, and: ended)
        print(
            String(
                format:
                    "castkit group: a member lost for %.1f s; back → its first samples in %.0f ms; then within %.3f ms",
                lostFor, Double(rejoined - restarted) / 1e6, apart * 1000))
        XCTAssertLessThan(apart, 0.002)
        // Back at the group's place in the file: from its first sample on it wrote what the kitchen wrote meanwhile.
        let livingRoomSeconds =
            Double(livingRoomSound.total - livingRoomSound.total(at: restarted)) / GroupFixtures.rate
        let kitchenSeconds = Double(kitchenSound.total - kitchenSound.total(at: rejoined)) / GroupFixtures.rate
        XCTAssertEqual(
            livingRoomSeconds, kitchenSeconds, accuracy: 0.25, "the living room plays another part of the file")
    }
}
