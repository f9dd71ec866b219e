import CastKit
import CastTestSupport
import Foundation
import XCTest

/// A test of CastKit routed to real castd on loopback (no discovery, `--auth none` unless a test asks otherwise): a
/// fresh folder, no route selected before or after, and every receiver the test keeps in `receivers` killed after it.
///
/// Not thread-safe: XCTest sets up, runs and tears down each test on one thread.
class LoopbackReceiversTestCase: XCTestCase {
    var folder: URL!
    var receivers: [LoopbackReceiver] = []

    override func setUpWithError() throws {
        folder = try MovieFixtures.folder()
        CastRoute.selection = []
        try MovieFixtures.requireCastd()
    }

    override func tearDown() {
        CastRoute.selection = []
        for receiver in receivers { receiver.kill() }
        receivers = []
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }
}
