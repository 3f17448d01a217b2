// Placeholder until the module lands.
enum PN532SimulatorPlaceholder {}
