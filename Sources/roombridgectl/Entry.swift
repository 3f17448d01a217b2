import RoomBridgeCLI

/// The commands live in RoomBridgeCLI (shared with the multi-call `roombridge`); this type only
/// hands over the process.
@main
enum Entry {
    static func main() async { await RoomBridgeCtl.main() }
}
