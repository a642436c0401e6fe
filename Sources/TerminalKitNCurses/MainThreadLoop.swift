import CTerminalShim
import Dispatch
import Foundation

/// The console's main thread on Linux: it serves the main dispatch queue (where the main actor
/// runs), as Foundation's run loop does, and waits on the terminal itself, so a key wakes the
/// thread that handles it and draws the frame. Through a dispatch source a key woke libdispatch's
/// event thread, which then woke the main thread: two wakes of a sleeping core per key instead
/// of one (`make bench-tui`'s key → frame). Elsewhere, Foundation's run loop and a dispatch source.
public enum MainThreadLoop {
    /// Runs the main thread's loop for good (call it last in `main`).
    public static func run() -> Never {
        #if os(Linux)
        savedesk_main_loop()
        fatalError("the main loop returned")
        #else
        RunLoop.main.run()
        fatalError("the main run loop returned")
        #endif
    }

    static var isRunning: Bool {
        #if os(Linux)
        savedesk_main_loop_running() != 0
        #else
        false
        #endif
    }

    @MainActor static func watchInput() {
        #if os(Linux)
        savedesk_main_loop_watch(STDIN_FILENO) { MainActor.assumeIsolated { NCursesBackend.input?() } }
        #endif
    }

    @MainActor static func stopWatchingInput() {
        #if os(Linux)
        savedesk_main_loop_watch(-1, nil)
        #endif
    }
}
