import RoomBridgeDaemon

// The composition root lives in RoomBridgeDaemon; this file only hands over the process.
await Daemon.main()
