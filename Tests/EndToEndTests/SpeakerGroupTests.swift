import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// An AirPlay (RAOP) speaker as a member of a group (docs/multiroom.md, "AirPlay speakers in a group"): real
/// shairport-sync on the lab's box host beside a castd on a room host (in a time namespace of its own, 3 s ahead), both
/// playing one file sent with `cast send FILE --to Kitchen --to "Patio Speaker"`.
///
/// Measured from outside both programs, as GroupTests measures castd: castd's ALSA output and shairport-sync's output
/// (`-o stdout`) are FIFOs this test reads, stamping each read on arrival. The file is a 10 ms beep each second; each
/// beep's write is placed by the reads that carry it and the 0.3 s after it (`least(arrival − bytes / rate) + onset /
/// rate`: steady writes only, never a burst of lead-in silence).
///
/// What each write means differs, and the test says so rather than hiding it: castd writes a period when its clock says
/// it is due (the stream begins a fixed ~21 ms before the instant it was told: its one-buffer lead less the file PCM's
/// one-buffer lag, found here from its own log and FIFO); shairport-sync releases a frame to a backend that cannot say
/// its delay (pipe, stdout) `audio_backend_buffer_desired_length` (1 s here) before the frame is to be heard, and the
/// frame is heard at that time only on a device that does report its delay (ALSA); it releases whole packets of 352
/// frames, each when its first frame is due. So the speaker's frame is heard at its write + 1 s + one packet, castd's at
/// its write − (its start − its instant); the difference of the two is the sync between them.
final class SpeakerGroupTests: SpeakerGroupTestCase {
    override class var labPrefix: String { "sgr" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        // Both in sight of the phone before anything is sent.
        try startSpeaker(buffer: 1)
    }

    /// castd's scheduled starts (its `scheduledStart` events), in its clock (ns).
    private var castdScheduledStarts: [Int64] { EventFile.scheduledStarts(at: castdEvents) }

    /// How far from the instant it was told castd's stream began (s; negative: before), from its events (the `start`th
    /// scheduled start, counted from 0) and the reads of its FIFO that arrived between `from` and `to`.
    private func castdLead(start: Int = 0, from: Int64 = 0, to: Int64 = .max) throws -> Double {
        let instants = castdScheduledStarts
        XCTAssertGreaterThan(instants.count, start, "castd reported \(instants.count) scheduled starts")
        let scheduled = Double(try XCTUnwrap(instants.count > start ? instants[start] : nil)) / 1e9 - 3
        // The last stretch without a pause (a member resumed on its own plays a moment before the group regroups),
        // its bytes counted from its first.
        let all = castCapture.reads
        let window = all.indices.filter { all[$0].arrival > from && all[$0].arrival < to }
        let first = window.last { $0 > 0 && all[$0].arrival - all[$0 - 1].arrival > 200_000_000 } ?? window.first ?? 0
        let base = first > 0 ? all[first - 1].total : 0
        let reads = all[first...(window.last ?? first)]
        let (begin, end) = (reads.first?.total ?? 0, reads.last?.total ?? 0)
        let steady = reads.filter { $0.total > begin + 48_000 && $0.total < end - 48_000 }
        let start = try XCTUnwrap(
            steady.map { Double($0.arrival) / 1e9 - Double($0.total - base) / castRate }.min())
        return start - scheduled
    }

    /// Pairs each of castd's beeps with the speaker's beep written about `speakerBuffer` earlier, and returns the
    /// differences in when they are heard (s; positive: the speaker later).
    private func offsets(cast: [Double], speaker: [Double], castLead: Double) -> [Double] {
        let speakerHeard = speaker.map { $0 + speakerBuffer + speakerPacket }
        return cast.compactMap { written -> Double? in
            let castHeard = written - castLead
            guard let match = speakerHeard.min(by: { abs($0 - castHeard) < abs($1 - castHeard) }) else { return nil }
            return abs(match - castHeard) < 0.5 ? match - castHeard : nil
        }
    }

    private static func describe(_ offsets: [Double]) -> (p50: Double, worst: Double, spread: Double) {
        let sorted = offsets.sorted()
        guard !sorted.isEmpty else { return (.nan, .nan, .nan) }
        return (sorted[sorted.count / 2], sorted.map(abs).max()!, sorted.last! - sorted.first!)
    }

    private static func ms(_ values: [Double]) -> String {
        values.map { String(format: "%+.3f", $0 * 1000) }.joined(separator: " ")
    }

