// Placeholder until the module lands.
enum BlueZClientPlaceholder {}
