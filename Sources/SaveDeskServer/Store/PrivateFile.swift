import Foundation

/// Writes a file readable only by its owner when `mode` says so: created with that mode from the
/// start (never widened afterwards), flushed, then renamed into place.
enum PrivateFile {
    static func write(_ data: Data, to target: URL, mode: mode_t = 0o600) throws {
        // Unique per write: two servers of one process (or two processes) may write at once.
        let temporary = target.path + ".tmp-\(getpid())-\(UUID().uuidString)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: target.path]) }
        fchmod(descriptor, mode)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: data)
        try handle.synchronize()
        try handle.close()
        guard rename(temporary, target.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: target.path])
        }
    }

    /// Runs `body` holding an exclusive lock on `directory` (flock(2) on its `.lock` file, created
    /// if missing): servers of one process or of several that share the directory and start
    /// together check and create its files one at a time, so all of them use the same ones.
    static func withLock<T>(in directory: URL, _ body: () throws -> T) throws -> T {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(".lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw CocoaError(.fileLocking, userInfo: [NSFilePathErrorKey: path]) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    struct Problem: Error { let message: String }

    /// A secret kept in a file: only its owner may read it (mode 0600 or 0400), at most 4 KiB,
    /// one line. The problem says why not, never what the file holds.
    static func readSecret(_ path: String) -> Result<String, Problem> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(Problem(message: "cannot read \(path)")) }
        guard info.st_mode & 0o077 == 0 else {
            return .failure(Problem(message: "\(path) can be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); make it 0600"))
        }
        guard info.st_size <= 4096, let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            return .failure(Problem(message: "\(path) is not a short text file"))
        }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty, !value.contains(where: \.isWhitespace) else {
            return .failure(Problem(message: "\(path) must hold the secret alone, on one line"))
        }
        return .success(value)
    }
}