    /// `cast send FILE --to Kitchen --to "Patio Speaker"`: the Cast receiver and the AirPlay speaker both play the whole
    /// file, and each beep is heard on both at the same time, within what the speaker's protocol and its pipe allow.
    func testAnAirPlaySpeakerPlaysInStepWithACastReceiver() throws {
        let length = 24
        let clip = try beeps(seconds: length)
        let spawned = MonotonicClock.nanoseconds()
        let sender = try sendToKitchenAndSpeaker(clip)
        XCTAssertEqual(sender.waitForExit(timeout: Double(length) + 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        _ = castCapture.stop(atLeast: Int(castRate) * length)
        _ = speakerCapture.stop(atLeast: Int(speakerRate) * length)

        let castTimes = beepWrites(castCapture, bytesPerSecond: castRate)
        let speakerTimes = beepWrites(speakerCapture, bytesPerSecond: speakerRate)
        let lead = try castdLead()
        let firstWrite = Double(castCapture.reads.first?.arrival ?? 0) / 1e9
        print(
            String(
                format:
                    "speaker group: castd began %.3f ms from its instant; cast send spawned → castd's first samples "
                    + "%.0f ms, the speaker's first beep heard %.0f ms",
                lead * 1000, (firstWrite - Double(spawned) / 1e9) * 1000,
                ((speakerTimes.first ?? 0) + speakerBuffer + speakerPacket - Double(spawned) / 1e9) * 1000))
        XCTAssertGreaterThanOrEqual(castTimes.count, length - 2, "beeps castd wrote")
        XCTAssertGreaterThanOrEqual(
            speakerTimes.count, length - 2, "beeps shairport-sync wrote: \(speaker.output.suffix(20))")
        let apart = offsets(cast: castTimes, speaker: speakerTimes, castLead: lead)
        print("speaker group: speaker − castd for each beep (ms): \(Self.ms(apart))")
        let (p50, worst, spread) = Self.describe(apart)
        print(
            String(
                format: "speaker group: %d beeps matched of %d; offset p50 %+.3f ms, worst %.3f ms, spread %.3f ms",
                apart.count, castTimes.count, p50 * 1000, worst * 1000, spread * 1000))
        XCTAssertGreaterThanOrEqual(apart.count, length - 3, "beeps heard on both")
        // Measured 0–1.1 ms (shairport-sync releases a packet to its pipe at its next wake-up, 5.3 ms apart); 3 ms
        // is its own drift tolerance (2 ms) and a millisecond more. Without the group's schedule the two would be the
        // speaker's latency (2 s) apart; with an inexact seek, up to a FLAC frame (85 ms).
        XCTAssertLessThan(worst, 0.003, "the speaker and the Cast receiver apart: \(Self.ms(apart))")
    }

    /// The group's controls reach the speaker: `cast pause Kitchen` pauses both (the speaker is flushed: nothing more
    /// comes out of it), `cast resume Kitchen` starts both again in step from where the group stopped, and `cast seek
    /// Kitchen 20` moves both there, in step; the group plays to the end.
    func testThePausesAndSeeksOfTheGroupReachTheSpeakerInStep() throws {
        let length = 30
        let clip = try beeps(seconds: length)
        let sender = try sendToKitchenAndSpeaker(clip)
        castCapture.waitForTotal(Int(castRate) * 6)
        XCTAssertEqual(try castOnPhone(["pause", "Kitchen"]).status, 0)
        Thread.sleep(forTimeInterval: 1.5)
        let before = (castCapture.reads.last?.total ?? 0, speakerCapture.reads.last?.total ?? 0)
        Thread.sleep(forTimeInterval: 2)
        let after = (castCapture.reads.last?.total ?? 0, speakerCapture.reads.last?.total ?? 0)
        print(
            "speaker group paused: castd wrote \(after.0 - before.0) bytes, the speaker \(after.1 - before.1) over 2 s")
        XCTAssertEqual(after.0, before.0, "castd plays on after the pause")
        XCTAssertEqual(after.1, before.1, "the speaker plays on after the pause")

        let resumed = MonotonicClock.nanoseconds()
        XCTAssertEqual(try castOnPhone(["resume", "Kitchen"]).status, 0)
        // The group pauses the kitchen, which resumed on its own, seeks both to where it stopped, and starts them 0.5 s
        // ahead (the speaker's resume lead): five beeps or more after that.
        Thread.sleep(forTimeInterval: 9)
        let seeked = MonotonicClock.nanoseconds()
        XCTAssertEqual(try castOnPhone(["seek", "Kitchen", "20"]).status, 0)
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        _ = castCapture.stop(atLeast: 0)
        _ = speakerCapture.stop(atLeast: 0)

        for (what, start, from, to) in [("resume", 1, resumed, seeked), ("seek", 2, seeked, Int64.max)] {
            let castTimes = beepWrites(castCapture, bytesPerSecond: castRate, from: from, to: to)
            let speakerTimes = beepWrites(speakerCapture, bytesPerSecond: speakerRate, from: from, to: to)
            let lead = try castdLead(start: start, from: from, to: to)
            let apart = offsets(cast: castTimes, speaker: speakerTimes, castLead: lead)
            let (p50, worst, spread) = Self.describe(apart)
            print(
                String(
                    format: "speaker group after the %@: %d beeps on castd, %d on the speaker, %d matched; "
                        + "offset p50 %+.3f ms, worst %.3f ms, spread %.3f ms (castd began %.3f ms from its instant)",
                    what, castTimes.count, speakerTimes.count, apart.count, p50 * 1000, worst * 1000, spread * 1000,
                    lead * 1000))
            print("speaker group after the \(what): speaker − castd for each beep (ms): \(Self.ms(apart))")
            XCTAssertGreaterThanOrEqual(apart.count, 4, "beeps heard on both after the \(what)")
            XCTAssertLessThan(worst, 0.003, "after the \(what): \(Self.ms(apart))")
            if what == "seek" {
                // From 20 s to the end of the file: the same ten beeps on both (the first may go unseen on castd,
                // whose bytes before it are the music before the pause); a member seeked elsewhere has more or fewer.
                XCTAssertTrue((length - 21...length - 20).contains(castTimes.count), "castd's beeps after the seek")
                XCTAssertTrue((length - 21...length - 20).contains(speakerTimes.count), "the speaker's after the seek")
            }
        }
    }

    /// `cast queue A B --to Kitchen --to "Patio Speaker"`: each source plays on both (the second over the receiver's
    /// connection the group keeps, a new RAOP session and a decoder of its own for the speaker), in step.
    func testAQueuePlaysOnAGroupWithASpeaker() throws {
        let first = try beeps(seconds: 4, name: "a.flac")
        let second = try beeps(seconds: 4, name: "b.flac")
        let sender = try lab.start(
            on: .phone, [Paths.cast, "queue", first, second, "--to", "Kitchen", "--to", speakerName],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertEqual(
            sender.output.filter { $0.hasPrefix("track ") }, ["track 1/2: \(first)", "track 2/2: \(second)"])
        _ = castCapture.stop(atLeast: Int(castRate) * 8)
        _ = speakerCapture.stop(atLeast: 0)
        // Each file from 1.5 s before its scheduled start (castd's event) to 1.5 s before the next one's.
        let instants = castdScheduledStarts.map { $0 - 3_000_000_000 - 1_500_000_000 }
        XCTAssertEqual(instants.count, 2, "castd's scheduled starts")
        for (k, from) in instants.enumerated() {
            let to = k + 1 < instants.count ? instants[k + 1] : .max
            let castTimes = beepWrites(castCapture, bytesPerSecond: castRate, from: from, to: to)
            let speakerTimes = beepWrites(speakerCapture, bytesPerSecond: speakerRate, from: from, to: to)
            let lead = try castdLead(start: k, from: from, to: to)
            let apart = offsets(cast: castTimes, speaker: speakerTimes, castLead: lead)
            print(
                "speaker group queue, file \(k + 1): \(castTimes.count) beeps on castd, \(speakerTimes.count) on the "
                    + "speaker, speaker − castd (ms): \(Self.ms(apart))")
            // Three or four beeps of each file on each (a file's first beep is found only after silence).
            XCTAssertGreaterThanOrEqual(castTimes.count, 3, "file \(k + 1)")
            XCTAssertGreaterThanOrEqual(speakerTimes.count, 3, "file \(k + 1)")
            XCTAssertGreaterThanOrEqual(apart.count, 3, "file \(k + 1)")
            XCTAssertLessThan(Self.describe(apart).worst, 0.003, "file \(k + 1): \(Self.ms(apart))")
        }
    }
}
