import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid, for tests that run a binary.
///
/// Not Foundation's `Process`: on Linux (Swift 6.3.1) its `run()` sometimes crashes the whole test
/// process (a read past a `readdir` record while it lists `/proc/self/fd`; fixed upstream in
/// swift-corelibs-foundation#5472), and the more files a test process holds open, the likelier.
/// The child starts with only standard input, output and error open: no socket or database of
/// this process goes with it.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let status = Mutex<Int32?>(nil)

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `executable` (a path, or a name looked up in PATH) with `arguments`; its standard
    /// output and error go to the files named (created or truncated), input from /dev/null.
    /// `environment` nil inherits this process's.
    /// With `terminal` (a pseudo-terminal's path), input, output and error are that terminal instead.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdout: String = "/dev/null", stderr: String = "/dev/null", terminal: String? = nil
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let terminal {
            posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        closeFrom3(&actions)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        // As from a shell: no signal blocked, every one at its default. A child inherits the mask
        // of the thread that spawns it, and the test's threads (Swift concurrency's, libdispatch's)
        // block nearly all signals: a tmux server started from one ignored kill-server's SIGHUP to
        // its panes, and a `savedesk demo` left behind by a failed test outlived every stop.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawnp(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable): errno \(spawned)"])
        }
        return ChildProcess(pid: pid)
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+; not in Swift's Glibc module).
    private static func closeFrom3(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(actions, 3)
    }

    /// The exit status once it has ended (128 + the signal if a signal ended it), else nil.
    public var exitStatus: Int32? {
        status.withLock { known in
            if let known { return known }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let low = raw & 0x7f
            known = low == 0 ? (raw >> 8) & 0xff : 128 + low
            return known
        }
    }

    public var isRunning: Bool { exitStatus == nil }

    public func signal(_ signal: Int32) { if isRunning { kill(pid, signal) } }

    /// Waits (polling, bounded) for the end; nil if it is still running after `timeout`.
    public func wait(timeout: Duration = .seconds(120)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return exitStatus
    }
}
