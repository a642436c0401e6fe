import Foundation

/// `savedesk-server`, the sibling binary that carries the backend: `savedesk serve` and
/// `savedesk config` become it, and `savedesk demo` runs it as a child. The console binary links
/// no server code (its pages, NIO's server side, the store, crypto for JWS) and stays small.
enum ServerBinary {
    /// Next to this binary (`SAVEDESK_SERVER_BINARY` overrides).
    static var path: String {
        if let path = ProcessInfo.processInfo.environment["SAVEDESK_SERVER_BINARY"], !path.isEmpty { return path }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("savedesk-server").path
    }

    /// Becomes `savedesk-server` with these arguments (same process: signals and the exit code are
    /// the server's). Returns only when that cannot happen, with why.
    static func become(_ arguments: [String]) -> CLIError {
        let path = self.path
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        return CLIError(message: "could not run \(path) (\(reason)); it is built next to savedesk (swift build builds both)", code: .failure)
    }

    /// `savedesk-server` as a child: its stdin is a pipe this process holds (closing it, or
    /// exiting, stops the child), its stdout is read for the first line (the address it serves),
    /// its stderr is this process's; in a process group of its own.
    final class Child {
        let pid: pid_t
        private let input: Int32
        private let output: Int32

        init(_ arguments: [String]) throws {
            var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0]
            guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0 else { throw CLIError(message: "no pipe for the demo server", code: .failure) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
            posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
            for fd in stdinPipe + stdoutPipe { posix_spawn_file_actions_addclose(&actions, fd) }
            // Its own process group: Ctrl-C at the terminal interrupts the console, which then
            // delivers what it recorded to this server before stopping it.
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
            let path = ServerBinary.path
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
            close(stdinPipe[0])
            close(stdoutPipe[1])
            guard result == 0 else {
                close(stdinPipe[1])
                close(stdoutPipe[0])
                throw CLIError(message: "could not start \(path) (\(String(cString: strerror(result)))); it is built next to savedesk", code: .failure)
            }
            // The child must not inherit our end of its stdin through a later spawn.
            _ = fcntl(stdinPipe[1], F_SETFD, FD_CLOEXEC)
            _ = fcntl(stdoutPipe[0], F_SETFD, FD_CLOEXEC)
            self.pid = pid
            input = stdinPipe[1]
            output = stdoutPipe[0]
        }

        /// The first line the child writes (nil: it exited first, or `timeout` passed).
        func firstLine(timeout: Duration) -> String? {
            var line = Data()
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) >= 0 else { return nil }
                guard poller.revents != 0 else { continue }
                var byte: UInt8 = 0
                guard read(output, &byte, 1) == 1 else { return nil }
                if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
                line.append(byte)
            }
            return nil
        }

        /// Closes its stdin (it stops gracefully) and waits for it, at most `timeout`, then kills it.
        func stop(timeout: Duration = .seconds(5)) {
            close(input)
            let deadline = ContinuousClock.now + timeout
            var status: Int32 = 0
            while ContinuousClock.now < deadline {
                if waitpid(pid, &status, WNOHANG) == pid {
                    close(output)
                    return
                }
                usleep(20_000)
            }
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            close(output)
        }
    }
}
