import CastProtocol
import CastSecurity
import CastTestSupport
import Foundation
import XCTest

/// Thumbnails from castd for what plays (`thumbnailRequest` → `thumbnail` parts), in the lab: the joined PNG decodes
/// to exactly ffmpeg's frame at the time (exact) or at the preceding key frame, and `thumbnailCancel` answers what is
/// pending with `cancelled`. Also the `scaling` control over the wire. With decoder isolation on (the default) the
/// images are made in a worker process of castd's; with it off, inside castd.
final class ThumbnailTests: XCTestCase {
    func testThumbnailsOfWhatPlays() throws {
        try assertThumbnailsOfWhatPlays(isolated: true)
    }

    func testThumbnailsOfWhatPlaysMadeInsideCastd() throws {
        try assertThumbnailsOfWhatPlays(isolated: false)
    }

    private func assertThumbnailsOfWhatPlays(isolated: Bool) throws {
        let lab = try Lab("e2t\(getpid() % 100000)")
        defer { lab.tearDown() }
        let work = NSTemporaryDirectory() + "cast-thumbs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (receiver, port) = try lab.startRecordingReceiver(
            work: work, extra: isolated ? [] : ["--decoder-isolation", "off"])
        let castd = try XCTUnwrap(Processes.castd(under: receiver.pid), "no castd under \(receiver.pid)")
        // 10 s, 25 fps, a key frame every second; 640×480, so that an image takes several parts.
        let clip = try Media.clip("thumbs.mp4", seconds: 10, extra: ["-vf", "scale=640:480"])
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(sender.output)")

        // The playing cast's own key (in its config folder): a session's thumbnails are its sender's only.
        let identity = try Identity.loadOrCreate(directory: "\(work)/sender/cast")
        let client = try LabClient(lab: lab, from: .phone, to: lab.address(.box), port: port, identity: identity)
        defer { client.close() }

