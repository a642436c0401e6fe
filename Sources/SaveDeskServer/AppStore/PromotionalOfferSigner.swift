import Crypto
import Foundation
import JWTKit

/// Signs promotional offers for Apple's cancel page (`promotionalOfferSignatureV2`): a JWS, ES256,
/// `kid` the In-App Purchase key's id, with Apple's claims. The key is read once at start from the
/// file the config names (it must be the server's alone); a test server with a local StoreKit CA
/// and no key file makes its own in the data directory. Nothing on the request path touches the
/// network or the disk.
struct PromotionalOfferSigner: Sendable {
    /// The claims Apple's StoreKit checks (`aud` is always "promotional-offer").
    struct Claims: JWTPayload, Equatable {
        var iss: String
        var iat: Int64
        var aud: String
        var bid: String
        var nonce: String
        var productId: String
        var offerIdentifier: String
        var transactionId: String
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static let localKeyFile = "iap-signing-key.p8"

    let keys: JWTKeyCollection
    let keyId: String
    let issuerId: String
    let bundleId: String
    /// The public half, for tests and for `savedesk` to show.
    let publicKey: P256.Signing.PublicKey

    /// The signer of `settings`, its key read from `signing_key_file`, or (a local-CA server with
    /// none) from the data directory, made there on first start with mode 0600.
    static func load(
        _ settings: ServerConfig.RetentionMessagingSettings, bundleId: String, localCA: Bool, dataDirectory: URL
    ) async throws -> PromotionalOfferSigner? {
        let path: URL
        if let file = settings.signingKeyFile {
            path = URL(fileURLWithPath: file)
        } else if localCA {
            path = dataDirectory.appendingPathComponent(localKeyFile)
            try PrivateFile.withLock(in: dataDirectory) {
                if !FileManager.default.fileExists(atPath: path.path) {
                    try PrivateFile.write(Data(P256.Signing.PrivateKey().pemRepresentation.utf8), to: path, mode: 0o600)
                }
            }
        } else {
            return nil
        }
        var status = stat()
        guard stat(path.path, &status) == 0, status.st_mode & 0o077 == 0 else {
            throw SaveDeskError(status: 500, code: "internal", "the In-App Purchase key \(path.path) is missing or readable by others (chmod 600)")
        }
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: path, encoding: .utf8))
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: key), kid: JWKIdentifier(string: settings.signingKeyId))
        return PromotionalOfferSigner(
            keys: keys, keyId: settings.signingKeyId, issuerId: settings.issuerId, bundleId: bundleId, publicKey: key.publicKey
        )
    }

    /// A V2 signature for `offerIdentifier` of `productId` (App Store ids), bound to the
    /// subscriber's original transaction, issued at `now`.
    func sign(productId: String, offerIdentifier: String, transactionId: String, now: Date) async throws -> String {
        let claims = Claims(
            iss: issuerId, iat: Int64(now.timeIntervalSince1970), aud: "promotional-offer", bid: bundleId,
            nonce: UUID.random().uuidString.lowercased(), productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId
        )
        return try await keys.sign(claims, kid: JWKIdentifier(string: keyId))
    }
}
