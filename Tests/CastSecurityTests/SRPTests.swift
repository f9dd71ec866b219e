import COpenSSL
import CastSystem
import XCTest

@testable import CastSecurity

final class SRPTests: XCTestCase {
    private enum Fixtures {
        /// RFC 5054 appendix B (1024-bit group, SHA-1); K, M1 and M2 from the Python `srptools` package
        /// (HomeKit-style proofs, empty binding).
        enum RFC5054 {
            static let username = "alice"
            static let password = "password123"
            static let salt = hex("BEB25379D1A8581EB5A727673A2441EE")
            static let a = hex("60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D4393")
            static let b = hex("E487CB59D31AC550471E81F00F6928E01DDA08E974A004F49E61F5D105284D20")
            static let k = hex("7556AA045AEF2CDD07ABAF0F665C3E818913186F")
            static let x = hex("94B7555AABE9127CC58CCF4993DB6CF84D16C124")
            static let v = hex(
                """
                7E273DE8696FFC4F4E337D05B4B375BEB0DDE1569E8FA00A9886D8129BADA1F1822223CA1A605B530E379BA4729FDC59\
                F105B4787E5186F5C671085A1447B52A48CF1970B4FB6F8400BBF4CEBFBB168152E08AB5EA53D15C1AFF87B2B9DA6E04\
                E058AD51CC72BFC9033B564E26480D78E955A5E29E7AB245DB2BE315E2099AFB
                """)
            static let A = hex(
                """
                61D5E490F6F1B79547B0704C436F523DD0E560F0C64115BB72557EC44352E8903211C04692272D8B2D1A5358A2CF1B6E\
                0BFCF99F921530EC8E39356179EAE45E42BA92AEACED825171E1E8B9AF6D9C03E1327F44BE087EF06530E69F66615261\
                EEF54073CA11CF5858F0EDFDFE15EFEAB349EF5D76988A3672FAC47B0769447B
                """)
            static let B = hex(
                """
                BD0C61512C692C0CB6D041FA01BB152D4916A1E77AF46AE105393011BAF38964DC46A0670DD125B95A981652236F99D9\
                B681CBF87837EC996C6DA04453728610D0C6DDB58B318885D7D82C7F8DEB75CE7BD4FBAA37089E6F9C6059F388838E7A\
                00030B331EB76840910440B1B27AAEAEEB4012B7D7665238A8E3FB004B117B58
                """)
            static let u = hex("CE38B9593487DA98554ED47D70A7AE5F462EF019")
            static let S = hex(
                """
                B0DC82BABCF30674AE450C0287745E7990A3381F63B387AAF271A10D233861E359B48220F7C4693C9AE12B0A6F67809F\
                0876E2D013800D6C41BB59B6D5979B5C00A172B4A2A5903A0BDCAF8A709585EB2AFAFA8F3499B200210DCC1F10EB3394\
                3CD67FC88A2F39A4BE5BEC4EC0A3212DC346D7E474B29EDE8A469FFECA686E5A
                """)
            static let K = hex("017EEFA1CEFC5C2E626E21598987F31E0F1B11BB")
            static let M1 = hex("3F3BC67169EA71302599CF1B0F5D408B7B65D347")
            static let M2 = hex("9CAB3C575A11DE37D3AC1421A9F009236A48EB55")
        }

