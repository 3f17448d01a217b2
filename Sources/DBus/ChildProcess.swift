import Dispatch
import Glibc


/// A spawned child process with its stdout/stderr captured through pipes.
///
/// Spawning resets the signal mask and the dispositions of common signals in the child (a
/// process spawned from a Swift task otherwise inherits the worker thread's blocked signals and
/// ignores SIGTERM). Blocking reads and `waitpid` run on Dispatch threads, never on the
/// cooperative pool.
final class ChildProcess: Sendable {
    let pid: pid_t
    private let stdoutFD: Int32
    private let stderrFD: Int32
    private let exitStatus = Locked<Int32?>(nil)

    /// Spawns `path` with `arguments` (argv[0] is `path`); `environment` nil inherits ours.
    /// `stdin` (if given) becomes the child's standard input, else /dev/null.
    init(_ path: String, _ arguments: [String], environment: [String: String]? = nil, stdin: Int32? = nil) throws(DBusError) {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        // Socket pairs instead of pipes: created close-on-exec atomically (pipe2 needs _GNU_SOURCE).
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &outPipe) == 0 else { throw DBusError.failed("socketpair failed: errno \(errno)") }
        guard socketpair(AF_UNIX, type, 0, &errPipe) == 0 else {
            close(outPipe[0]); close(outPipe[1])
            throw DBusError.failed("socketpair failed: errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attr, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envStrings: [UnsafeMutablePointer<CChar>?]? = nil
        if let environment {
            envStrings = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { envStrings?.forEach { free($0) } }

        var child: pid_t = 0
        let rc: Int32
        if var envStrings {
            rc = posix_spawn(&child, path, &actions, &attr, argv, &envStrings)
        } else {
            rc = posix_spawn(&child, path, &actions, &attr, argv, environ)
        }
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else {
            close(outPipe[0]); close(errPipe[0])
            throw DBusError.failed("cannot run \(path): \(String(cString: strerror(rc)))")
        }
        pid = child
        stdoutFD = outPipe[0]
        stderrFD = errPipe[0]
    }

    deinit {
        close(stdoutFD)
        close(stderrFD)
        if exitStatus.withLock({ $0 }) == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    /// Reads stdout up to and including the first newline (nil on EOF before a newline).
    func readLine() async -> String? {
        let fd = stdoutFD
        return await Self.onThread {
            var bytes: [UInt8] = []
            var b: UInt8 = 0
            while read(fd, &b, 1) == 1 {
                if b == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(b)
            }
            return nil
        }
    }

    /// Reads everything remaining on stdout and stderr, then waits for the exit status.
    func finish() async -> (status: Int32, stdout: String, stderr: String) {
        let (o, e) = (stdoutFD, stderrFD)
        async let out = Self.onThread { Self.readAll(o) }
        async let err = Self.onThread { Self.readAll(e) }
        let (stdout, stderr) = await (out, err)
        let status = await waitForExit()
        return (status, stdout, stderr)
    }

    /// Sends a signal (if still running).
    func signal(_ sig: Int32) {
        if exitStatus.withLock({ $0 }) == nil { kill(pid, sig) }
    }

    /// Waits for the child; returns its exit code (or 128 + signal number).
    func waitForExit() async -> Int32 {
        if let s = exitStatus.withLock({ $0 }) { return s }
        let pid = self.pid
        let code: Int32 = await Self.onThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            let sig = status & 0x7f
            return sig == 0 ? (status >> 8) & 0xff : 128 + sig
        }
        exitStatus.withLock { $0 = code }
        return code
    }

    static func readAll(_ fd: Int32) -> String {
        var data: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n > 0 { data += buf[0..<n] } else if n < 0, errno == EINTR { continue } else { break }
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs blocking work on a Dispatch thread.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { cont in
            DispatchQueue.global().async { cont.resume(returning: work()) }
        }
    }

    /// Runs a command to completion.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess(path, arguments, environment: environment).finish()
    }
}

/// A private `dbus-daemon` for tests and simulators: system-bus-like, but its policy allows
/// everything to everyone, listening on a socket in a fresh temporary directory.
///
/// The daemon runs under a small `/bin/sh` watchdog whose standard input is a pipe held open by
/// this process: when this process exits (even by SIGKILL or a crash), the pipe closes and the
/// watchdog stops the daemon, so no daemon is left behind.
public final class DBusTestDaemon: Sendable {
    /// The address to connect to (`unix:path=/tmp/…/bus,guid=…`).
    public let address: String
    /// The daemon's pid.
    public let pid: Int32
    /// The temporary directory holding the socket and the config file.
    public let directory: String
    private let watchdog: ChildProcess
    private let lifeline: Locked<Int32>

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
            throw DBusError.failed("mkdtemp failed: errno \(errno)")
        }
        let dir = String(cString: dirPtr)
        let config = """
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
        let configPath = dir + "/bus.conf"
        guard let f = fopen(configPath, "w") else {
            cleanUp(dir)
            throw DBusError.failed("cannot write \(configPath)")
        }
        fputs(config, f)
        fclose(f)
        var lifeline: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &lifeline) == 0 else {
            cleanUp(dir)
            throw DBusError.failed("socketpair failed: errno \(errno)")
        }
        let watchdog: ChildProcess
        do {
            watchdog = try ChildProcess("/bin/sh", ["-c", watchdogScript, "sh", executable, "--config-file=\(configPath)",
                                                    "--nofork", "--print-address=1", "--print-pid=1", "--nopidfile"],
                                        stdin: lifeline[0])
        } catch {
            close(lifeline[0]); close(lifeline[1])
            cleanUp(dir)
            throw error
        }
        close(lifeline[0])
        let address = await watchdog.readLine()
        let pidLine = await watchdog.readLine()
        guard let address, address.hasPrefix("unix:"), let pidLine, let pid = Int32(pidLine.trimmingSpaces) else {
            close(lifeline[1])
            let (_, _, err) = await watchdog.finish()
            cleanUp(dir)
            throw DBusError.failed("dbus-daemon did not start: \(err)")
        }
        return DBusTestDaemon(address: address, pid: pid, directory: dir, watchdog: watchdog, lifeline: lifeline[1])
    }

    private init(address: String, pid: Int32, directory: String, watchdog: ChildProcess, lifeline: Int32) {
        self.address = address
        self.pid = pid
        self.directory = directory
        self.watchdog = watchdog
        self.lifeline = Locked(lifeline)
    }

    deinit {
        if closeLifeline() { Glibc.kill(pid, SIGTERM) }
        Self.cleanUp(directory)
    }

    /// Closes the watchdog's pipe (it then stops the daemon); false if already closed.
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
        _ = await watchdog.waitForExit()
        Self.cleanUp(directory)
    }

    /// Kills the daemon abruptly (SIGKILL), as if the bus crashed; waits for it to exit.
    public func kill() async {
        if lifeline.withLock({ $0 >= 0 }) { Glibc.kill(pid, SIGKILL) }
        closeLifeline()
        _ = await watchdog.waitForExit()
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
