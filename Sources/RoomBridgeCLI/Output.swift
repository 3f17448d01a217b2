#if canImport(Glibc)
import Glibc
#endif

/// Output without buffering and without crashing on a closed pipe.
///
/// `roombridgectl watch | head -2` closes the pipe while roombridgectl still writes. SIGPIPE is
/// ignored (here, before the first write, so a closed pipe never kills the process with a
/// signal), so the write fails with EPIPE; like git, journalctl and gpspipe, roombridgectl then stops quietly with status 0: the
/// reader has everything it asked for.
enum Output {
    /// Writes `text` to stdout at once; exits 0 if the reader has gone (EPIPE).
    static func out(_ text: String) {
        if !write(text, to: STDOUT_FILENO) { exit(0) }
    }

    /// Writes `text` to stderr; a closed stderr is ignored (there is nobody left to tell).
    static func err(_ text: String) {
        _ = write(text, to: STDERR_FILENO)
    }

    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Writes all of `text`; false when the other end is closed (EPIPE) or the write fails.
    private static func write(_ text: String, to fd: Int32) -> Bool {
        _ = ignoreSIGPIPE
        var bytes = Array(text.utf8)
        var offset = 0
        return bytes.withUnsafeMutableBytes { buffer in
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0, errno == EINTR || errno == EAGAIN {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}

/// Writes one line to stdout at once (no buffering), so `watch` output reaches pipes as it happens.
func emit(_ line: String) {
    Output.out(line + "\n")
}