        /// Our own 3072-bit / SHA-512 vector, computed with the Python `srptools` 2.0.0 package (an independent
        /// implementation) from these inputs; empty binding, as `srptools` has none.
        enum Cast3072 {
            static let username = "Pair-Setup"
            static let password = "1234"
            static let salt = hex("A1B2C3D4E5F60718293A4B5C6D7E8F90")
            static let a = hex("5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5F5E7C1A38D6F492B0")
            static let b = hex("A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7597B1D3FD1F395B7")
            static let A = hex(
                """
                421d7c8a03f1dcd15b384227fcfc6fc7df5dabc715d1b5efea151e4520603b00001e1e1d04e484e04225215c7fc1aa79\
                1f2b9daa541010dcd1ddf15a882a3eb11618ff6b484bf82c9181e760ac40476d70c92bbd5e5c61425199e67183fda2ba\
                7e480d5458386e9c8e61f69ef1334b646b4b7ddecdc18c1539b8146f55ab9eaad04f704212f5c82a53b73d322ed53871\
                f80e262e62c2bb50fbb6b407f76af5cf4b751d71279b92b7153167ec1405a078272b929ca48d3a64a1aea5b041fd89fe\
                c39fc6f6843481335d551f1dc6c12ccd7acab8fcf49c898b92edc703b37593512278152fdb610109e0a2720484e1ebc2\
                953cd6a63edd32ac5daee7b9edd5a7750a14592a8122f5483d29f7ce79708841f1d20a57650c37af774b44fa2dece0e2\
                55397a6ea80090fb7eddb1957244fc6ea21f49a61d5138a7bd5c2fe82f3c30dec371243228aef97e6f8af2c28779be43\
                e908915820cdbaf4abcfb7f85747bca5aad49e66c0492d7aaf4f8abf8d8d252f962be23cb76bc07d7dd51f4c8ea77fbe
                """)
            static let B = hex(
                """
                3e450fffbca273cbd41eee6ffd27bcfcd92ea518c06e18c61714145c0f3be4272012c72302c581e3ffbc509f8ebb3ca6\
                9aa07d748a7d6547e2e252141e17757d206d9b3bcc89f2b39b274d9417dfb6cfe8c8e3f06375e6dff7f4e64a076508ab\
                1dee638c053e142e14ccdba9a079ee8e74f7d4d13f689e52aed28bffd90aca238d5a13d35a3be610e34000396b752b17\
                c8cc324be17fe8f6f097c92e5900067dc002f1100844fb8ff212723bc4fba175bf9f0c0e1cc114a5103b35459f9f32f4\
                3ab7fe19c4997790a2c1b6e6d53793ed9092520878210023b08edb82b16f16a0d53bc6008eac463e481fae81c29c0b3b\
                9960a5d300f2dd62a01b7ecbf4042b5e1ef2940094760c4aac61c80e714e82be012600eec549bf384ce43dcd5f3717d2\
                4b56929b522a0d496d6f1f7d436972e46ba9c57850da6da9441d22094a0bf4b402882543d64cb00c01a60160783c08cb\
                7df703c551b6a9cc13b2357f3e05fa6e333b6b9ee040972791f7c513fcad297c85870633f9c0137c3a088a3f959e0874
                """)
            static let K = hex(
                """
                3510906866cc6d602fccdc912d68a8164017917e2eeac32c8fc27771c5dbc717\
                bb00fd9085eba9f683cdd24d2fb1953c4ea7df723caec5ea2034a268f0305866
                """)
            static let M1 = hex(
                """
                86d5ae7c2b523f0673cd74f2c9884a38eaa794c1f6aed24a6bab51c7ff94538d\
                bcd07361e1703152b34b195c75ab44a021bb14476b11feaf62cbb911ae36d6da
                """)
            static let M2 = hex(
                """
                d859fa9ed9da8f09726a69fdb399e1c2786bc4d5b470ec3fbbeab001274a1227\
                f7b186bbe105a2a743290d31487fddb72218e4baf558f243d54075a165c3f40b
                """)
        }

        static let username = "Pair-Setup"
        static let binding = (0..<32).map { UInt8($0) }

        static func hex(_ text: String) -> [UInt8] { bytesFromHex(text) }
    }

    // MARK: Known answers

