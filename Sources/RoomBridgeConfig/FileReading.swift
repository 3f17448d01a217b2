#if canImport(Glibc)
import Glibc
#endif

/// Reading a whole file through the file descriptor, so that any readable file works: a regular
/// file, `/dev/null` (`--config /dev/null`: the defaults, as `ssh -F /dev/null` does) or a pipe.
enum FileReading {
    /// The bytes up to end of file, at most `limit`; the errors name the file and what to do.
    static func readAll(_ fd: Int32, path: String, origin: String, what: String, limit: Int) throws(ConfigError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ConfigError("\(origin): cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { return bytes }
            bytes += buffer[..<n]
            guard bytes.count <= limit else { throw ConfigError("\(origin): \(path) is too large for \(what)") }
        }
    }

    /// The configuration file's text; nil when there is no such file.
    static func configuration(_ path: String) throws(ConfigError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT: return nil
            case EACCES:
                throw ConfigError("\(path): permission denied: this user (uid \(getuid())) cannot read the configuration file; "
                                  + "make it readable by the daemon's user: chmod 0640 \(path) and chgrp roombridge \(path)")
            default:
                throw ConfigError("\(path): cannot open the configuration file: \(String(cString: strerror(code)))")
            }
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw ConfigError("\(path) is a directory; --config takes the configuration file (roombridged.toml)")
        }
        let bytes = try readAll(fd, path: path, origin: path, what: "a configuration file (1 MB at most)", limit: 1 << 20)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError("\(path): the file is not UTF-8 text; save it as UTF-8")
        }
        return text
    }
}
