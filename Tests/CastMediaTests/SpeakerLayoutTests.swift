import XCTest

@testable import CastMedia

final class SpeakerLayoutTests: XCTestCase {
    /// ALSA's usual orders: stereo and mono agree with FFmpeg's; 5.1 and 7.1 put the centre and LFE after the rears.
    func testALSAsUsualOrdersAgainstFFmpegs() {
        XCTAssertNil(SpeakerLayout(alsaDefaultFor: 1).order)
        XCTAssertEqual(SpeakerLayout(alsaDefaultFor: 1).description, "mono")
        XCTAssertNil(SpeakerLayout(alsaDefaultFor: 2).order)
        XCTAssertEqual(SpeakerLayout(alsaDefaultFor: 2).description, "stereo")
        XCTAssertEqual(SpeakerLayout(alsaDefaultFor: 3).description, "2.1")
        XCTAssertEqual(SpeakerLayout(alsaDefaultFor: 4).description, "quad")
        // FL FR RL RR FC LFE: FFmpeg's 5.1 is FL FR FC LFE BL BR.
        let surround51 = SpeakerLayout(alsaDefaultFor: 6)
        XCTAssertEqual(surround51.order, [0, 1, 4, 5, 2, 3])
        XCTAssertEqual(surround51.description, "5.1 in ALSA's order")
        // FL FR RL RR FC LFE SL SR: FFmpeg's 7.1 is FL FR FC LFE BL BR SL SR.
        let surround71 = SpeakerLayout(alsaDefaultFor: 8)
        XCTAssertEqual(surround71.order, [0, 1, 4, 5, 2, 3, 6, 7])
        XCTAssertEqual(surround71.channels, 8)
        for channels in 1...8 { XCTAssertEqual(SpeakerLayout(alsaDefaultFor: channels).channels, channels) }
    }

    /// A device's channel map is taken when FFmpeg can name every channel once; else the caller falls back.
    func testChannelMapsFromTheDevice() {
        // SND_CHMAP_FL = 3, FR = 4, FC = 7, LFE = 8, SL = 9, SR = 10, UNKNOWN = 0, NA = 1.
        let hdmi51 = SpeakerLayout(alsaPositions: [3, 4, 8, 7, 9, 10])
        XCTAssertEqual(hdmi51?.description, "5.1(side) in ALSA's order")
        XCTAssertEqual(hdmi51?.order, [0, 1, 3, 2, 4, 5])
        XCTAssertNil(SpeakerLayout(alsaPositions: [3, 4, 0]), "an unknown channel")
        XCTAssertNil(SpeakerLayout(alsaPositions: [3, 1]), "a silent channel")
        XCTAssertNil(SpeakerLayout(alsaPositions: [3, 3]), "a speaker twice")
        XCTAssertNil(SpeakerLayout(alsaPositions: []))
    }
}