    func testRFC5054AppendixBArithmetic() throws {
        typealias V = Fixtures.RFC5054
        let session = SRPSession(group: .rfc5054_1024, hash: .sha1)
        XCTAssertEqual(session.multiplier.bytes, V.k)
        XCTAssertEqual(session.passwordKey(username: V.username, password: V.password, salt: V.salt).bytes, V.x)
        let verifier = SRPServer.makeVerifier(
            username: V.username, password: V.password, salt: V.salt, group: .rfc5054_1024, hash: .sha1)
        XCTAssertEqual(verifier, V.v)

        let client = SRPClient(username: V.username, password: V.password, group: .rfc5054_1024, hash: .sha1, a: V.a)
        XCTAssertEqual(client.A, V.A)
        let server = SRPServer(
            username: V.username, salt: V.salt, verifier: verifier, group: .rfc5054_1024, hash: .sha1, b: V.b)
        XCTAssertEqual(server.B, V.B)
        XCTAssertEqual(try session.scrambler(A: BigNumber(bytes: V.A), B: BigNumber(bytes: V.B)).bytes, V.u)

        // K = H(S): matching K means the client computed the RFC's premaster secret S.
        let M1 = try client.respond(salt: V.salt, B: server.B, binding: [])
        XCTAssertEqual(SRPHash.sha1(V.S), V.K)
        XCTAssertEqual(client.unverifiedSessionKey, V.K)
        XCTAssertEqual(M1, V.M1)
        let M2 = try server.verify(A: client.A, M1: M1, binding: [])
        XCTAssertEqual(M2, V.M2)
        XCTAssertEqual(server.sessionKey, V.K)
        try client.verify(M2: M2)
        XCTAssertEqual(client.sessionKey, V.K)
    }

    func test3072SHA512VectorFromSrptools() throws {
        typealias V = Fixtures.Cast3072
        let verifier = SRPServer.makeVerifier(username: V.username, password: V.password, salt: V.salt)
        XCTAssertEqual(verifier.count, 384, "the verifier is PAD()ded to N's width")
        let client = SRPClient(
            username: V.username, password: V.password, group: .rfc5054_3072, hash: .sha512, a: V.a)
        let server = SRPServer(
            username: V.username, salt: V.salt, verifier: verifier, group: .rfc5054_3072, hash: .sha512, b: V.b)
        XCTAssertEqual(client.A, V.A)
        XCTAssertEqual(server.B, V.B)
        let M1 = try client.respond(salt: V.salt, B: server.B, binding: [])
        XCTAssertEqual(M1, V.M1)
        XCTAssertEqual(try server.verify(A: client.A, M1: M1, binding: []), V.M2)
        try client.verify(M2: V.M2)
        XCTAssertEqual(client.sessionKey, V.K)
        XCTAssertEqual(server.sessionKey, V.K)
    }

    func test3072GroupIsTheRFC3526PrimeWithGenerator5() {
        XCTAssertEqual(SRPGroup.rfc5054_3072.prime, rfc3526Prime3072())
        XCTAssertEqual(SRPGroup.rfc5054_3072.prime.count, 384)
        XCTAssertEqual(SRPGroup.rfc5054_3072.generator, 5)
        XCTAssertEqual(SRPGroup.rfc5054_1024.prime.count, 128)
    }

    // MARK: Exchanges

    func testFullExchangeWithBindingAgreesOnTheKey() throws {
        let (client, server, salt) = makePair(clientPassword: "4821", serverPassword: "4821")
        XCTAssertEqual(client.A.count, 384, accuracy: 2)
        let M1 = try client.respond(salt: salt, B: server.B, binding: Fixtures.binding)
        XCTAssertEqual(M1.count, 64)
        let M2 = try server.verify(A: client.A, M1: M1, binding: Fixtures.binding)
        XCTAssertNil(client.sessionKey, "no key before M2 is checked")
        try client.verify(M2: M2)
        XCTAssertEqual(client.sessionKey?.count, 64)
        XCTAssertEqual(client.sessionKey, server.sessionKey)
    }

