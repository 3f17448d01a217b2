// Placeholder until the module lands.
enum VarlinkPlaceholder {}
