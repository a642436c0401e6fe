import Foundation
import Testing
import TestSupport

/// The children tests start (servers, tmux, the console) get signals as a shell's children do.
@Suite("Test children")
struct ChildProcessTests {
    /// The threads of a test process block nearly every signal and a child inherits its spawning
    /// thread's mask: without a mask of its own, this `sleep` never saw the hang-up (a tmux server
    /// ignored kill-server that way, and a failed test's `savedesk demo` ran on for good).
    @Test func aChildStartedFromAnyThreadDiesOfAHangUp() async throws {
        let child = try await Task.detached { try ChildProcess.spawn("sleep", ["60"]) }.value
        child.signal(SIGHUP)
        let status = await child.wait(timeout: .seconds(30))
        if status == nil { child.signal(SIGKILL) }
        #expect(status == 128 + SIGHUP)
    }
}
