import RoomBridgeCore

/// Tests write tag UIDs as literals (`"04A1B2C3"`); every one of them is hex, so a literal that is not is a mistake
/// in the test, found at once. Product code makes a ``TagUID`` only from text it checks (``TagUID/init(_:)``).
extension TagUID: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) {
        guard let uid = TagUID(text) else { preconditionFailure("test literal \"\(text)\" is not a tag UID") }
        self = uid
    }
}