    func testBindingChangesBothProofs() throws {
        typealias V = Fixtures.Cast3072
        let verifier = SRPServer.makeVerifier(username: V.username, password: V.password, salt: V.salt)
        let client = SRPClient(
            username: V.username, password: V.password, group: .rfc5054_3072, hash: .sha512, a: V.a)
        let server = SRPServer(
            username: V.username, salt: V.salt, verifier: verifier, group: .rfc5054_3072, hash: .sha512, b: V.b)
        let M1 = try client.respond(salt: V.salt, B: server.B, binding: Fixtures.binding)
        XCTAssertNotEqual(M1, V.M1)
        // M1 = H(H(N) xor H(g) | H(I) | s | A | B | K | binding), written out independently of SRPSession.
        let mixed = zip(SRPHash.sha512(SRPGroup.rfc5054_3072.prime), SRPHash.sha512([5])).map { $0 ^ $1 }
        let expectedM1 = SRPHash.sha512(
            mixed, SRPHash.sha512(Array(V.username.utf8)), V.salt, V.A, V.B, V.K, Fixtures.binding)
        XCTAssertEqual(M1, expectedM1)
        let M2 = try server.verify(A: client.A, M1: M1, binding: Fixtures.binding)
        XCTAssertEqual(M2, SRPHash.sha512(V.A, M1, V.K, Fixtures.binding))
    }

    func testFreshExchangesUseFreshSecrets() {
        let first = SRPClient(username: Fixtures.username, password: "1234")
        let second = SRPClient(username: Fixtures.username, password: "1234")
        XCTAssertNotEqual(first.A, second.A)
        XCTAssertNotEqual(SRPServer.makeSalt(), SRPServer.makeSalt())
        XCTAssertEqual(SRPServer.makeSalt().count, 16)
    }

    // MARK: Failures

    func testWrongPasswordIsRefusedByTheServer() throws {
        let (client, server, salt) = makePair(clientPassword: "1111", serverPassword: "4821")
        let M1 = try client.respond(salt: salt, B: server.B, binding: Fixtures.binding)
        assertThrows(.authenticationFailed) { _ = try server.verify(A: client.A, M1: M1, binding: Fixtures.binding) }
        XCTAssertNil(server.sessionKey)
    }

    func testRelayedSessionWithDifferentBindingsFails() throws {
        // A man in the middle terminates TLS on both sides and forwards the SRP messages unchanged: the two
        // TLS sessions differ, so the exporter values do.
        let (client, server, salt) = makePair(clientPassword: "4821", serverPassword: "4821")
        let senderSideBinding = Fixtures.binding
        let receiverSideBinding = Fixtures.binding.map { $0 ^ 0x5a }
        let M1 = try client.respond(salt: salt, B: server.B, binding: senderSideBinding)
        assertThrows(.authenticationFailed) { _ = try server.verify(A: client.A, M1: M1, binding: receiverSideBinding) }
        XCTAssertNil(server.sessionKey)
    }

    func testBindingFromTheTLSExporterPairsOnOneConnectionAndFailsAcrossARelay() throws {
        let direct = try CastSecurityTests.Fixtures.connectedPair()
        defer {
            direct.client.close()
            direct.server.close()
        }
        let senderBinding = try direct.client.pairingBinding()
        XCTAssertEqual(senderBinding.count, 32)
        XCTAssertEqual(try direct.server.pairingBinding(), senderBinding)

        let (client, server, salt) = makePair(clientPassword: "4821", serverPassword: "4821")
        let M1 = try client.respond(salt: salt, B: server.B, binding: senderBinding)
        try client.verify(M2: try server.verify(A: client.A, M1: M1, binding: try direct.server.pairingBinding()))

        // A relay terminates TLS towards the receiver on a second connection of its own.
        let relayed = try CastSecurityTests.Fixtures.connectedPair()
        defer {
            relayed.client.close()
            relayed.server.close()
        }
        let (client2, server2, salt2) = makePair(clientPassword: "4821", serverPassword: "4821")
        let relayedM1 = try client2.respond(salt: salt2, B: server2.B, binding: senderBinding)
        assertThrows(.authenticationFailed) {
            _ = try server2.verify(A: client2.A, M1: relayedM1, binding: try relayed.server.pairingBinding())
        }
    }

