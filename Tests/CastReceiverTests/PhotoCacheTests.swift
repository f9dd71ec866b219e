import XCTest

@testable import CastReceiver

final class PhotoCacheTests: XCTestCase {
    private enum Fixtures {
        static func picture(_ byte: UInt8, size: Int = 10) -> [UInt8] { [UInt8](repeating: byte, count: size) }
    }

    func testAKeptPictureIsFoundByItsClientAndKeyOnly() {
        var cache = PhotoCache()
        cache.store(Fixtures.picture(1), key: "a", client: "10.0.0.2")
        XCTAssertEqual(cache.picture(key: "a", client: "10.0.0.2"), Fixtures.picture(1))
        XCTAssertNil(cache.picture(key: "a", client: "10.0.0.3"), "another client's key")
        XCTAssertNil(cache.picture(key: "b", client: "10.0.0.2"))
        // The same key again replaces the picture.
        cache.store(Fixtures.picture(2), key: "a", client: "10.0.0.2")
        XCTAssertEqual(cache.picture(key: "a", client: "10.0.0.2"), Fixtures.picture(2))
        XCTAssertEqual(cache.count(for: "10.0.0.2"), 1)
        cache.forget(client: "10.0.0.2")
        XCTAssertNil(cache.picture(key: "a", client: "10.0.0.2"))
    }

    func testEightPicturesAClientTheOldestOut() {
        var cache = PhotoCache()
        for index in 0..<10 { cache.store(Fixtures.picture(UInt8(index)), key: "\(index)", client: "phone") }
        cache.store(Fixtures.picture(99), key: "other", client: "tablet")
        XCTAssertEqual(cache.count(for: "phone"), 8)
        XCTAssertNil(cache.picture(key: "0", client: "phone"))
        XCTAssertNil(cache.picture(key: "1", client: "phone"))
        XCTAssertEqual(cache.picture(key: "2", client: "phone"), Fixtures.picture(2))
        XCTAssertEqual(cache.picture(key: "other", client: "tablet"), Fixtures.picture(99))
    }

    func testBytesAreBoundedPerClientAndInAll() {
        var limits = PhotoCache.Limits()
        limits.bytesPerClient = 100
        limits.bytes = 150
        var cache = PhotoCache(limits: limits)
        cache.store(Fixtures.picture(1, size: 60), key: "a", client: "phone")
        cache.store(Fixtures.picture(2, size: 60), key: "b", client: "phone")
        // 120 bytes would pass the client's 100: its oldest went.
        XCTAssertNil(cache.picture(key: "a", client: "phone"))
        XCTAssertNotNil(cache.picture(key: "b", client: "phone"))
        cache.store(Fixtures.picture(3, size: 60), key: "c", client: "tablet")
        cache.store(Fixtures.picture(4, size: 60), key: "d", client: "laptop")
        // 180 bytes would pass 150 in all: the oldest of anyone's went (the phone's).
        XCTAssertNil(cache.picture(key: "b", client: "phone"))
        XCTAssertLessThanOrEqual(cache.byteCount, 150)
        // A picture over a bound by itself is not kept, and drops nothing.
        cache.store(Fixtures.picture(5, size: 101), key: "e", client: "tablet")
        XCTAssertNil(cache.picture(key: "e", client: "tablet"))
        XCTAssertNotNil(cache.picture(key: "c", client: "tablet"))
    }

    func testTheDefaultsAreEightPicturesAnd64MiBAClient() {
        XCTAssertEqual(PhotoCache.Limits().picturesPerClient, 8)
        XCTAssertEqual(PhotoCache.Limits().bytesPerClient, 64 << 20)
    }
}
