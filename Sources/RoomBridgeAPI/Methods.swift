import Varlink

/// Every method declared here, for the contract test.
public enum RoomBridgeAPI {
    public static var methods: [any VarlinkMethod.Type] { [
        InventoryAPI.ListGroups.self, InventoryAPI.AddDevice.self, InventoryAPI.UpdateDevice.self,
        InventoryAPI.DeleteDevice.self, InventoryAPI.GetDevice.self, InventoryAPI.ListDevices.self,
        InventoryAPI.DeviceLog.self, InventoryAPI.AddUser.self, InventoryAPI.GetUser.self, InventoryAPI.ListUsers.self,
        InventoryAPI.AddBadge.self, InventoryAPI.Import.self,
        InventoryAPI.AddGroup.self, InventoryAPI.UpdateGroup.self, InventoryAPI.DeleteGroup.self,
        InventoryAPI.UpdateUser.self, InventoryAPI.DeleteUser.self, InventoryAPI.DeleteBadge.self,
        InventoryAPI.ListBadges.self, InventoryAPI.GetBadge.self,
        InventoryAPI.BindTag.self, InventoryAPI.UnbindTag.self, InventoryAPI.ListTagBindings.self,
        LendingAPI.Arm.self, LendingAPI.Disarm.self, LendingAPI.GetSession.self, LendingAPI.Lend.self,
        LendingAPI.Return.self, LendingAPI.Renew.self, LendingAPI.ListActive.self, LendingAPI.ListOverdue.self,
        LendingAPI.History.self, LendingAPI.ExportHistory.self,
        LendingAPI.Book.self, LendingAPI.CancelBooking.self, LendingAPI.ListBookings.self,
        LendingAPI.StartStocktake.self, LendingAPI.CloseStocktake.self, LendingAPI.GetStocktake.self,
        LendingAPI.ListStocktakes.self, LendingAPI.ExportStocktake.self, LendingAPI.GetMonthlyReport.self, LendingAPI.GetDashboard.self,
        StateAPI.GetState.self, StateAPI.Watch.self, StateAPI.GetTimeline.self,
        TagsAPI.GetLastTap.self, TagsAPI.Write.self, TagsAPI.CancelWrite.self,
        OutboxAPI.Status.self, OutboxAPI.List.self, OutboxAPI.Retry.self, OutboxAPI.Drop.self,
        PresenceAPI.GetPresence.self,
        CurtainAPI.GetState.self, CurtainAPI.Open.self, CurtainAPI.Close.self, CurtainAPI.Stop.self,
        CurtainAPI.MoveTo.self, CurtainAPI.SetSchedule.self, CurtainAPI.Sync.self, CurtainAPI.Reconnect.self,
    ] }
}
