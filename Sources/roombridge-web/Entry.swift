import WebFront

/// The command line lives in WebFront (shared with the multi-call `roombridge`); this type only
/// hands over the process.
@main
enum Entry {
    static func main() async { await RoomBridgeWeb.main() }
}
