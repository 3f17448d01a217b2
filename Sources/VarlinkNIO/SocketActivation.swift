#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension VarlinkServerConfiguration.Listen {
    /// The listening socket passed by systemd socket activation (the `sd_listen_fds`
    /// protocol: `LISTEN_PID` equal to our pid, `LISTEN_FDS` sockets from fd 3, optional
    /// `LISTEN_FDNAMES`), or `nil` if the process was not socket-activated.
    ///
    /// With several sockets, `name` selects the one whose `FileDescriptorName=` matches
    /// (python-varlink looks for "varlink"); without `name` the first is used. The
    /// environment variables are removed (as `sd_listen_fds(1)` does) so child processes do
    /// not inherit them, and the socket is marked close-on-exec.
    public static func systemdActivatedSocket(name: String? = nil) -> Self? {
        var environment: [String: String] = [:]
        for key in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
            if let v = getenv(key) { environment[key] = String(cString: v) }
        }
        let result = activatedSocket(environment: environment, pid: getpid(), firstDescriptor: 3, name: name)
        if environment["LISTEN_PID"] != nil {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        return result
    }

    static func activatedSocket(environment: [String: String], pid: Int32, firstDescriptor: Int32, name: String?) -> Self? {
        guard let listenPID = environment["LISTEN_PID"].flatMap({ Int32($0) }), listenPID == pid,
              let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count >= 1
        else { return nil }
        var index: Int32 = 0
        if let name {
            let names = environment["LISTEN_FDNAMES"]?.split(separator: ":", omittingEmptySubsequences: false).map(String.init) ?? []
            guard let i = names.firstIndex(of: name), i < Int(count) else { return nil }
            index = Int32(i)
        }
        let fd = firstDescriptor + index
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        return .inheritedSocket(fileDescriptor: fd)
    }
}
