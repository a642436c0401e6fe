import Crypto
import Foundation
import JWTKit
import SwiftASN1
import Synchronization
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store JWS: the x5c chain to a trusted root, Apple's marker OIDs on the leaf and
/// the intermediate, the ES256 signature, then bundle id and environment. Each failure has its
/// own error code, and nothing is stored for a rejected token.
struct AppStoreVerifier: Sendable {
    /// On the leaf (App Store receipt signing).
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// On the intermediate (Apple Worldwide Developer Relations).
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let roots: [Certificate]
    let bundleId: String
    let environment: String
    /// Chains already validated (Apple signs with the same chain for months): their checks are
    /// not repeated while every certificate of the chain is within its validity.
    var validated = ValidatedChains()

    /// x5c headers (the three certificates as sent) that led to a trusted root with Apple's
    /// markers, with when they stop being valid. At most `capacity`; the oldest go first.
    final class ValidatedChains: Sendable {
        static let capacity = 32
        private let entries = Mutex<[(chain: [String], from: Date, until: Date, leafKey: JWTKeyCollection)]>([])

        /// The leaf's key of a chain validated before, if `time` is within its validity.
        func leafKey(_ chain: [String], at time: Date) -> JWTKeyCollection? {
            entries.withLock { $0.first { $0.chain == chain && $0.from <= time && time < $0.until }?.leafKey }
        }

        func insert(_ chain: [String], from: Date, until: Date, leafKey: JWTKeyCollection) {
            entries.withLock { entries in
                entries.removeAll { $0.chain == chain }
                entries.append((chain, from, until, leafKey))
                if entries.count > Self.capacity { entries.removeFirst(entries.count - Self.capacity) }
            }
        }
    }

    private struct Header: Decodable {
        var alg: String?
        var x5c: [String]?
    }

    func verify<Payload: AppStoreSignedPayload>(
        _ token: String, as type: Payload.Type, now: Date
    ) async throws(SaveDeskError) -> Payload {
        func reject(_ code: String, _ message: String) -> SaveDeskError { .unprocessable(message, code: code) }
        // 1. Well formed: three segments, an ES256 header with an x5c chain, a readable payload.
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URL(parts[0]), let payloadData = Self.base64URL(parts[1]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else { throw reject("jws_malformed", "the signed data is not a JWS (header.payload.signature)") }
        guard header.alg == "ES256" else {
            throw reject("jws_malformed", "App Store data is signed with ES256, this token says \(header.alg ?? "nothing")")
        }
        // Exactly leaf, intermediate and root, as Apple sends and as Apple's own library requires.
        guard let x5c = header.x5c, x5c.count == 3,
            let chain = try? x5c.map({ encoded -> Certificate in
                guard let der = Data(base64Encoded: encoded) else { throw SaveDeskError.badRequest("x5c") }
                return try Certificate(derEncoded: [UInt8](der))
            })
        else { throw reject("jws_malformed", "the x5c header must hold the leaf, intermediate and root certificates") }
        guard (try? JSONDecoder().decode(Payload.self, from: payloadData)) != nil else {
            throw reject("jws_malformed", "the payload is not a \(Payload.self)")
        }
        let leafKey: JWTKeyCollection
        if let known = self.validated.leafKey(x5c, at: now) {
            leafKey = known
        } else {
            // 2. The chain ends at a trusted root.
            let verifier: X5CVerifier
            do { verifier = try X5CVerifier(rootCertificates: roots) } catch {
                throw reject("jws_untrusted_root", "no trusted App Store root is configured")
            }
            let result: CertificateValidationResult
            do {
                result = try await verifier.verifyChain(certificates: chain) { RFC5280Policy(fixedExpiryValidationTime: now) }
            } catch {
                throw reject("jws_untrusted_root", "the certificate chain could not be checked: \(error)")
            }
            guard case .validCertificate(let validated) = result, validated.count == 3, validated.first == chain[0] else {
                throw reject("jws_untrusted_root", "the certificate chain does not lead to a trusted App Store root in three steps")
            }
            // 3. Apple's marker extensions, on the chain as validated (not as the header lists it).
            guard validated[0].extensions[oid: Self.leafMarker] != nil, validated[1].extensions[oid: Self.intermediateMarker] != nil else {
                throw reject("jws_missing_marker_oid", "the certificates lack Apple's App Store marker extensions")
            }
            guard let key = P256.Signing.PublicKey(validated[0].publicKey), let es256 = try? ES256PublicKey(backing: key) else {
                throw reject("jws_malformed", "the signing certificate's key is not a P-256 key (ES256)")
            }
            leafKey = await JWTKeyCollection().add(ecdsa: es256)
            // As sent is as validated (leaf, intermediate, root): the same header again is the same chain.
            if Array(validated) == chain {
                self.validated.insert(x5c, from: chain.map(\.notValidBefore).max() ?? now, until: chain.map(\.notValidAfter).min() ?? now,
                                      leafKey: leafKey)
            }
        }
        // 4. The signature, by the leaf's key (every time).
        let payload: Payload
        do {
            payload = try await leafKey.verify(token, as: Payload.self)
        } catch {
            throw reject("jws_bad_signature", "the signature does not match the signed data")
        }
        // 5. Ours, and from the expected environment. A missing bundle id or environment is a
        // mismatch, as in Apple's library (renewal info carries no bundle id).
        if Payload.carriesBundleId, payload.signedBundleId != bundleId {
            throw reject("jws_wrong_bundle", "signed for bundle \(payload.signedBundleId ?? "(none)"); this server serves \(bundleId)")
        }
        if payload.signedEnvironment != environment {
            throw reject("jws_wrong_environment", "signed in the \(payload.signedEnvironment ?? "(no)") environment; this server accepts \(environment)")
        }
        return payload
    }

    static func base64URL(_ segment: Substring) -> Data? {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