    func testWrongM2IsRefusedByTheClient() throws {
        let (client, server, salt) = makePair(clientPassword: "4821", serverPassword: "4821")
        let M1 = try client.respond(salt: salt, B: server.B, binding: Fixtures.binding)
        var M2 = try server.verify(A: client.A, M1: M1, binding: Fixtures.binding)
        M2[7] ^= 1
        assertThrows(.authenticationFailed) { try client.verify(M2: M2) }
        XCTAssertNil(client.sessionKey)
    }

    func testServerRejectsAThatIsZeroOrNotBelowN() {
        let prime = SRPGroup.rfc5054_3072.prime
        let candidates: [(String, [UInt8])] = [
            ("A = 0", [0]), ("A empty", []), ("A = N", prime), ("A = PAD(0)", [UInt8](repeating: 0, count: 384)),
            ("A = 2N (wider than N)", BigNumberContext().add(BigNumber(bytes: prime), BigNumber(bytes: prime)).bytes),
            ("A = N with a leading zero (wider than N)", [0] + prime),
        ]
        for (label, A) in candidates {
            let (_, server, _) = makePair(clientPassword: "1", serverPassword: "1")
            assertThrows(.invalidPeerValue, label) {
                _ = try server.verify(A: A, M1: [UInt8](repeating: 0, count: 64), binding: [])
            }
        }
    }

    func testServerRejectsAAboveN() {
        // N + 1 (N is odd and ends in 0xFF, so add with carry).
        let N = BigNumber(bytes: SRPGroup.rfc5054_3072.prime)
        let aboveN = BigNumberContext().add(N, BigNumber(word: 1)).bytes
        XCTAssertEqual(aboveN.count, 384)
        let (_, server, _) = makePair(clientPassword: "1", serverPassword: "1")
        assertThrows(.invalidPeerValue) { _ = try server.verify(A: aboveN, M1: [], binding: []) }
    }

    func testClientRejectsBThatIsZeroOrN() {
        for B in [[0], [], SRPGroup.rfc5054_3072.prime] as [[UInt8]] {
            let client = SRPClient(username: Fixtures.username, password: "1234")
            assertThrows(.invalidPeerValue) { _ = try client.respond(salt: [1, 2, 3], B: B, binding: []) }
        }
    }

    func testClientRejectsEmptyOrHugeSalt() {
        let (_, server, _) = makePair(clientPassword: "1", serverPassword: "1")
        for salt in [[], [UInt8](repeating: 7, count: 65)] as [[UInt8]] {
            let client = SRPClient(username: Fixtures.username, password: "1")
            assertThrows(.invalidPeerValue) { _ = try client.respond(salt: salt, B: server.B, binding: []) }
        }
    }

    func testProofComparisonIsExact() {
        XCTAssertTrue(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2]))
        XCTAssertFalse(constantTimeEqual([], [0]))
        XCTAssertTrue(constantTimeEqual([], []))
    }

    // MARK: Helpers

    /// The RFC 3526 3072-bit MODP prime as OpenSSL has it built in.
    private func rfc3526Prime3072() -> [UInt8] {
        guard let prime = BN_get_rfc3526_prime_3072(nil) else { return [] }
        defer { BN_free(prime) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(prime)) + 7) / 8)
        _ = BN_bn2bin(prime, &bytes)
        return bytes
    }

    private func makePair(clientPassword: String, serverPassword: String) -> (SRPClient, SRPServer, [UInt8]) {
        let salt = SRPServer.makeSalt()
        let verifier = SRPServer.makeVerifier(username: Fixtures.username, password: serverPassword, salt: salt)
        let server = SRPServer(username: Fixtures.username, salt: salt, verifier: verifier)
        let client = SRPClient(username: Fixtures.username, password: clientPassword)
        return (client, server, salt)
    }

    private func assertThrows(
        _ kind: SecurityError.Kind, _ label: String = "", line: UInt = #line, _ body: () throws -> Void
    ) {
        XCTAssertThrowsError(try body(), label, line: line) { error in
            XCTAssertEqual((error as? SecurityError)?.kind, kind, "\(label): \(error)", line: line)
        }
    }
}