        // Exact, on frame boundaries; and a key frame.
        try client.send(.thumbnailRequest(ThumbnailRequest(request: 1, times: [2.0, 5.48], exact: true)))
        try client.send(.thumbnailRequest(ThumbnailRequest(request: 2, times: [3.6], exact: false, maxWidth: 320)))
        var answers = try collect(client, counts: [1: 2, 2: 1])
        for (key, expected) in [(Key(1, 0), 2.0), (Key(1, 1), 5.48), (Key(2, 0), 3.0)] {
            let answer = try XCTUnwrap(answers[key], "no answer for \(key)")
            XCTAssertNil(answer.error)
            XCTAssertEqual(answer.actualTime ?? -1, expected, accuracy: 0.001, "\(key)")
            XCTAssertEqual([answer.width, answer.height], key.request == 2 ? [320, 240] : [640, 480])
            let shown = try pixels(ofPNG: answer.png, work: work)
            let scale = key.request == 2 ? ["-vf", "scale=320:240"] : []
            let reference = try toolOutput(
                ["ffmpeg", "-v", "error", "-ss", String(expected), "-i", clip, "-frames:v", "1"] + scale
                    + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            XCTAssertEqual(shown.count, (answer.width ?? 0) * (answer.height ?? 0) * 3)
            XCTAssertTrue(shown == reference, "\(key): the image differs from ffmpeg's frame at \(expected) s")
            print("thumbnail \(key): \(answer.png.count) bytes in \(answer.parts) part(s), frame at \(expected) s")
        }
        // Isolated: two workers with the session's limits, the session's and the thumbnails'; else none.
        XCTAssertEqual(
            Processes.playingWorkers(of: castd).count, isolated ? 2 : 0,
            "castd's children: \(Processes.children(of: castd))")

        // A batch, cancelled at once: every time is answered, the pending ones with `cancelled`.
        let times = (0..<ThumbnailRequest.maximumTimes).map { Double($0) * 0.28 }
        try client.send(.thumbnailRequest(ThumbnailRequest(request: 3, times: times, exact: true)))
        try client.send(.thumbnailCancel)
        answers = try collect(client, counts: [3: times.count])
        let batch = (0..<times.count).compactMap { answers[Key(3, $0)] }
        XCTAssertEqual(batch.count, times.count)
        let cancelled = batch.filter { $0.error == ThumbnailPart.cancelled }
        let images = batch.filter { $0.error == nil }
        print("cancelled batch: \(images.count) images, \(cancelled.count) cancelled")
        XCTAssertGreaterThan(cancelled.count, times.count / 2, "most of the batch was pending")
        XCTAssertEqual(images.count + cancelled.count, times.count)

        // The scaling control over the wire.
        try client.send(.control(PlaybackControl(.scaling(.fill))))
        XCTAssertNotNil(receiver.waitForLine(containing: "scaling mode: fill"), "\(receiver.output)")

        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "playback went on to the end: \(sender.output)")
        // What played is still every frame of the clip (the thumbnails shared the media connection).
        let presented = Media.comparable(try String(contentsOfFile: "\(work)/frames.md5", encoding: .utf8))
        XCTAssertEqual(presented, try Media.ffmpegFrameMD5(clip))
    }

    /// Thumbnails are decoded in a worker process, not in castd: it appears with the first request. SIGKILLed while
    /// a batch is pending, every time is still answered once (those not made yet with an error naming the thumbnail
    /// process's death), castd stays up, the playback goes on to its end bit for bit, and the next request is served
    /// by a new worker.
    func testAKilledThumbnailWorkerFailsOnlyItsPendingTimes() throws {
        let lab = try Lab("e2k\(getpid() % 100000)")
        defer { lab.tearDown() }
        let work = NSTemporaryDirectory() + "cast-thumbs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (receiver, port) = try lab.startRecordingReceiver(work: work)
        let castd = try XCTUnwrap(Processes.castd(under: receiver.pid), "no castd under \(receiver.pid)")
        let clip = try Media.clip("thumbs-kill.mp4", seconds: 8, extra: ["-vf", "scale=640:480"])
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(sender.output)")
        let session = Processes.playingWorkers(of: castd)
        XCTAssertEqual(session.count, 1, "castd's children: \(Processes.children(of: castd))")

        // The playing cast's own key (in its config folder): a session's thumbnails are its sender's only.
        let identity = try Identity.loadOrCreate(directory: "\(work)/sender/cast")
        let client = try LabClient(lab: lab, from: .phone, to: lab.address(.box), port: port, identity: identity)
        defer { client.close() }
        // Small images: one part each, so that every answer is whole whenever the worker dies.
        try client.send(.thumbnailRequest(ThumbnailRequest(request: 1, times: [1], exact: true, maxWidth: 160)))
        XCTAssertNil(try XCTUnwrap(collect(client, counts: [1: 1])[Key(1, 0)]).error)
        let thumbnailWorkers = Processes.playingWorkers(of: castd).filter { !session.contains($0) }
        XCTAssertEqual(thumbnailWorkers.count, 1, "castd's children: \(Processes.children(of: castd))")
        let worker = try XCTUnwrap(thumbnailWorkers.first)

        let times = (0..<ThumbnailRequest.maximumTimes).map { Double($0) * 0.24 }
        try client.send(.thumbnailRequest(ThumbnailRequest(request: 2, times: times, exact: true, maxWidth: 160)))
        var first: ThumbnailPart?
        let deadline = Date().addingTimeInterval(10)
        while first == nil, Date() < deadline, let message = try client.next(timeout: deadline.timeIntervalSinceNow) {
            if case .thumbnail(let part) = message, part.request == 2 { first = part }
        }
        XCTAssertEqual(first?.index, 0)
        XCTAssertEqual(kill(worker, SIGKILL), 0)
        let rest = try collect(client, counts: [2: times.count - 1])
        let died = rest.values.filter { $0.error?.contains("the thumbnail process died") ?? false }
        let images = rest.values.filter { $0.error == nil }
        print(
            "thumbnail worker \(worker) SIGKILLed after the first of \(times.count): \(images.count) more images, "
                + "\(died.count) answered with its death: \(died.first?.error ?? "-")")
        XCTAssertEqual(images.count + died.count, times.count - 1, "\(rest.values.map(\.error))")
        XCTAssertGreaterThan(died.count, 0)
        XCTAssertTrue(died.allSatisfy { $0.error?.contains("SIGKILL") ?? false })
        XCTAssertEqual(kill(castd, 0), 0, "castd is gone")
        XCTAssertNotNil(
            receiver.waitForLine(
                containing: "thumbnails of \"thumbs-kill.mp4\": the thumbnail process died: it was killed"),
            "\(receiver.output.suffix(5))")
        XCTAssertEqual(Processes.playingWorkers(of: castd), session, "the session's worker plays on")

        try client.send(.thumbnailRequest(ThumbnailRequest(request: 3, times: [2], exact: true, maxWidth: 160)))
        let again = try XCTUnwrap(collect(client, counts: [3: 1])[Key(3, 0)])
        XCTAssertNil(again.error)
        XCTAssertEqual(again.actualTime ?? -1, 2, accuracy: 0.001)
        let next = Processes.playingWorkers(of: castd).filter { !session.contains($0) }
        XCTAssertEqual(next.count, 1)
        XCTAssertNotEqual(next.first, worker, "a new worker")

        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "playback went on to the end: \(sender.output)")
        let presented = Media.comparable(try String(contentsOfFile: "\(work)/frames.md5", encoding: .utf8))
        XCTAssertEqual(presented, try Media.ffmpegFrameMD5(clip))
        XCTAssertTrue(receiver.isRunning)
        XCTAssertTrue(
            waitUntil(timeout: 3) { Processes.playingWorkers(of: castd).isEmpty },
            "the thumbnail worker ends with the session: \(Processes.children(of: castd))")
    }

    private struct Key: Hashable, CustomStringConvertible {
        let request: UInt32
        let index: Int
        init(_ request: UInt32, _ index: Int) {
            self.request = request
            self.index = index
        }
        var description: String { "request \(request) time \(index)" }
    }

    private struct Answer {
        var png: [UInt8] = []
        var parts = 0
        var actualTime: Double?
        var width: Int?
        var height: Int?
        var error: String?
    }

    /// Reads `thumbnail` messages until every request has `counts[request]` complete answers (30 s at most).
    private func collect(_ client: LabClient, counts: [UInt32: Int]) throws -> [Key: Answer] {
        var answers: [Key: Answer] = [:]
        var complete = 0
        let wanted = counts.values.reduce(0, +)
        let deadline = Date().addingTimeInterval(30)
        while complete < wanted, Date() < deadline {
            guard let message = try client.next(timeout: deadline.timeIntervalSinceNow) else { break }
            guard case .thumbnail(let part) = message else { continue }
            let key = Key(part.request, part.index)
            var answer = answers[key] ?? Answer()
            XCTAssertEqual(part.part, answer.parts, "parts in order")
            answer.parts += 1
            answer.png += part.data
            answer.actualTime = part.actualTime
            answer.width = part.width
            answer.height = part.height
            answer.error = part.error
            answers[key] = answer
            if part.part == part.parts - 1 { complete += 1 }
        }
        XCTAssertEqual(complete, wanted, "answers: \(answers.keys)")
        return answers
    }

    private func pixels(ofPNG png: [UInt8], work: String) throws -> Data {
        let path = "\(work)/\(UUID().uuidString).png"
        try Data(png).write(to: URL(fileURLWithPath: path))
        return try toolOutput(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
    }
}
