// Placeholder until the module lands.
enum CurtainProtocolPlaceholder {}
