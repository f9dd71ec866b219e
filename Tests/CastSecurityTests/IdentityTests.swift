import CastSecurity
import CastSystem
import Foundation
import XCTest

final class IdentityTests: XCTestCase {
    func testCreatesKeyWithPrivateModesAndReloadsTheSameKey() throws {
        let directory = try Fixtures.temporaryDirectory(self) + "/state/castd"
        let created = try Identity.loadOrCreate(directory: directory)

        let keyFile = directory + "/identity.pem"
        XCTAssertEqual(try permissions(keyFile), 0o600)
        XCTAssertEqual(try permissions(directory), 0o700)
        XCTAssertEqual(created.publicKey.count, 32)
        XCTAssertTrue(try String(contentsOfFile: keyFile, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        // Only the key file: the temporary file used while writing it is gone.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["identity.pem"])

        let reloaded = try Identity.loadOrCreate(directory: directory)
        XCTAssertEqual(reloaded.publicKey, created.publicKey)
        XCTAssertEqual(reloaded.fingerprint, created.fingerprint)
    }

    func testDistinctDirectoriesGetDistinctKeys() throws {
        let first = try Identity.loadOrCreate(directory: try Fixtures.temporaryDirectory(self))
        let second = try Identity.loadOrCreate(directory: try Fixtures.temporaryDirectory(self))
        XCTAssertNotEqual(first.publicKey, second.publicKey)
    }

    func testRefusesKeyFileReadableByOthersNamingFileAndMode() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        _ = try Identity.loadOrCreate(directory: directory)
        let keyFile = directory + "/identity.pem"
        XCTAssertEqual(chmod(keyFile, 0o644), 0)

        XCTAssertThrowsError(try Identity.loadOrCreate(directory: directory)) { error in
            let error = error as? SecurityError
            XCTAssertEqual(error?.kind, .keyFile)
            XCTAssertTrue(error?.description.contains(keyFile) ?? false, "\(String(describing: error))")
            XCTAssertTrue(error?.description.contains("0644") ?? false, "\(String(describing: error))")
        }
        // The refused file is left alone, not replaced by a new key.
        XCTAssertEqual(try permissions(keyFile), 0o644)
    }

    func testRefusesAFileThatIsNotAPrivateKey() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        let keyFile = directory + "/identity.pem"
        XCTAssertTrue(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data("not a key\n".utf8), attributes: [.posixPermissions: 0o600]))

        XCTAssertThrowsError(try Identity.loadOrCreate(directory: directory)) { error in
            XCTAssertEqual((error as? SecurityError)?.kind, .keyFile)
        }
    }

    /// A key written by OpenSSL's own tool (`openssl genpkey`, the 48-byte PKCS#8 form that `KeyFile` reads itself)
    /// loads to the public key OpenSSL derives from it, also with its base64 on one line; a PKCS#8 key of another
    /// algorithm (X25519: the same length) goes to OpenSSL's reader and is refused, not misread as Ed25519 by its
    /// seed. A reader that took any 48-byte key for Ed25519 would fail the X25519 case.
    func testKeysInEveryFormLoadToTheKeyOpenSSLReads() throws {
        for (form, arguments) in [
            ("genpkey", ["genpkey", "-algorithm", "ed25519"]),
            ("x25519", ["genpkey", "-algorithm", "x25519"]),
        ] {
            let directory = try Fixtures.temporaryDirectory(self)
            let keyFile = directory + "/identity.pem"
            let pem = try Fixtures.openssl(arguments)
            XCTAssertTrue(
                FileManager.default.createFile(atPath: keyFile, contents: pem, attributes: [.posixPermissions: 0o600]))
            if form == "x25519" {
                XCTAssertThrowsError(try Identity.loadOrCreate(directory: directory), form) { error in
                    XCTAssertEqual((error as? SecurityError)?.kind, .keyFile)
                }
                continue
            }
            let loaded = try Identity.loadOrCreate(directory: directory)
            // The public key as OpenSSL derives it from the same file.
            let der = try Fixtures.openssl(["pkey", "-in", keyFile, "-pubout", "-outform", "DER"])
            XCTAssertEqual(loaded.publicKey, Array(der.suffix(32)), form)
            // The same key with its base64 on one line.
            let text = String(decoding: pem, as: UTF8.self)
            let wrapped = text.replacingOccurrences(of: "\n", with: "").replacingOccurrences(
                of: "-----BEGIN PRIVATE KEY-----", with: "-----BEGIN PRIVATE KEY-----\n"
            ).replacingOccurrences(of: "-----END PRIVATE KEY-----", with: "\n-----END PRIVATE KEY-----\n")
            XCTAssertTrue(
                FileManager.default.createFile(
                    atPath: keyFile, contents: Data(wrapped.utf8), attributes: [.posixPermissions: 0o600]))
            XCTAssertEqual(try Identity.loadOrCreate(directory: directory).publicKey, loaded.publicKey, "one line")
        }
    }

    func testFingerprintIsThirtyTwoLowercaseHexDigitsOfSHA256() throws {
        // SHA-256 of 32 zero bytes is 66687aad f862bd77 6c8fc18b 8e9f8e20 0897...; the id is its first 16 bytes.
        XCTAssertEqual(fingerprint(ofPublicKey: [UInt8](repeating: 0, count: 32)), "66687aadf862bd776c8fc18b8e9f8e20")

        let identity = try Identity.ephemeral()
        XCTAssertEqual(identity.fingerprint, fingerprint(ofPublicKey: identity.publicKey))
        XCTAssertEqual(identity.fingerprint.count, 32)
        XCTAssertTrue(identity.fingerprint.allSatisfy { "0123456789abcdef".contains($0) }, identity.fingerprint)
    }

    private func permissions(_ path: String) throws -> mode_t {
        var status = stat()
        XCTAssertEqual(stat(path, &status), 0, "stat \(path)")
        return status.st_mode & 0o7777
    }
}
