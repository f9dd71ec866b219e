import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// Groups end to end (docs/multiroom.md): three castd on three hosts of the lab (rooms), each in a time namespace of its
/// own (CLOCK_MONOTONIC 3, 7 and 11 s ahead of the machine's, as three boxes' clocks would be), play one file sent
/// with `cast send FILE --to A --to B --to C` from the phone.
///
/// How far apart they play is measured from outside castd: each one's ALSA output is a FIFO that this test reads,
/// stamping every read with its own CLOCK_MONOTONIC on arrival. castd writes each period when its clock says it is due
/// (one device buffer ahead), so for member i the arrival of byte c is `s_i + c / bytes per second` plus the wake-up
/// jitter of castd and of this reader, which is never negative: `s_i`, the least of `arrival − c / rate` over a
/// member's hundreds of reads, is when its stream began. The members' `s_i` differ by how well the group scheduled
/// their start; and each `s_i` lies where its castd was told to start (the instant of its `scheduledStart` event, in
/// its own clock, less its namespace's shift): a member that ignored the schedule would begin when the resume arrived, the start margin
/// (0.4 s) earlier, and one told an instant in the wrong clock would begin seconds off or at once.
final class GroupTests: LabTestCase {
    override class var labPrefix: String { "grp" }
    override class var labRooms: Int { 3 }

    /// Bytes per second of the capture: S16 stereo at 48 kHz.
    let rate = 192_000.0
    private let seconds = 6

    struct Member {
        let name: String
        let daemon: Daemon
        let capture: FIFOCapture
        let shift: Int
        /// castd's `--events` file.
        let events: String

        /// The instant castd's last scheduled resume starts at (its `scheduledStart` event), on this test's clock (s).
        func scheduledStart() -> Double? {
            guard let instant = EventFile.scheduledStarts(at: events).last else { return nil }
            return Double(instant) / 1e9 - Double(shift)
        }
    }

