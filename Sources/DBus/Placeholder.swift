// Placeholder until the module lands.
enum DBusPlaceholder {}
