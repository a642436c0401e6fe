import Foundation

/// Writes that survive a crash: a temporary file, flushed to disk, then renamed into place, so a
/// reader sees the old contents or the new ones, never half of either.
public enum DurableFile {
    public static func write(_ data: Data, to target: URL) throws {
        let temporary = target.appendingPathExtension("tmp")
        FileManager.default.createFile(atPath: temporary.path, contents: nil)
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.write(contentsOf: data)
        try handle.synchronize()
        try handle.close()
        // rename(2), not FileManager.replaceItemAt, which is not atomic on Linux.
        guard rename(temporary.path, target.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: target.path])
        }
    }
}
