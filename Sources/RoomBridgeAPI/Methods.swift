import Varlink

/// Every method declared here, for the contract test.
public enum RoomBridgeAPI {
    public static var methods: [any VarlinkMethod.Type] { [
        InventoryAPI.ListGroups.self, InventoryAPI.AddDevice.self, InventoryAPI.UpdateDevice.self,
        InventoryAPI.DeleteDevice.self, InventoryAPI.GetDevice.self, InventoryAPI.ListDevices.self,
        InventoryAPI.DeviceLog.self, InventoryAPI.AddUser.self, InventoryAPI.GetUser.self, InventoryAPI.ListUsers.self,
        InventoryAPI.AddBadge.self, InventoryAPI.Import.self,
        LendingAPI.Arm.self, LendingAPI.Disarm.self, LendingAPI.GetSession.self, LendingAPI.Lend.self,
        LendingAPI.Return.self, LendingAPI.Renew.self, LendingAPI.ListActive.self, LendingAPI.ListOverdue.self,
        LendingAPI.History.self, LendingAPI.ExportHistory.self,
        StateAPI.GetState.self,
    ] }
}
