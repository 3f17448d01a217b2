// Placeholder until the Varlink client lands.
@main struct RoomBridgeCtlPlaceholder { static func main() { print("not implemented yet") } }
