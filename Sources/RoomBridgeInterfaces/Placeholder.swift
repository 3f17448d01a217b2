// Placeholder until the module lands.
enum RoomBridgeInterfacesPlaceholder {}
