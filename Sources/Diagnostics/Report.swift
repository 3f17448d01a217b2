extension Doctor {
    /// A readable report: one line per check, the fix indented under failures and warnings.
    public static func render(_ findings: [Finding]) -> String {
        var lines: [String] = []
        var area = ""
        for f in findings {
            if f.area != area {
                area = f.area
                lines.append(area.uppercased())
            }
            let mark: String
            switch f.status {
            case .ok: mark = "  ok    "
            case .warning: mark = "  WARN  "
            case .failed: mark = "  FAIL  "
            case .skipped: mark = "  skip  "
            }
            lines.append(mark + f.check + (f.detail.isEmpty ? "" : " — " + f.detail))
            if let fix = f.fix, f.status == .failed || f.status == .warning {
                lines.append("          fix: " + fix)
            }
        }
        let failed = findings.filter { $0.status == .failed }.count
        let warned = findings.filter { $0.status == .warning }.count
        lines.append("")
        lines.append(failed == 0 && warned == 0 ? "All checks passed."
                     : "\(failed) problem(s), \(warned) warning(s).")
        return lines.joined(separator: "\n")
    }
}
