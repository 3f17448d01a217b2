import Lending

/// The parameters of a list of one user's records (every user's without `userId`), a page at a
/// time: `Lending.ListActive`, `Inventory.ListBadges`.
public struct UserPageParameters: Codable, Sendable, Equatable {
    public var userId: UserID?
    public var limit: Int?
    public var cursor: String?
    public init(userId: UserID? = nil, limit: Int? = nil, cursor: String? = nil) {
        self.userId = userId
        self.limit = limit
        self.cursor = cursor
    }
}