    /// castd named `name` on `host`, its monotonic clock `shift` s ahead (and `skew` ppm fast, test only), playing into
    /// a FIFO this test reads.
    /// With `waiting` false it returns once castd is spawned (`ready` waits for it): members started together come up
    /// side by side.
    private func startMember(
        _ name: String, on host: Lab.Host, shift: Int, skew: Int = 0, extra: [String] = [], waiting: Bool = true
    ) throws -> Member {
        let folder = "\(work!)/\(shift)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try launchMember(
            name, on: host, shift: shift, skew: skew, capture: FIFOCapture(path: "\(folder)/audio.fifo"), extra: extra,
            waiting: waiting)
    }

    /// castd as `startMember` starts it, writing into `capture` (a restarted member: the same name, state and FIFO).
    private func launchMember(
        _ name: String, on host: Lab.Host, shift: Int, skew: Int, capture: FIFOCapture, extra: [String] = [],
        waiting: Bool = true
    ) throws -> Member {
        let folder = "\(work!)/\(shift)"
        let daemon = try lab.start(
            on: host,
            [
                "unshare", "--time", "--monotonic", "\(shift)", "--kill-child=SIGTERM", Paths.castd, "--name", name,
                "--auth", "none", "--port", "0", "--state-dir", "\(folder)/state",
                "--audio-device", "castcapture:FILE=\(capture.path),CHANNELS=2", "--events", "\(folder)/events.jsonl",
            ] + (extra.isEmpty ? ["--video-out", "none"] : extra),
            environment: ["ALSA_CONFIG_PATH": Media.alsaConfig, "CAST_TEST_CLOCK_SKEW_PPM": "\(skew)"])
        let member = Member(
            name: name, daemon: daemon, capture: capture, shift: shift, events: "\(folder)/events.jsonl")
        return waiting ? try ready(member) : member
    }

    /// Waits until the member's castd listens and is advertised, and checks that it reads a clock of its own.
    private func ready(_ member: Member) throws -> Member {
        let (daemon, shift) = (member.daemon, member.shift)
        _ = try daemon.listeningPort()
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as"), "\(daemon.output)")
        // The premise: this castd really reads a clock of its own.
        let castd = try XCTUnwrap(Processes.castd(under: daemon.pid), "no castd under \(daemon.pid)")
        let offsets = try String(contentsOfFile: "/proc/\(castd)/timens_offsets", encoding: .utf8)
        let monotonic = offsets.split(separator: "\n").first { $0.hasPrefix("monotonic") }?.split(separator: " ")
        XCTAssertEqual(monotonic?.dropFirst().first, "\(shift)", offsets)
        return member
    }

    /// The three members; with `drifting`, the kitchen's clock runs 100 ppm fast and the living room's 100 ppm slow.
    func startGroup(drifting: Bool = false) throws -> [Member] {
        try requireTimeNamespaces()
        return try [
            try startMember("Kitchen", on: .room1, shift: 3, skew: drifting ? 100 : 0, waiting: false),
            try startMember("Living Room", on: .room2, shift: 7, skew: drifting ? -100 : 0, waiting: false),
            try startMember("Study", on: .room3, shift: 11, waiting: false),
        ].map(ready)
    }

    /// When each beep of a capture was written on this test's clock (s): its onset's byte b, placed by the reads around
    /// it (half a second each side: `least(arrival − bytes / rate) + b / rate`, as `streamStart` does for a whole
    /// stream, but local, since a member keeping in step writes a little faster or slower than the nominal rate).
    func beepTimes(_ capture: FIFOCapture) -> [Double] {
        let bytes = capture.bytes
        let reads = capture.reads
        let end = reads.last?.total ?? 0
        var times: [Double] = []
        var from = 0
        while let onset = Capture.beepOnset(in: bytes, from: from) {
            from = onset + Int(rate) / 2
            let near = reads.filter { abs($0.total - onset) < Int(rate) / 2 && $0.total < end - 48_000 }
            guard near.count >= 5 else { continue }
            let start = near.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min()!
            times.append(start + Double(onset) / rate)
        }
        return times
    }

    private func send(_ clip: String, to members: [Member]) throws -> Daemon {
        try lab.start(
            on: .phone, [Paths.cast, "send", clip] + members.flatMap { ["--to", $0.name] },
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
    }

    /// When each member's stream began on this test's clock (s), and the jitter of its reads after that (p50, p99).
    private func streamStart(_ reads: [FIFOCapture.Read]) -> (start: Double, p50: Double, p99: Double)? {
        // The steady part: not the first quarter second (the FIFO may hold what came while this reader was scheduled
        // late), nor the last (the file PCM writes what it still holds at once when castd closes the device).
        let (begin, end) = (reads.first?.total ?? 0, reads.last?.total ?? 0)
        let steady = reads.filter { $0.total > begin + 48_000 && $0.total < end - 48_000 }
        guard steady.count > 20 else { return nil }
        let lateness = steady.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }
        let start = lateness.min()!
        let sorted = lateness.map { $0 - start }.sorted()
        return (start, sorted[sorted.count / 2], sorted[Int(Double(sorted.count - 1) * 0.99)])
    }

    /// `cast send FILE --to A --to B --to C`: the three play the whole file and begin within a millisecond of one
    /// another, though their clocks are seconds apart, each when it was told in its own clock.
    func testThreeReceiversWithTheirOwnClocksStartTogether() throws {
        let members = try startGroup()
        let clip = try Media.clip("group-tone.m4a", seconds: seconds, video: false, extra: ["-ar", "48000"])
        let spawned = Double(MonotonicClock.nanoseconds()) / 1e9
        let sender = try send(clip, to: members)
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        var starts: [Double] = []
        for member in members {
            let reads = member.capture.stop(atLeast: Int(rate) * seconds)
            let total = reads.last?.total ?? 0
            XCTAssertEqual(Double(total) / rate, Double(seconds), accuracy: 0.1, "\(member.name): \(total) bytes")
            let start = try XCTUnwrap(streamStart(reads), "\(member.name): \(reads.count) reads")
            let scheduled = try XCTUnwrap(member.scheduledStart(), "\(member.name) reported no scheduledStart")
            print(
                String(
                    format:
                        "group member %@: began at %.6f s, %.3f ms after the instant it was told; read jitter p50 %.3f ms, p99 %.3f ms (%d reads)",
                    member.name, start.start, (start.start - scheduled) * 1000, start.p50 * 1000, start.p99 * 1000,
                    reads.count))
            // castd writes a period one device buffer (100 ms) before it is due, and the file PCM passes it on one
            // buffer later: the stream begins about at the instant.
            XCTAssertEqual(start.start, scheduled, accuracy: 0.1, "\(member.name) did not begin when it was told")
            starts.append(start.start)
        }
        let spread = starts.max()! - starts.min()!
        print(
            String(
                format:
                    "group start: the three members began within %.3f ms of one another, %.0f ms after cast send was spawned",
                spread * 1000, (starts.min()! - spawned) * 1000))
        XCTAssertLessThan(spread, 0.001, "members began \(starts) (s, this test's clock)")
    }

    /// `cast pause Kitchen` from another terminal pauses the whole group; `cast resume Study` resumes it, and
    /// `cast seek Kitchen 9` moves it, every member from the same position at the same instant. Where each member is
    /// after the resume and after the seek is read from the signal itself: a 10 ms beep starts every second of the
    /// file, so a beep's onset at byte b of a member's capture was written at `s_i + b / rate` (`s_i` of the reads
    /// since); the same beep must come at the same time on every member.
    func testControlsFromAnotherTerminalActOnTheWholeGroupInStep() throws {
        let members = try startGroup()
        let clip = try beeps(seconds: 12)
        let sender = try send(clip, to: members)
        members[0].capture.waitForTotal(Int(rate) * 3)
        try verb(["pause", "Kitchen"])
        // Every member stops: nothing more arrives over a second, once the pause had time to reach them all.
        Thread.sleep(forTimeInterval: 1)
        let before = members.map { $0.capture.reads.last?.total ?? 0 }
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(members.map { $0.capture.reads.last?.total ?? 0 }, before, "a member plays on after the pause")
        let resumed = MonotonicClock.nanoseconds()
        try verb(["resume", "Study"])
        Thread.sleep(forTimeInterval: 3)
        let seeked = MonotonicClock.nanoseconds()
        try verb(["seek", "Kitchen", "9"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        for member in members { _ = member.capture.stop(atLeast: 0) }

        let afterResume = try spread(members, between: resumed, and: seeked)
        print(
            String(
                format: "group after a pause and resume: the members within %.3f ms of one another", afterResume * 1000)
        )
        XCTAssertLessThan(afterResume, 0.001)
        let afterSeek = try spread(members, between: seeked, and: .max)
        print(String(format: "group after a seek: the members within %.3f ms of one another", afterSeek * 1000))
        XCTAssertLessThan(afterSeek, 0.001)
    }

    /// Where each of the members `names` says it is in the file (`cast status NAME --json`, its `position`, s).
    private func reportedPositions(of names: [String]) throws -> [Double] {
        try names.map { name -> Double in
            let result = try castOnPhone(["status", name, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return try XCTUnwrap(object?["position"] as? Double, "\(name): \(result.stdout) \(result.stderr)")
        }
    }

    /// `cast VERB…` from the phone, as another terminal would; it must succeed.
    private func verb(_ arguments: [String]) throws {
        let result = try castOnPhone(arguments)
        XCTAssertEqual(result.status, 0, "cast \(arguments): \(result.stderr)")
    }

    /// How far apart the members wrote the first beep half a second or more into the last stretch each wrote without
    /// a pause between `from` and `to` (after a pause, a resume or a seek, that stretch is the group's new start), on
    /// this test's clock (s). The beeps are a second apart: compared within one.
    /// The first read of `capture` that arrived after `instant` (this test's clock, ns), waiting up to 10 s for it.
    private func firstRead(of capture: FIFOCapture, after instant: Int64) -> FIFOCapture.Read? {
        var read: FIFOCapture.Read?
        _ = waitUntil(timeout: 10) {
            read = capture.reads.first { $0.arrival > instant }
            return read != nil
        }
        return read
    }

    private func spread(_ members: [Member], between from: Int64, and to: Int64) throws -> Double {
        try Capture.beepSpread(members.map { ($0.name, $0.capture) }, between: from, and: to, bytesPerSecond: rate)
    }

    /// Two members whose clocks run 200 ppm apart (the kitchen's 100 ppm fast, the living room's 100 ppm slow:
    /// `CAST_TEST_CLOCK_SKEW_PPM`, test only) stay in step: each is told once a second where it should be by its own
    /// clock (`align`) and trims its rate. Left alone they would drift 0.2 ms a second apart, 6 ms over this play.
    ///
    /// `CAST_GROUP_SECONDS` (32 to 3600) plays longer: `scripts/bench-group` measures 10 minutes so, for the p99.
    func testMembersWhoseClocksDriftApartStayInStep() throws {
        let length = min(max(Int(ProcessInfo.processInfo.environment["CAST_GROUP_SECONDS"] ?? "") ?? 32, 32), 3600)
        // That each castd's clock really runs skewed is not read from its log: the status replies below carry it (a
        // member that did not skew would trim by 0 ppm, not by about its skew).
        let members = try startGroup(drifting: true)
        let clip = try self.beeps(seconds: length)
        let sender = try send(clip, to: members)
        // Each member says how it keeps in step (`cast status`: its offset from the group, its trim): the kitchen,
        // whose clock runs 100 ppm fast, slows its clock by about that much, and the living room speeds its up.
        members[0].capture.waitForTotal(Int(rate) * 15)
        for (member, expected) in [(members[0], -100.0), (members[1], 100.0)] {
            let (object, sync, stdout) = try memberStatus(member.name)
            print("group member \(member.name) at 15 s: \(sync)")
            XCTAssertEqual(object["group"] as? [String], ["Kitchen", "Living Room", "Study"], stdout)
            XCTAssertEqual(sync["trimPPM"] ?? 0, expected, accuracy: 30, member.name)
            XCTAssertLessThan(abs(sync["offsetSeconds"] ?? 1), 0.001, member.name)
        }
        let text = try castOnPhone(["status", "Study"])
        let line = text.stdout.split(separator: "\n").first { $0.hasPrefix("group: ") }.map(String.init) ?? ""
        XCTAssertTrue(
            line.hasPrefix("group: Kitchen + Living Room + Study; ") && line.contains(" of the group, rate trimmed "),
            text.stdout)
        XCTAssertEqual(sender.waitForExit(timeout: Double(length) + 60), 0, "\(sender.output)")
        var times: [[Double]] = []
        for member in members {
            _ = member.capture.stop(atLeast: Int(rate) * length)
            times.append(beepTimes(member.capture))
        }
        XCTAssertEqual(times.map(\.count), Array(repeating: length - 1, count: 3), "beeps found in each capture")
        let beeps = times.map(\.count).min() ?? 0
        let spreads = (0..<beeps).map { k in times.map { $0[k] }.max()! - times.map { $0[k] }.min()! }
        print(
            "group with clocks 200 ppm apart, spread of each beep (ms): "
                + spreads.map { String(format: "%.3f", $0 * 1000) }.joined(separator: " "))
        // The first seconds are the group learning the rates; from 10 s on, within a millisecond.
        let settled = spreads.dropFirst(10).sorted()
        let p50 = settled[settled.count / 2]
        let p99 = settled[Int(Double(settled.count - 1) * 0.99)]
        let worst = settled.last ?? 0
        print(
            String(
                format: "group with clocks 200 ppm apart, %d s, from 10 s on: p50 %.3f ms, p99 %.3f ms, worst %.3f ms",
                length, p50 * 1000, p99 * 1000, worst * 1000))
        XCTAssertLessThan(worst, 0.001, "\(spreads)")
    }

    /// `cast queue A B --to X --to Y`: a queue plays on a group too, each source started in step on every member (the
    /// second over connections made afresh).
    func testAQueuePlaysOnTheGroup() throws {
        let members = Array(try startGroup().prefix(2))
        let first = try Media.clip("group-a.m4a", seconds: 2, video: false, extra: ["-ar", "48000"])
        let second = try Media.clip("group-b.m4a", seconds: 3, video: false, extra: ["-ar", "48000"])
        let sender = try lab.start(
            on: .phone, [Paths.cast, "queue", first, second] + members.flatMap { ["--to", $0.name] },
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertEqual(
            sender.output.filter { $0.hasPrefix("track ") }, ["track 1/2: \(first)", "track 2/2: \(second)"])
        for member in members {
            let total = member.capture.stop(atLeast: Int(rate) * 5).last?.total ?? 0
            XCTAssertEqual(Double(total) / rate, 5, accuracy: 0.1, "\(member.name): \(total) bytes")
        }
    }

    /// `cast stop Kitchen` from another terminal takes the kitchen out of the group: the others play to the end, and
    /// `cast send` says who left and finishes normally.
    func testAStopFromAnotherTerminalTakesThatMemberOut() throws {
        let members = Array(try startGroup().prefix(2))
        let clip = try Media.clip("group-tone.m4a", seconds: seconds, video: false, extra: ["-ar", "48000"])
        let sender = try send(clip, to: members)
        members[0].capture.waitForTotal(Int(rate) * 2)
        try verb(["stop", "Kitchen"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(
            sender.output.contains { $0.contains("Kitchen left the group: finished: userExited") }, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        let kitchen = members[0].capture.stop(atLeast: 0).last?.total ?? 0
        let livingRoom = members[1].capture.stop(atLeast: Int(rate) * seconds).last?.total ?? 0
        XCTAssertLessThan(Double(kitchen) / rate, Double(seconds) - 1, "the kitchen played on")
        XCTAssertEqual(Double(livingRoom) / rate, Double(seconds), accuracy: 0.1, "the living room stopped too")
    }

    /// A member killed while the group plays leaves it: the others play to the end in step, and `cast` says who left
    /// and finishes normally.
    func testAMemberLostLeavesTheOthersPlaying() throws {
        let members = try startGroup()
        let clip = try Media.clip("group-tone.m4a", seconds: seconds, video: false, extra: ["-ar", "48000"])
        let sender = try send(clip, to: members)
        // Playing: the leader's bytes are flowing.
        let deadline = Date(timeIntervalSinceNow: 30)
        while (members[0].capture.reads.last?.total ?? 0) < Int(rate) * 2 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let lost = try XCTUnwrap(Processes.castd(under: members[1].daemon.pid))
        XCTAssertEqual(kill(lost, SIGKILL), 0)
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains { $0.contains("Living Room left the group") }, "\(sender.output)")
        var starts: [Double] = []
        for member in [members[0], members[2]] {
            let reads = member.capture.stop(atLeast: Int(rate) * seconds)
            XCTAssertEqual(Double(reads.last?.total ?? 0) / rate, Double(seconds), accuracy: 0.1, member.name)
            starts.append(try XCTUnwrap(streamStart(reads)).start)
        }
        _ = members[1].capture.stop(atLeast: 0)
        XCTAssertLessThan(abs(starts[0] - starts[1]), 0.001, "\(starts)")
    }

    /// A member lost while the group plays (its castd killed) comes back by itself: castd started again on its host
    /// (same name and key, a new port), the sender finds it by its key, and it rejoins in step with the member that
    /// played on, at the same place in the file; the group plays to the end.
    func testALostMemberRejoinsInStepWhenItComesBack() throws {
        try requireTimeNamespaces()
        let kitchen = try startMember("Kitchen", on: .room1, shift: 3)
        let lost = try startMember("Living Room", on: .room2, shift: 7)
        let clip = try beeps(seconds: 16)
        let sender = try send(clip, to: [kitchen, lost])
        kitchen.capture.waitForTotal(Int(rate) * 2)
        XCTAssertEqual(kill(try XCTUnwrap(Processes.castd(under: lost.daemon.pid)), SIGKILL), 0)
        XCTAssertNotNil(sender.waitForLine(containing: "Living Room left the group", timeout: 20), "\(sender.output)")
        XCTAssertNotNil(lost.daemon.waitForExit(timeout: 10))
        let livingRoom = try launchMember("Living Room", on: .room2, shift: 7, skew: 0, capture: lost.capture)
        let advertised = MonotonicClock.nanoseconds()
        XCTAssertNotNil(
            sender.waitForLine(containing: "Living Room rejoined the group", timeout: 20), "\(sender.output)")
        let first = try XCTUnwrap(
            firstRead(of: livingRoom.capture, after: advertised), "the living room wrote nothing after it came back")
        print(
            String(
                format: "rejoin: castd advertised → its first samples in %.0f ms",
                Double(first.arrival - advertised) / 1e6))
        // At the same place in the file, which the beeps (a second apart) cannot tell: the positions castd reports.
        Thread.sleep(forTimeInterval: 1.5)
        let positions = try reportedPositions(of: ["Kitchen", "Living Room"])
        XCTAssertEqual(positions[0], positions[1], accuracy: 0.25, "the members play different parts of the file")
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        _ = kitchen.capture.stop(atLeast: Int(rate) * 16)
        _ = livingRoom.capture.stop(atLeast: 0)
        let apart = try spread([kitchen, livingRoom], between: first.arrival, and: .max)
        print(String(format: "group after a rejoin: the members within %.3f ms of one another", apart * 1000))
        XCTAssertLessThan(apart, 0.001)
    }

    /// A member that cannot be reached at the start does not hold the others back, as with AirPlay 2 or Snapcast:
    /// with the living room's castd not running, `cast send FILE --to Kitchen --to "Living Room"` plays on the
    /// kitchen at once and says the living room is left out; when its castd starts, it is found and joins in step,
    /// and the sender exits 0. With no member in reach, `cast send` fails as for one receiver (exit 3, not found).
    func testAMemberNotReachedAtTheStartJoinsInStepWhenItAppears() throws {
        try requireTimeNamespaces()
        let clip = try beeps(seconds: 16)
        let nobody = try castOnPhone(["send", clip, "--to", "Kitchen", "--to", "Living Room", "--timeout", "1"])
        XCTAssertEqual(nobody.status, 3, nobody.stderr)
        XCTAssertTrue(nobody.stderr.contains("Kitchen"), nobody.stderr)

        let kitchen = try startMember("Kitchen", on: .room1, shift: 3)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen", "--to", "Living Room", "--timeout", "1"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(
            sender.waitForLine(containing: "Living Room is left out of the group", timeout: 20), "\(sender.output)")
        XCTAssertNotNil(sender.waitForLine(containing: "it joins when it can be reached", timeout: 1))
        kitchen.capture.waitForTotal(Int(rate) * 2)
        XCTAssertGreaterThanOrEqual(kitchen.capture.reads.last?.total ?? 0, Int(rate) * 2, "the kitchen did not play")

        let livingRoom = try startMember("Living Room", on: .room2, shift: 7)
        let advertised = MonotonicClock.nanoseconds()
        XCTAssertNotNil(
            sender.waitForLine(containing: "Living Room joined the group", timeout: 20), "\(sender.output)")
        let joined = try XCTUnwrap(
            firstRead(of: livingRoom.capture, after: advertised), "the living room wrote nothing after it joined")
        print(
            String(
                format: "a member absent at the start: castd advertised → its first samples in %.0f ms",
                Double(joined.arrival - advertised) / 1e6))
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        print("what the sender said:", sender.output.filter { $0.hasPrefix("cast:") })
        _ = kitchen.capture.stop(atLeast: Int(rate) * 16)
        _ = livingRoom.capture.stop(atLeast: 0)
        let apart = try spread([kitchen, livingRoom], between: joined.arrival, and: .max)
        print(String(format: "group after a late join: the members within %.3f ms of one another", apart * 1000))
        XCTAssertLessThan(apart, 0.001)
    }

    /// `cast join Study --to Kitchen` from another terminal while the kitchen and the living room play: castd passes the
    /// request on to the group's sender, which reaches the study and starts it in step, at the group's place in the
    /// file; `cast join` returns once the study plays in the group.
    func testAReceiverJoinsAPlayingGroupFromTheCommandLine() throws {
        let members = try startGroup()
        let clip = try beeps(seconds: 14)
        let sender = try send(clip, to: Array(members.prefix(2)))
        members[0].capture.waitForTotal(Int(rate) * 2)
        let asked = MonotonicClock.nanoseconds()
        let joined = try castOnPhone(["join", "Study", "--to", "Kitchen"])
        XCTAssertEqual(joined.status, 0, joined.stderr)
        XCTAssertEqual(joined.stdout, "Study plays in the group of Kitchen\n")
        XCTAssertNotNil(sender.waitForLine(containing: "cast: Study joined the group", timeout: 10), "\(sender.output)")
        // It plays from the instant it was given: a second or so after `cast join` returned.
        let deadline = Date(timeIntervalSinceNow: 10)
        while members[2].capture.reads.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let first = try XCTUnwrap(members[2].capture.reads.first, "the study wrote nothing")
        print(
            String(
                format: "join: cast join spawned → the study's first samples in %.0f ms",
                Double(first.arrival - asked) / 1e6))
        // The same request again is refused: it plays in the group already.
        let again = try castOnPhone(["join", "Study", "--to", "Kitchen"])
        XCTAssertEqual(again.status, 2, again.stderr)
        XCTAssertTrue(again.stderr.contains("Study is in the group already"), again.stderr)
        Thread.sleep(forTimeInterval: 1.5)
        let positions = try reportedPositions(of: ["Kitchen", "Study"])
        XCTAssertEqual(positions[0], positions[1], accuracy: 0.25, "the study plays another part of the file")
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        for member in members { _ = member.capture.stop(atLeast: 0) }
        let apart = try spread(members, between: first.arrival, and: .max)
        print(String(format: "group after a join: the members within %.3f ms of one another", apart * 1000))
        XCTAssertLessThan(apart, 0.001)
    }

    /// A movie in a group: the kitchen shows it (framemd5, every frame ffmpeg decodes) while the living room plays its
    /// sound, in lip sync across the rooms. A white flash and a 10 ms beep start each second of the clip; each flash
    /// the kitchen showed (its timing log, on its own clock) is compared with the same second's beep as the living
    /// room wrote it (its FIFO, on this test's clock, less the output's lead that the kitchen's own log and FIFO give).
    func testOneMemberShowsTheMovieWhileAnotherPlaysItsSoundInLipSync() throws {
        try requireTimeNamespaces()
        let seconds = 10
        let clip = "\(work!)/flashbeep.mkv"
        let made = try runCommand([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "color=c=black:s=320x240:r=30:d=\(seconds),drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='lt(mod(t\\,1)\\,0.03)'",
            "-f", "lavfi", "-i",
            "aevalsrc=exprs=if(lt(mod(t\\,1)\\,0.01)\\,0.8*sin(2*PI*1000*t)\\,0):s=48000:d=\(seconds)",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "30", "-c:a", "flac", "-ar", "48000", "-ac", "2", clip,
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        let timing = "\(work!)/kitchen-timing.log"
        let frames = "\(work!)/kitchen-frames.md5"
        let kitchen = try startMember(
            "Kitchen", on: .room1, shift: 3, extra: ["--video-out", "framemd5:\(frames)", "--timing-log", timing])
        let livingRoom = try startMember("Living Room", on: .room2, shift: 7)
        let sender = try send(clip, to: [kitchen, livingRoom])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        for member in [kitchen, livingRoom] { _ = member.capture.stop(atLeast: Int(rate) * seconds) }

        // Every frame ffmpeg decodes, shown in the kitchen.
        let reference = try Media.ffmpegFrameMD5(clip).filter { !$0.hasPrefix("#") }.map(AVSyncTests.FrameLine.init)
        let presented = try String(contentsOfFile: frames, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { AVSyncTests.FrameLine(String($0)) }
        XCTAssertEqual(presented.map(\.hash), reference.map(\.hash), "the kitchen's frames differ from ffmpeg's")
        let white = try XCTUnwrap(reference.first?.hash)
        let flashes = presented.filter { $0.hash == white }.map(\.pts)
        XCTAssertEqual(flashes.count, seconds)

        // The clip's own offset of each flash from its beep (ffmpeg's decode), so that only playback is measured.
        let referenceBeeps = AVSyncTests.onsets(try AVSyncTests.decodeAudio(clip, into: "\(work!)/reference.raw"))
        XCTAssertEqual(referenceBeeps.count, seconds)
        let log = try AVSyncTests.TimingRecord(path: timing)
        let kitchenBeeps = AVSyncTests.onsets(kitchen.capture.bytes)
        let kitchenWritten = beepTimes(kitchen.capture)
        let livingRoomWritten = beepTimes(livingRoom.capture)
        var offsets: [Double] = []
        // Not the first flash: the first picture is shown while the members wait paused for their start (as a poster,
        // and as a movie player shows it), a moment before its sound.
        for k in 1..<min(flashes.count, kitchenBeeps.count, kitchenWritten.count, livingRoomWritten.count, seconds) {
            let shown = Double(try XCTUnwrap(log.videoTime(pts: Double(flashes[k]) / 30))) / 1e9 - 3
            // When the kitchen's beep is heard (its log), less when it was written (its FIFO): the output's lead.
            let heard = try XCTUnwrap(log.audioTime(frame: kitchenBeeps[k])) / 1e9 - 3
            let lead = heard - kitchenWritten[k]
            let intrinsic = Double(flashes[k]) / 30 - Double(referenceBeeps[k]) / 48000
            offsets.append((shown - (livingRoomWritten[k] + lead) - intrinsic) * 1000)
        }
        print(
            "lip sync across rooms (kitchen's picture − living room's sound), ms: "
                + offsets.map { String(format: "%.2f", $0) }.joined(separator: " "))
        XCTAssertGreaterThanOrEqual(offsets.count, seconds - 3)
        // As AVSyncTests within one box: where a viewer would notice (about 45 ms of sound ahead).
        XCTAssertLessThanOrEqual(offsets.map(abs).max() ?? 100, 45, "\(offsets)")
        XCTAssertLessThan(try spread([kitchen, livingRoom], between: 0, and: .max), 0.001)
    }

    /// `cast volume Kitchen 0.25` from another terminal sets the kitchen's volume alone: its samples fall to a quarter
    /// while the living room's stay, and the group plays on in step (a member's volume is its own, as with AirPlay 2).
    func testAMembersVolumeIsItsOwn() throws {
        let members = Array(try startGroup().prefix(2))
        let clip = try beeps(seconds: 8)
        let sender = try send(clip, to: members)
        members[0].capture.waitForTotal(Int(rate) * 2)
        let changed = MonotonicClock.nanoseconds()
        try verb(["volume", "Kitchen", "0.25"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        let peaks = members.map { member -> (before: Int, after: Int) in
            let reads = member.capture.stop(atLeast: Int(rate) * 8)
            // The loudest sample of the first two seconds, and of everything written from a second after the change.
            let later = reads.first { $0.arrival > changed + 1_000_000_000 }?.total ?? Int.max
            return (
                Capture.peak(member.capture.bytes, 0..<Int(rate) * 2),
                Capture.peak(member.capture.bytes, later..<Int.max)
            )
        }
        print("member volume: peaks before/after, kitchen \(peaks[0]), living room \(peaks[1])")
        XCTAssertGreaterThan(peaks[0].before, 10_000)
        XCTAssertEqual(Double(peaks[0].after) / Double(peaks[0].before), 0.25, accuracy: 0.03, "the kitchen's volume")
        XCTAssertEqual(Double(peaks[1].after) / Double(peaks[1].before), 1, accuracy: 0.03, "the living room's volume")
        XCTAssertLessThan(try spread(members, between: changed, and: .max), 0.001)
    }

}
