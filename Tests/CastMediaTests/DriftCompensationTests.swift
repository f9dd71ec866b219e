import XCTest

@testable import CastMedia

/// The controller that keeps a self-paced sound card in step with a group (`DriftCompensation`), driven by simulated
/// cards: errors and times in, the rate to play the media at out. The card's error grows by its drift plus the
/// correction; it is seen only when a blocking write returns, off by up to one block of the device (here 1.33 ms: a
/// USB audio packet is 1 ms, the lab's pipe page 1.33 ms), one way only.
final class DriftCompensationTests: XCTestCase {
    /// A card `drift` off (ppm of the clock's rate) for `seconds`, observed every 25 ms with block noise; returns the
    /// true error (s) each second and the mean rate over the last 20 s.
    private func simulate(
        drift: Double, seconds: Double, calibrates: Bool = true, initialError: Double = 0, block: Double = 0.00133,
        seed: UInt64 = 1
    ) -> (errors: [Double], rate: Double) {
        var controller = DriftCompensation(calibrates: calibrates)
        var random = seed
        var error = initialError
        var rate = 1.0
        var errors: [Double] = []
        var rates: [Double] = []
        let step = 0.025
        var time = 100.0
        for tick in 1...Int(seconds / step) {
            error += (drift * 1e-6 + (rate - 1)) * step
            time += step
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let late = Double(random >> 11) / Double(1 << 53) * block
            rate = controller.update(error: error + (calibrates ? late + 0.02 : 0), at: time)
            if tick % 40 == 0 { errors.append(error) }
            rates.append(rate)
        }
        let last = rates.suffix(Int(20 / step))
        return (errors, last.reduce(0, +) / Double(last.count))
    }

    /// A card 150 ppm fast or slow (or 300) is held within half a millisecond of where it started from 20 s on, and
    /// plays the media at the rate that undoes its drift: the integral term learns it (a proportional term alone would
    /// leave drift × 2 s, 0.3 ms, and more for a worse crystal).
    func testACardThatDriftsIsHeldInStepAndItsRateLearnt() {
        for drift in [150.0, -150.0, 300.0, -40.0] {
            for seed: UInt64 in [1, 2, 3] {
                let (errors, rate) = simulate(drift: drift, seconds: 60, seed: seed)
                let worst = errors.dropFirst(20).map(abs).max() ?? 1
                XCTAssertLessThan(worst, 0.0005, "drift \(drift) ppm, seed \(seed): \(errors)")
                XCTAssertEqual((rate - 1) * 1e6, -drift, accuracy: 15, "drift \(drift) ppm, seed \(seed)")
            }
        }
        // Uncorrected, the same card would be 9 ms off after a minute.
        XCTAssertEqual(150e-6 * 60, 0.009, accuracy: 1e-9)
    }

    /// A device that reports its delay gives the error itself: a card 3 ms ahead of the clock is brought back to it
    /// (not calibrated away), without overshooting by more than a fraction.
    func testAnErrorOfADeviceThatReportsItsDelayIsMadeUp() {
        let (errors, rate) = simulate(drift: 0, seconds: 40, calibrates: false, initialError: 0.003, block: 0)
        XCTAssertLessThan(abs(errors.last!), 0.0001, "\(errors)")
        XCTAssertGreaterThan(errors.min()!, -0.001, "\(errors)")
        XCTAssertEqual(rate, 1, accuracy: 20e-6)
    }

    /// The correction never exceeds 0.1 %: a card 2000 ppm off (outside any crystal's tolerance) is slowed by 1000 ppm
    /// and drifts (5 ms in 5 s); once it is back within reach (500 ppm), the integral has not wound up, so the error is
    /// made up without swinging far past.
    func testTheCorrectionStaysWithinATenthOfAPercent() {
        var controller = DriftCompensation(calibrates: false)
        var error = 0.0
        var rate = 1.0
        var time = 0.0
        var rates: [Double] = []
        var errors: [Double] = []
        for tick in 0..<2400 {
            let drift = tick < 200 ? 2000e-6 : 500e-6
            error += (drift + (rate - 1)) * 0.025
            time += 0.025
            rate = controller.update(error: error, at: time)
            rates.append(rate)
            errors.append(error)
        }
        XCTAssertLessThanOrEqual(rates.map { abs($0 - 1) }.max()!, 0.001 + 1e-12)
        XCTAssertEqual(rates[199], 0.999, accuracy: 1e-9, "held at the limit while the card runs away")
        XCTAssertLessThan(abs(error), 0.0002, "caught again within 55 s of the card coming back within reach")
        XCTAssertGreaterThan(errors.min()!, -0.002, "no wind-up: \(errors)")
    }

