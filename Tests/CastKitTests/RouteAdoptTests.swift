import CastBase
import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A player playing on one receiver whose selection becomes that receiver and another (a room added in the picker):
/// the receiver that played alone plays on into the group without stopping, and the other joins it in step
/// (RouteRules' `.adopt`, docs/multiroom.md "A receiver that plays alone becomes a group"). Measured from outside castd,
/// as EndToEndTests' AdoptTests measures `cast join`: each castd on loopback writes its sound into a FIFO this test
/// reads, stamping each read on arrival (`FIFOCapture`). The clip has a 10 ms beep at the start of each second.
final class RouteAdoptTests: CapturingReceiversTestCase {
    let rate = GroupFixtures.rate

    /// `receiver` as discovery describes it: its TXT record with castd's features, the anchor among them unless
    /// `anchor` is false (a castd from before it).
    func discovered(_ receiver: ReceiverDescription, anchor: Bool = true) -> ReceiverDescription {
        var described = receiver
        let features: Features = [.audio, .video, .mediaConnection, .url]
        described.record = ServiceRecord(
            id: receiver.name, friendlyName: receiver.name, features: anchor ? features.union(.anchor) : features,
            auth: .none)
        return described
    }

    func makePlayer(_ clip: URL) -> MoviePlayerController {
        MoviePlayerController(
            contentURL: clip, outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
    }

    /// When byte 0 of a capture was played on this process's clock (s), judged from `reads` (a read arrives no
    /// earlier than its bytes were played): the earliest of `arrival − bytes before it / rate`.
    func origin(of reads: some Collection<FIFOCapture.Read>) -> Double {
        reads.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min() ?? .nan
    }

    /// The longest silence between two reads of `reads` (s).
    func longestSilence(_ reads: [FIFOCapture.Read]) -> Double {
        reads.indices.dropFirst().map { Double(reads[$0].arrival - reads[$0 - 1].arrival) / 1e9 }.max() ?? .nan
    }

    /// The kitchen plays alone; 2.5 s in, the selection becomes the kitchen and the living room: the kitchen plays on
    /// (no silence, no part of the clip twice, its stream where it was), the living room joins in step, the player
    /// shows no change (its state `playing` until the end, no load state, its position going on), and both play the
    /// clip to its end.
    func testAddingARoomToAReceiverPlayingAloneKeepsItPlayingAndTheRoomJoinsInStep() throws {
        let (kitchenAddress, kitchenSound) = try startReceiver("Kitchen")
        let (livingAddress, livingSound) = try startReceiver("Living Room")
        let (kitchen, living) = (discovered(kitchenAddress), discovered(livingAddress))
        let seconds = 10
        let player = makePlayer(try GroupFixtures.beeps(seconds: seconds, in: folder))
        let log = MoviePlayerLog(player)
        CastRoute.selection = [kitchen]
        player.play()
        XCTAssertTrue(
            waitUntil(timeout: 20) { Double(kitchenSound.total) >= 2.5 * self.rate }, "the kitchen did not play")

        let eventsBefore = log.streamed.count
        let asked = Double(MonotonicClock.nanoseconds()) / 1e9
        CastRoute.selection = [kitchen, living]
        // The position goes on through the change: sampled while the living room joins.
        var positions: [Double] = []
        XCTAssertTrue(
            waitUntil(timeout: 10) {
                positions.append(player.currentPlaybackTime)
                return Double(livingSound.total) >= 0.5 * self.rate
            }, "the living room did not join: \(receivers[1].output.suffix(5))")
        XCTAssertTrue(
            waitUntil(timeout: 5) { player.activeReceivers == [kitchen, living] }, "\(player.activeReceivers)")
        XCTAssertEqual(player.activeRoute, kitchen, "the receiver that played alone leads")
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertTrue(waitUntil(timeout: Double(seconds) + 20) { log.finishReason != nil }, "\(log.states)")
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(log.states, [.playing, .stopped], "the adoption shows in the playback state")
        let during = log.streamed.dropFirst(eventsBefore).prefix { event in
            if case .playbackDidFinish = event { false } else { true }
        }
        XCTAssertFalse(
            during.contains { if case .loadStateDidChange = $0 { true } else { false } },
            "the load state changed with the adoption: \(Array(during))")
        let backwards = zip(positions, positions.dropFirst()).map { $0 - $1 }.max() ?? 0

        let kitchenReads = kitchenSound.stop(atLeast: 0)
        let livingReads = livingSound.stop(atLeast: 0)
        let kitchenTotal = Double(try XCTUnwrap(kitchenReads.last, "the kitchen wrote nothing").total) / rate
        let livingTotal = Double(try XCTUnwrap(livingReads.last, "the living room wrote nothing").total) / rate
        let joined = Double(seconds) - livingTotal  // where in the clip the living room began
        // The kitchen's stream before the change and after the living room joined (castd drains the clip's last
        // moment as soon as it has it: the last half second is left out).
        let before = kitchenReads.filter { Double($0.arrival) / 1e9 < asked }
        let after = kitchenReads.filter {
            Double($0.total) / rate > joined + 1 && Double($0.total) / rate < Double(seconds) - 0.5
        }
        let shift = origin(of: after) - origin(of: before)
        let apart =
            origin(of: livingReads.filter { Double($0.total) / rate < livingTotal - 0.5 })
            - (origin(of: after) + joined)
        let firstLiving = Double(try XCTUnwrap(livingReads.first).arrival) / 1e9
        print(
            String(
                format: "castkit adopt: asked at %.3f s of the clip; the living room's first samples %.0f ms later, "
                    + "from %.3f s; the kitchen's longest silence %.1f ms, its stream moved %.3f ms, %.3f s of it "
                    + "in all (the clip: %d s); the two %.3f ms apart; the position went back at most %.3f s",
                Double(before.last?.total ?? 0) / rate, (firstLiving - asked) * 1000, joined,
                longestSilence(kitchenReads) * 1000, shift * 1000, kitchenTotal, seconds, apart * 1000, backwards))
        // No pause and no restart: every part of the clip once, its stream where it was.
        XCTAssertEqual(kitchenTotal, Double(seconds), accuracy: 0.05, "the kitchen played a part twice, or missed one")
        XCTAssertLessThan(longestSilence(kitchenReads), 0.2, "the kitchen paused")
        XCTAssertEqual(shift, 0, accuracy: 0.02, "the kitchen's stream moved: it paused or jumped")
        XCTAssertLessThan(backwards, 0.1, "the player's position went back")
        // In step with the kitchen, and the rest of the clip played.
        XCTAssertEqual(joined, 3, accuracy: 2.5, "the living room began far from where the kitchen was")
        XCTAssertEqual(apart, 0, accuracy: 0.01, "the two do not play in step")
        XCTAssertLessThan(firstLiving - asked, 8, "the living room took long to join")
    }

    /// A music queue of two songs (6 s and 4 s) on the kitchen; 2.5 s into the first, the living room is added: the
    /// kitchen plays on through the join (each song once), the player stays `playing`, and the second song plays on
    /// the group (the living room plays it too).
    func testAMusicQueueOnOneReceiverGoesOnOnTheGroupItWasAdoptedInto() throws {
        let (kitchenAddress, kitchenSound) = try startReceiver("Kitchen")
        let (livingAddress, livingSound) = try startReceiver("Living Room")
        let (kitchen, living) = (discovered(kitchenAddress), discovered(livingAddress))
        // `beeps` writes one file name: each song is moved aside as it is made.
        let firstSong = folder.appendingPathComponent("beeps-6.flac")
        try FileManager.default.moveItem(at: try GroupFixtures.beeps(seconds: 6, in: folder), to: firstSong)
        let second = folder.appendingPathComponent("beeps-4.flac")
        try FileManager.default.moveItem(at: try GroupFixtures.beeps(seconds: 4, in: folder), to: second)
        let player = MusicPlayerController(
            outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
        player.setQueue(with: [try MediaItem(url: firstSong), try MediaItem(url: second)])
        CastRoute.selection = [kitchen]
        player.play()
        XCTAssertTrue(
            waitUntil(timeout: 20) { Double(kitchenSound.total) >= 2.5 * self.rate }, "the kitchen did not play")
        CastRoute.selection = [kitchen, living]
        var states: Set<String> = []
        XCTAssertTrue(
            waitUntil(timeout: 10) {
                states.insert("\(player.playbackState)")
                return Double(livingSound.total) >= 0.5 * self.rate
            }, "the living room did not join")
        XCTAssertEqual(states, ["\(PlaybackState.playing)"], "the player's state changed with the adoption")
        XCTAssertTrue(
            waitUntil(timeout: 30) { player.playbackState == .stopped && player.nowPlayingItem == nil },
            "\(player.playbackState)")
        let kitchenReads = kitchenSound.stop(atLeast: Int(rate) * 10)
        let livingReads = livingSound.stop(atLeast: Int(rate) * 4)
        let kitchenPlayed = Double(kitchenReads.last?.total ?? 0) / rate
        let livingPlayed = Double(livingReads.last?.total ?? 0) / rate
        // Within the first song (the second starts on the group by its own schedule).
        let silence = longestSilence(kitchenReads.filter { Double($0.total) / rate < 5.5 })
        print(
            String(
                format: "castkit adopt queue: the kitchen played %.3f s (its longest silence in the first song %.1f "
                    + "ms), the living room %.3f s", kitchenPlayed, silence * 1000, livingPlayed))
        XCTAssertEqual(kitchenPlayed, 10, accuracy: 0.05, "the kitchen played each song once")
        XCTAssertLessThan(silence, 0.2, "the kitchen paused in the first song")
        XCTAssertGreaterThan(livingPlayed, 4.5, "the living room did not play the second song")
    }

    /// A receiver that does not tell its anchor (a castd from before it) still becomes a group by a move: the group
    /// starts afresh on both where the kitchen was (the kitchen stops a moment), and plays to the end.
    func testAReceiverWithoutTheAnchorBecomesAGroupByAMove() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (living, livingSound) = try startReceiver("Living Room")
        let clip = try GroupFixtures.beeps(seconds: 8, in: folder)
        try playAloneThenAddARoom(
            clip, seconds: 8, on: (discovered(kitchen, anchor: false), kitchenSound),
            adding: (discovered(living), livingSound), "a receiver without the anchor")
    }

    /// A URL the receiver opens itself becomes a group by a move, though the receiver tells its anchor: the
    /// adoption takes files (as `cast`'s does).
    func testAURLPlayingAloneBecomesAGroupByAMove() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (living, livingSound) = try startReceiver("Living Room")
        let clip = try GroupFixtures.beeps(seconds: 8, in: folder)
        let server = try MediaServer(folder: folder)
        defer { server.stop() }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/\(clip.lastPathComponent)"))
        try playAloneThenAddARoom(
            url, seconds: 8, on: (discovered(kitchen), kitchenSound), adding: (discovered(living), livingSound),
            "a URL")
    }

