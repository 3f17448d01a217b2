import Subprocess
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Why a private `dbus-daemon` could not be started.
public struct DBusTestDaemonError: Error, CustomStringConvertible {
    public let description: String
}

/// A private `dbus-daemon` for tests and simulators: system-bus-like, but its policy allows
/// everything to everyone, listening on a socket in a fresh temporary directory.
///
/// The daemon runs under a small `/bin/sh` watchdog whose standard input is a socket held open by
/// this process: when this process exits (even by SIGKILL or a crash), the socket closes and the
/// watchdog stops the daemon, so no daemon is left behind.
///
/// The watchdog is spawned with swift-subprocess (1.0.2), which empties the child's signal mask and
/// resets every signal's disposition to the default, on both of its spawn paths in
/// Sources/_SubprocessCShims/process_shims.c: `_subprocess_spawnattr_reset_signals` with
/// `_subprocess_spawn_flags_reset_signals` (POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) for
/// posix_spawn, and `signal(signo, SIG_DFL)` plus `sigprocmask(SIG_SETMASK, empty)` in
/// `_subprocess_fork_exec`'s child. A child spawned from a Swift task would otherwise inherit the worker
/// thread's blocked signals, and dbus-daemon would ignore the watchdog's SIGTERM.
public final class DBusTestDaemon: Sendable {
    /// The address to connect to (`unix:path=/tmp/…/bus,guid=…`).
    public let address: String
    /// The daemon's pid.
    public let pid: Int32
    /// The temporary directory holding the socket and the config file.
    public let directory: String
    /// Runs while the watchdog runs; its value is the watchdog's standard error.
    private let watchdog: Task<String, Never>
    /// This process's end of the watchdog's standard input (-1 once closed).
    private let lifeline: Mutex<Int32>

    private static let watchdogScript = """
        "$@" </dev/null &
        daemon=$!
        read _ || true
        kill -TERM "$daemon" 2>/dev/null
        wait "$daemon"
        """

    /// Starts `dbus-daemon --nofork --print-address` with a generated config and waits for its
    /// address. Call `stop()` when done (dropping the object stops the daemon too).
    public static func start(executable: String = "/usr/bin/dbus-daemon") async throws -> DBusTestDaemon {
        let tmp = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((tmp + "/roombridge-dbus-XXXXXX").utf8CString)
        guard let dirPtr = mkdtemp(&template) else {
            throw DBusTestDaemonError(description: "mkdtemp in \(tmp) failed: errno \(errno)")
        }
        let dir = String(cString: dirPtr)
        let configPath = dir + "/bus.conf"
        guard let f = fopen(configPath, "w") else {
            cleanUp(dir)
            throw DBusTestDaemonError(description: "cannot write \(configPath)")
        }
        fputs(config(listeningIn: dir), f)
        fclose(f)
        var lifeline: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &lifeline) == 0 else {
            cleanUp(dir)
            throw DBusTestDaemonError(description: "socketpair failed: errno \(errno)")
        }
        let (lines, lineSink) = AsyncStream<String>.makeStream()
        let childEnd = lifeline[0]
        let arguments = ["-c", watchdogScript, "sh", executable, "--config-file=\(configPath)",
                         "--nofork", "--print-address=1", "--print-pid=1", "--nopidfile"]
        let watchdog = Task<String, Never> {
            defer { lineSink.finish() }
            do {
                let result = try await run(.path("/bin/sh"), arguments: Arguments(arguments),
                                           input: .fileDescriptor(FileDescriptor(rawValue: childEnd), closeAfterSpawningProcess: true),
                                           output: .sequence, error: .string(limit: 64 * 1024)) { execution in
                    for try await line in execution.standardOutput.strings() { lineSink.yield(line) }
                }
                return result.standardError
            } catch {
                return "cannot run /bin/sh: \(error)"
            }
        }
        var next = lines.makeAsyncIterator()
        let addressLine = await next.next()
        let pidLine = await next.next()
        guard let address = addressLine, address.hasPrefix("unix:"), let pidLine, let pid = Int32(pidLine.trimmingSpaces) else {
            close(lifeline[1])
            let stderr = await watchdog.value
            cleanUp(dir)
            throw DBusTestDaemonError(description: "dbus-daemon did not start: \(stderr)")
        }
        return DBusTestDaemon(address: address, pid: pid, directory: dir, watchdog: watchdog, lifeline: lifeline[1])
    }

    private static func config(listeningIn dir: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(dir)/bus</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
          </policy>
        </busconfig>

        """
    }

    private init(address: String, pid: Int32, directory: String, watchdog: Task<String, Never>, lifeline: Int32) {
        self.address = address
        self.pid = pid
        self.directory = directory
        self.watchdog = watchdog
        self.lifeline = Mutex(lifeline)
    }

    deinit {
        if closeLifeline() { Glibc.kill(pid, SIGTERM) }
        Self.cleanUp(directory)
    }

    /// Closes the watchdog's standard input (it then stops the daemon); false if already closed.
    @discardableResult
    private func closeLifeline() -> Bool {
        let fd = lifeline.withLock { fd in
            defer { fd = -1 }
            return fd
        }
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// Stops the daemon (SIGTERM) and waits for it to exit.
    public func stop() async {
        closeLifeline()
        _ = await watchdog.value
        Self.cleanUp(directory)
    }

    /// Kills the daemon abruptly (SIGKILL), as if the bus crashed; waits for it to exit.
    public func kill() async {
        if lifeline.withLock({ $0 >= 0 }) { Glibc.kill(pid, SIGKILL) }
        closeLifeline()
        _ = await watchdog.value
    }

    private static func cleanUp(_ dir: String) {
        unlink(dir + "/bus")
        unlink(dir + "/bus.conf")
        rmdir(dir)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
