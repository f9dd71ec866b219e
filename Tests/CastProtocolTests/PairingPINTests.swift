import CastTestSupport
import XCTest

@testable import CastProtocol

final class PairingPINTests: XCTestCase {
    /// Returns the given values in turn.
    private struct ScriptedGenerator: RandomNumberGenerator {
        var values: [UInt64]
        mutating func next() -> UInt64 { values.removeFirst() }
    }

    func testDigitsKeepLeadingZeros() {
        var generator = ScriptedGenerator(values: [42, 10_000, 59_999])
        XCTAssertEqual(PairingPIN.random(using: &generator).digits, "0042")
        XCTAssertEqual(PairingPIN.random(using: &generator).digits, "0000")
        XCTAssertEqual(PairingPIN.random(using: &generator).description, "9999")
    }

    func testDrawsThatWouldBiasAreRejected() {
        // 60 000...65 535 would make 0000...5535 more likely than the rest; they are drawn again.
        var generator = ScriptedGenerator(values: [60_000, 65_535, 0xFFFF_FFFF_FFFF_EA60, 12_345])
        XCTAssertEqual(PairingPIN.random(using: &generator).digits, "2345")
        XCTAssertTrue(generator.values.isEmpty)
    }

    func testUniformOverAllTenThousandPINs() {
        var generator = SplitMix64(seed: 0x5EED)
        var counts = [Int](repeating: 0, count: 10_000)
        let draws = 200_000
        for _ in 0..<draws {
            counts[Int(PairingPIN.random(using: &generator).digits)!] += 1
        }
        // Chi-square with 9 999 degrees of freedom: mean 9 999, standard deviation about 141.
        let expected = Double(draws) / 10_000
        let chiSquare = counts.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        XCTAssertLessThan(abs(chiSquare - 9_999), 6 * 141, "chi-square \(chiSquare)")
        XCTAssertFalse(counts.contains(0))
    }

    func testSystemPINsAreWellFormedAndVary() {
        let pins = (0..<20).map { _ in PairingPIN.random() }
        XCTAssertTrue(pins.allSatisfy { PairingPIN($0.digits) == $0 })
        XCTAssertGreaterThan(Set(pins).count, 1)
    }

    func testParsingWhatAUserTyped() {
        XCTAssertEqual(PairingPIN("0042")?.digits, "0042")
        XCTAssertEqual(PairingPIN(" 1234\n")?.digits, "1234")
        for bad in ["", "123", "12345", "12a4", "١٢٣٤", "+123", "12 34"] {
            XCTAssertNil(PairingPIN(bad), bad)
        }
    }
}
