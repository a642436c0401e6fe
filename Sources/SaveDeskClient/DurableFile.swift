import Foundation

/// Writes that survive a crash and a power loss: a temporary file (readable by its owner only),
/// flushed to disk, then renamed or linked into place, then the folder itself flushed so the new
/// name is on disk too. A reader sees the old contents or the new ones, never half of either.
public enum DurableFile {
    public struct Failure: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// Replaces `target` with `data`.
    public static func write(_ data: Data, to target: URL) throws {
        let temporary = try writeTemporary(data, near: target)
        guard rename(temporary, target.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(path: target.path, reason: reason)
        }
        syncFolder(of: target)
    }

    /// Creates `target` with `data`, failing (false) if a file of that name exists already, even
    /// one another process created a moment ago: two writers never replace each other's file.
    public static func create(_ data: Data, at target: URL) throws -> Bool {
        let temporary = try writeTemporary(data, near: target)
        defer { unlink(temporary) }
        guard link(temporary, target.path) == 0 else {
            if errno == EEXIST { return false }
            throw Failure(path: target.path, reason: String(cString: strerror(errno)))
        }
        syncFolder(of: target)
        return true
    }

    /// Moves a file within one file system, durably.
    public static func move(_ source: URL, to target: URL) throws {
        guard rename(source.path, target.path) == 0 else {
            throw Failure(path: target.path, reason: String(cString: strerror(errno)))
        }
        syncFolder(of: target)
        syncFolder(of: source)
    }

    private static func writeTemporary(_ data: Data, near target: URL) throws -> String {
        let temporary = target.path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw Failure(path: target.path, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary)
            throw Failure(path: target.path, reason: "\(error)")
        }
        return temporary
    }

    /// Flushes a folder's entries (a rename is only durable once its folder is).
    static func syncFolder(of file: URL) {
        let descriptor = open(file.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