    /// Nothing is corrected while the first second fills the envelope, and what cannot be a measurement (not finite,
    /// earlier than the last one) is ignored.
    func testTheFirstSecondAndNonsenseChangeNothing() {
        var controller = DriftCompensation(calibrates: false)
        XCTAssertEqual(controller.update(error: 0.01, at: 10), 1)
        XCTAssertEqual(controller.update(error: 0.01, at: 10.5), 1)
        XCTAssertNil(controller.offset)
        XCTAssertEqual(controller.update(error: .nan, at: 11), 1)
        XCTAssertEqual(controller.update(error: 0.01, at: .infinity), 1)
        XCTAssertLessThan(controller.update(error: 0.01, at: 11), 1, "10 ms ahead: slowed")
        let rate = controller.rate
        XCTAssertEqual(controller.update(error: -0.05, at: 10.9), rate, "a measurement from the past is ignored")
        XCTAssertEqual(controller.offset ?? 0, 0.01, accuracy: 1e-12)
    }
}

/// Resampling with compensation (`Resampler.stretch`): the media is played a little slower or faster by adding or
/// removing samples spread over the stream, never by whole periods.
final class ResamplerCompensationTests: XCTestCase {
    /// 10 s of a 1 kHz tone at 48 kHz in frames of 1024: `count` output samples for `stretch`.
    private func outputFrames(stretch: Double, compensates: Bool = true) throws -> (frames: Int, peakStep: Int) {
        let resampler = Resampler(outputRate: 48_000, outputChannels: 2, streamName: "test", compensates: compensates)
        resampler.stretch = stretch
        var frames = 0
        var previous: Int16?
        var peakStep = 0
        let take: (UnsafeRawBufferPointer) -> Void = { bytes in
            let samples = bytes.bindMemory(to: Int16.self)
            for index in stride(from: 0, to: samples.count, by: 2) {
                if let previous { peakStep = max(peakStep, abs(Int(samples[index]) - Int(previous))) }
                previous = samples[index]
            }
            frames += bytes.count / 4
        }
        for block in 0..<(480_000 / 1024) {
            let samples = (0..<1024).flatMap { index -> [Int16] in
                let t = Double(block * 1024 + index) / 48_000
                let value = Int16(16_000 * sin(2 * Double.pi * 1000 * t))
                return [value, value]
            }
            try resampler.convert(s16: samples, channels: 2, rate: 48_000, take)
        }
        try resampler.convert(nil as Frame?, take)
        return (frames, peakStep)
    }

    func testAStretchAddsOrRemovesItsShareOfSamplesSmoothly() throws {
        let input = 480_000 / 1024 * 1024
        let plain = try outputFrames(stretch: 0, compensates: false)
        XCTAssertEqual(plain.frames, input, "without compensation the samples pass through")
        for stretch in [0.0, 0.0005, -0.0005, 0.001, 0.01] {
            let result = try outputFrames(stretch: stretch)
            let expected = Double(input) * (1 + min(max(stretch, -0.001), 0.001))
            print(
                "stretch \(stretch): \(result.frames) frames for \(input), \(expected) expected;"
                    + " largest step \(result.peakStep)")
            XCTAssertEqual(Double(result.frames), expected, accuracy: 40, "stretch \(stretch)")
            // A 1 kHz tone at 16000 moves at most 2π·1000/48000·16000 ≈ 2094 a sample: no click, no skipped period.
            XCTAssertLessThan(result.peakStep, 2200, "stretch \(stretch)")
        }
    }
}
