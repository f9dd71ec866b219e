import Foundation
public import XCTest

/// A fresh empty directory under the system temporary directory, removed when the test ends: one copy for every test
/// target that needs one (the security and system tests).
public enum TemporaryDirectory {
    /// Makes the directory, named `prefix-XXXXXX`, and removes it with everything in it at the test's end.
    public static func make(for test: XCTestCase, prefix: String = "cast-test") throws -> String {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        let directory = try XCTUnwrap(path, "mkdtemp failed")
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: directory) }
        return directory
    }
}
