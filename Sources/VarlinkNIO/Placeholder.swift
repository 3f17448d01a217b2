// Placeholder until the module lands.
enum VarlinkNIOPlaceholder {}
