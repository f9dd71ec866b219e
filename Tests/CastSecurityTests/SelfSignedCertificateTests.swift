import Foundation
import XCTest

@testable import CastSecurity

/// The certificate `SelfSignedCertificate` writes by hand, read by OpenSSL's own tool: the fields it had when
/// OpenSSL's `X509_sign` made it, a signature that verifies, and DER that OpenSSL writes back byte for byte.
final class SelfSignedCertificateTests: XCTestCase {
    func testOpenSSLReadsTheCertificateAndItsSignatureVerifies() throws {
        let key = try PrivateKey.generateEd25519()
        let publicKey = try key.rawPublicKey()
        for commonName in ["e0c45de3b7d4b957fe0119d20eb82388", String(repeating: "n", count: 300)] {
            let certificate = try SelfSignedCertificate.make(key: key, commonName: commonName)
            let der = Data(certificate.der)
            let text = String(
                decoding: try Fixtures.openssl(["x509", "-inform", "DER", "-noout", "-text"], input: der), as: UTF8.self
            )
            XCTAssertTrue(text.contains("Version: 3 (0x2)"), text)
            XCTAssertEqual(text.components(separatedBy: "Signature Algorithm: ED25519").count, 3, text)
            XCTAssertTrue(text.contains("Issuer: CN = \(commonName)"), text)
            XCTAssertTrue(text.contains("Subject: CN = \(commonName)"), text)
            XCTAssertTrue(text.contains("Public Key Algorithm: ED25519"), text)
            // The key inside is ours: the last 32 bytes of its SubjectPublicKeyInfo.
            let pem = try Fixtures.openssl(["x509", "-inform", "DER"], input: der)
            let spki = try Fixtures.openssl(["x509", "-noout", "-pubkey"], input: pem)
            let spkiDER = try Fixtures.openssl(["pkey", "-pubin", "-outform", "DER"], input: spki)
            XCTAssertEqual(Array(spkiDER.suffix(32)), publicKey)
            // Valid now, for about 20 years, from a day ago.
            let dates = String(
                decoding: try Fixtures.openssl(["x509", "-noout", "-checkend", "0", "-dates"], input: pem),
                as: UTF8.self)
            XCTAssertTrue(dates.contains("Certificate will not expire"), dates)
            let notAfter = try XCTUnwrap(dates.split(separator: "\n").first { $0.hasPrefix("notAfter=") })
            XCTAssertTrue(
                notAfter.contains(String(Calendar(identifier: .gregorian).component(.year, from: Date()) + 20)), dates)
            // Self-signed: the signature verifies with the key it carries.
            let directory = try Fixtures.temporaryDirectory(self)
            let file = directory + "/certificate.pem"
            try pem.write(to: URL(fileURLWithPath: file))
            let verified = String(
                decoding: try Fixtures.openssl(["verify", "-check_ss_sig", "-CAfile", file, file]), as: UTF8.self)
            XCTAssertTrue(verified.contains(": OK"), verified)
            // DER as OpenSSL writes it: re-encoding what it parsed gives the same bytes.
            let rewritten = try Fixtures.openssl(["x509", "-outform", "DER"], input: pem)
            XCTAssertEqual(rewritten, der)
        }
    }

    /// RFC 5280's two time forms, and DER's long-form lengths.
    func testTimesAndLengthsHaveTheirDERForms() {
        XCTAssertEqual(DER.time(2_524_607_999), [0x17, 13] + Array("491231235959Z".utf8))  // 2049-12-31 23:59:59
        XCTAssertEqual(DER.time(2_524_608_000), [0x18, 15] + Array("20500101000000Z".utf8))  // 2050-01-01
        XCTAssertEqual(DER.time(1_796_169_600), [0x17, 13] + Array("261202000000Z".utf8))  // 2026-12-02
        XCTAssertEqual(DER.length(127), [127])
        XCTAssertEqual(DER.length(128), [0x81, 128])
        XCTAssertEqual(DER.length(300), [0x82, 1, 44])
    }
}
