import Subprocess

/// What a finished command printed, and how it ended.
public struct ToolResult: Sendable {
    /// The exit code, or 128 + the signal number.
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs a reference tool (`dbus-send`, `gdbus`, `busctl`, `bluetoothctl`, …) to completion.
/// `environment` nil inherits ours; otherwise it is the child's whole environment.
public func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> ToolResult {
    let env: Environment = environment.map { e in .custom(Dictionary(uniqueKeysWithValues: e.map { (Environment.Key(stringLiteral: $0.key), $0.value) })) }
        ?? .inherit
    let r = try await run(.path(.init(path)), arguments: Arguments(arguments), environment: env,
                          output: .string(limit: 1 << 20), error: .string(limit: 1 << 20))
    let status: Int32 = switch r.terminationStatus {
    case .exited(let code): code
    case .signaled(let signal): 128 + signal
    }
    return ToolResult(status: status, stdout: r.standardOutput, stderr: r.standardError)
}
