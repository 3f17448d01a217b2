/// The IDL of an armed lend session, shared by `io.roombridge.State` and `io.roombridge.Lending`
/// (Varlink interfaces cannot refer to each other's types, so each declares it; the text is one).
/// One Swift value, `LendingArm`, is this type in both.
enum LendingArmTypeIDL {
    private static let fields = "(userId: string, userName: string, reader: ?string, armedAt: string, expiresAt: string)"

    static let text = """
        # An armed lend session: device tags tapped until expiresAt are lent to this user; reader:
        # the reader whose badge tap armed it (absent when a client armed it).
        type LendingArm \(fields)
        """

    /// `io.roombridge.Lending`'s old name for the type, with the same fields: kept for one release
    /// so that clients generated from the old description still find it (see docs/varlink.md).
    static let formerSession = """
        # The former name of LendingArm (the same fields), kept until the next release; no method uses it.
        type Session \(fields)
        """
}
