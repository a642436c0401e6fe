import Crypto
import Foundation
import JWTKit
import SwiftASN1
import X509

/// A local App Store signing chain, as Xcode's local StoreKit testing has: a root, an
/// intermediate and a leaf, created in the data directory on first start of a test or demo
/// server and trusted by it. The demo device signs transactions and notifications with it.
struct LocalStoreKitCA: Sendable {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: P256.Signing.PrivateKey

    static let files = ["storekit-root.pem", "storekit-intermediate.pem", "storekit-leaf.pem", "storekit-leaf-key.pem"]

    /// The CA kept in `directory`, created there when missing (under the directory's lock: servers
    /// that share it and start together all get the one chain).
    static func loadOrCreate(in directory: URL) throws -> LocalStoreKitCA {
        try PrivateFile.withLock(in: directory) { try loadOrCreateLocked(in: directory) }
    }

    private static func loadOrCreateLocked(in directory: URL) throws -> LocalStoreKitCA {
        let paths = files.map { directory.appendingPathComponent($0) }
        if paths.allSatisfy({ FileManager.default.fileExists(atPath: $0.path) }) {
            // A key written by an older version may be readable by others: it is the server's alone.
            chmod(paths[3].path, 0o600)
            let texts = try paths.map { try String(contentsOf: $0, encoding: .utf8) }
            return LocalStoreKitCA(
                root: try Certificate(pemEncoded: texts[0]), intermediate: try Certificate(pemEncoded: texts[1]),
                leaf: try Certificate(pemEncoded: texts[2]), leafKey: try P256.Signing.PrivateKey(pemRepresentation: texts[3])
            )
        }
        let ca = try make()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let texts = [
            try ca.root.serializeAsPEM().pemString, try ca.intermediate.serializeAsPEM().pemString,
            try ca.leaf.serializeAsPEM().pemString, ca.leafKey.pemRepresentation,
        ]
        for (path, text) in zip(paths, texts) {
            // The signing key is private to the server's user.
            try PrivateFile.write(Data(text.utf8), to: path, mode: path.lastPathComponent.hasSuffix("key.pem") ? 0o600 : 0o644)
        }
        return ca
    }

    /// A new chain. `markers: false` leaves out Apple's marker extensions, `keyIdentifiers: false`
    /// the subject and authority key identifiers, `validUntil` an earlier end (for tests of what
    /// verifiers refuse).
    static func make(
        name: String = "SaveDesk Local StoreKit", markers: Bool = true, keyIdentifiers: Bool = true, validUntil: Date? = nil
    ) throws -> LocalStoreKitCA {
        let rootKey = P256.Signing.PrivateKey(), intermediateKey = P256.Signing.PrivateKey(), leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(name) Root CA") }
        let intermediateName = try DistinguishedName { CommonName("\(name) Intermediate CA") }
        let leafName = try DistinguishedName { CommonName("\(name) Signing") }
        // Long-lived on purpose: the test clock may move years ahead.
        let from = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01
        let until = validUntil ?? Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
        let marker = { (oid: ASN1ObjectIdentifier) in Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00]) }
        // Subject and authority key identifiers on every certificate, as strict X.509 checkers
        // (OpenSSL's X509_STRICT, used by Apple's App Store Server Library) require.
        let rootId = SubjectKeyIdentifier(hash: .init(rootKey.publicKey))
        let intermediateId = SubjectKeyIdentifier(hash: .init(intermediateKey.publicKey))
        let leafId = SubjectKeyIdentifier(hash: .init(leafKey.publicKey))
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: from, notValidAfter: until,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if keyIdentifiers { rootId }
            },
            issuerPrivateKey: .init(rootKey)
        )
        var intermediateExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            if keyIdentifiers {
                intermediateId
                AuthorityKeyIdentifier(keyIdentifier: rootId.keyIdentifier)
            }
        }
        if markers { try intermediateExtensions.append(marker(AppStoreVerifier.intermediateMarker)) }
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: from,
            notValidAfter: until, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: intermediateExtensions, issuerPrivateKey: .init(rootKey)
        )
        var leafExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            if keyIdentifiers {
                leafId
                AuthorityKeyIdentifier(keyIdentifier: intermediateId.keyIdentifier)
            }
        }
        if markers { try leafExtensions.append(marker(AppStoreVerifier.leafMarker)) }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: from, notValidAfter: until,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256, extensions: leafExtensions,
            issuerPrivateKey: .init(intermediateKey)
        )
        return LocalStoreKitCA(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    /// Signs a payload as the App Store does: ES256, with x5c [leaf, intermediate, root] (or
    /// another chain, for tests of what the verifier refuses).
    func sign(_ payload: some JWTPayload, chain: [Certificate]? = nil) async throws -> String {
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: leafKey))
        var header = JWTHeader()
        // jwt-kit takes the chain as PEM and writes it into the header as base64 DER.
        header.x5c = try (chain ?? [leaf, intermediate, root]).map { try $0.serializeAsPEM().pemString }
        return try await keys.sign(payload, header: header)
    }
}
