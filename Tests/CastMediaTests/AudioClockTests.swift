import Foundation
import XCTest

@testable import CastMedia

/// Who paces an ALSA device (`AudioClock`, `AlsaDevice.pacesItself`): by the PCM unless told. The lab has no device
/// that paces itself to open, so `auto` is checked on the PCMs that end in `null`; `device` and `engine` force it.
final class AudioClockTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = try Fixtures.folder() }
    override func tearDown() { if let folder { try? FileManager.default.removeItem(at: folder) } }

    /// `null` and the capture PCM (plug → file → null) take audio at once: the engine
    /// paces them, as the lab's captures need; told `device`, the engine leaves the pace to the device.
    func testAPCMThatEndsInNullIsPacedByTheEngineUnlessTold() throws {
        let capture = Fixtures.captureDevice(folder.appendingPathComponent("out.raw").path)
        for name in ["null", capture] {
            XCTAssertFalse(try AlsaDevice(name: name, rate: 48_000, channels: 2).pacesItself, name)
            XCTAssertFalse(try AlsaDevice(name: name, rate: 48_000, channels: 2, clock: .engine).pacesItself, name)
            XCTAssertTrue(try AlsaDevice(name: name, rate: 48_000, channels: 2, clock: .device).pacesItself, name)
        }
        XCTAssertEqual(AudioClock(rawValue: "auto"), .auto)
        XCTAssertEqual(AudioClock.allCases.map(\.rawValue), ["auto", "device", "engine"])
    }
}