    /// Plays `content` (`seconds` long) on `alone`; 2.5 s in, selects it and `added`: a move, which the player does
    /// not show, and both play to the end; the kitchen's sound stopped a moment.
    func playAloneThenAddARoom(
        _ content: URL, seconds: Int, on alone: (ReceiverDescription, FIFOCapture),
        adding added: (ReceiverDescription, FIFOCapture), _ what: String
    ) throws {
        let player = makePlayer(content)
        let log = MoviePlayerLog(player)
        CastRoute.selection = [alone.0]
        player.play()
        XCTAssertTrue(waitUntil(timeout: 20) { Double(alone.1.total) >= 2.5 * self.rate }, "it did not play")
        CastRoute.selection = [alone.0, added.0]
        XCTAssertTrue(waitUntil(timeout: 10) { added.1.total > 0 }, "the room added did not play")
        XCTAssertEqual(player.activeReceivers, [alone.0, added.0])
        XCTAssertTrue(waitUntil(timeout: Double(seconds) + 20) { log.finishReason != nil }, "\(log.states)")
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(log.states, [.playing, .stopped], "a move does not show in the playback state")

        let aloneReads = alone.1.stop(atLeast: 0)
        let addedReads = added.1.stop(atLeast: 0)
        let silence = longestSilence(aloneReads)
        let started = Double(seconds) - Double(try XCTUnwrap(addedReads.last).total) / rate
        print(
            String(
                format: "castkit move into a group (%@): the first receiver's longest silence %.0f ms; the group "
                    + "from %.3f s", what, silence * 1000, started))
        // The first receiver stopped and started again with the other.
        XCTAssertGreaterThan(silence, 0.1, "the first receiver played on: it was adopted")
        XCTAssertEqual(started, 2.5, accuracy: 2, "the group did not start where the first receiver was")
    }
}
