/// SHA-256 (FIPS 180-4), written once for every digest SaveDesk takes: rollout buckets and outbox
/// folder names on the client side, idempotency fingerprints and API-key digests on the server.
/// Written here rather than taken from swift-crypto so the console does not link BoringSSL for it
/// (about 1.2 MB of its resident memory). Its work never branches on or indexes by the data, so
/// hashing a presented key tells nothing by its timing. The server keeps swift-crypto for
/// signatures (JWS, the local StoreKit CA).
public enum SHA256Digest {
    /// Bytes in a digest.
    public static let size = 32

    /// The 32-byte digest of `bytes`. Contiguous bytes (an array, a native string's UTF-8) are
    /// read in place; the only allocation is the answer (it runs for every API request: the
    /// presented key's digest).
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    private static func hash(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
        )
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                let whole = message.count / 64
                for block in 0..<whole {
                    compress(&state, UnsafeRawBufferPointer(rebasing: message[block * 64..<block * 64 + 64]), words: words)
                }
                // The last part, 0x80, zeros and the length in bits: one block, or two when the
                // length no longer fits after the part.
                let rest = message.count - whole * 64
                let tailLength = rest + 9 <= 64 ? 64 : 128
                tail.initialize(repeating: 0)
                for index in 0..<rest { tail[index] = message[whole * 64 + index] }
                tail[rest] = 0x80
                let bitLength = UInt64(message.count) &* 8
                for index in 0..<8 { tail[tailLength - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> UInt64(index * 8)) }
                let padded = UnsafeRawBufferPointer(tail)
                for block in stride(from: 0, to: tailLength, by: 64) {
                    compress(&state, UnsafeRawBufferPointer(rebasing: padded[block..<block + 64]), words: words)
                }
            }
        }
        return [UInt8](unsafeUninitializedCapacity: size) { digest, count in
            withUnsafeBytes(of: state) { words in
                for index in 0..<8 {
                    let word = words.load(fromByteOffset: index * 4, as: UInt32.self)
                    for byte in 0..<4 { digest[index * 4 + byte] = UInt8(truncatingIfNeeded: word >> UInt32(24 - byte * 8)) }
                }
            }
            count = size
        }
    }

    /// One 64-byte block into `state` (FIPS 180-4, 6.2.2); `words` is the message schedule's room.
    private static func compress(
        _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawBufferPointer,
        words: UnsafeMutableBufferPointer<UInt32>
    ) {
        for index in 0..<16 {
            let offset = index * 4
            words[index] = UInt32(block[offset]) << 24 | UInt32(block[offset + 1]) << 16 | UInt32(block[offset + 2]) << 8 | UInt32(block[offset + 3])
        }
        for index in 16..<64 {
            let w15 = words[index - 15], w2 = words[index - 2]
            let s0 = rotate(w15, 7) ^ rotate(w15, 18) ^ (w15 >> 3)
            let s1 = rotate(w2, 17) ^ rotate(w2, 19) ^ (w2 >> 10)
            words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = state
        roundConstants.withUnsafeBufferPointer { constants in
            for index in 0..<64 {
                let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ s1 &+ choice &+ constants[index] &+ words[index]
                let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ majority
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }

    /// The digest as lowercase hexadecimal.
    public static func hex(_ bytes: some Collection<UInt8>, prefix length: Int = 32) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in hash(bytes).prefix(length) { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
        return String(decoding: text, as: UTF8.self)
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value >> count | value << (32 - count) }

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}
